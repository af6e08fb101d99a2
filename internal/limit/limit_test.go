package limit

import (
	"context"
	"testing"
	"time"

	"golang.org/x/time/rate"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// two a minute, a burst of two, forgotten after a minute idle
var perMinute2 = Rate{Limit: rate.Limit(2.0 / 60), Burst: 2, Idle: time.Minute}

func TestSpendAndRefill(t *testing.T) {
	t.Parallel()
	k := New(Config{SweepEvery: time.Minute})
	for i := range 2 {
		if ok, _, _ := allow(k, t0, perMinute2, "a"); !ok {
			t.Fatalf("call %d of the burst refused", i)
		}
	}
	ok, wait, full := allow(k, t0, perMinute2, "a")
	if ok || full || wait != 30*time.Second {
		t.Fatalf("past the burst: ok %v, full %v, wait %v; want false, false, 30s", ok, full, wait)
	}
	if ok, _, _ := allow(k, t0, perMinute2, "b"); !ok {
		t.Fatal("another key shares a's bucket")
	}
	if ok, wait, _ := allow(k, t0.Add(20*time.Second), perMinute2, "a"); ok || wait != 10*time.Second {
		t.Fatalf("20 s on: ok %v, wait %v; want false, 10s (a refusal spends nothing)", ok, wait)
	}
	if ok, _, _ := allow(k, t0.Add(30*time.Second), perMinute2, "a"); !ok {
		t.Fatal("the refilled call was refused")
	}
}

// Allow with several keys spends from all of them or from none.
func TestAllOrNone(t *testing.T) {
	t.Parallel()
	k := New(Config{SweepEvery: time.Minute})
	one := Rate{Limit: rate.Limit(1.0 / 60), Burst: 1, Idle: time.Minute}
	if ok, _, _ := allow(k, t0, one, "x"); !ok {
		t.Fatal("x refused")
	}
	if ok, wait, _ := allow(k, t0, one, "y", "x"); ok || wait != time.Minute {
		t.Fatalf("y+x: ok %v, wait %v; want false, 1m", ok, wait)
	}
	if ok, _, _ := allow(k, t0, one, "y"); !ok {
		t.Fatal("y was spent by a refused call")
	}
}

// Blocked looks without spending and creates no bucket.
func TestBlocked(t *testing.T) {
	t.Parallel()
	k := New(Config{SweepEvery: time.Minute})
	if b, _ := blocked(k, t0, "a"); b || k.Len() != 0 {
		t.Fatalf("an unknown key is blocked (%v) or got a bucket (%d)", b, k.Len())
	}
	allow(k, t0, perMinute2, "a")
	for range 3 {
		if b, _ := blocked(k, t0, "a"); b {
			t.Fatal("blocked with a token left, or Blocked spent it")
		}
	}
	allow(k, t0, perMinute2, "a")
	if b, wait := blocked(k, t0, "a"); !b || wait != 30*time.Second {
		t.Fatalf("empty: blocked %v, wait %v; want true, 30s", b, wait)
	}
	if b, _ := blocked(k, t0.Add(30*time.Second), "a"); b {
		t.Fatal("blocked once refilled")
	}
}

// Past MaxKeys a new key is refused as full until idle buckets expire;
// keys already held go on.
func TestCap(t *testing.T) {
	t.Parallel()
	k := New(Config{SweepEvery: time.Minute, MaxKeys: 2})
	allow(k, t0, perMinute2, "a")
	allow(k, t0, perMinute2, "b")
	if ok, wait, full := allow(k, t0, perMinute2, "c"); ok || !full || wait != 0 {
		t.Fatalf("third key: ok %v, full %v, wait %v; want false, true, 0", ok, full, wait)
	}
	if ok, _, full := allow(k, t0, perMinute2, "a", "c"); ok || !full {
		t.Fatal("a call needing a new key got through a full limiter")
	}
	if ok, _, _ := allow(k, t0.Add(2*time.Second), perMinute2, "a"); !ok {
		t.Fatal("a held key was refused")
	}
	if k.Len() != 2 || k.Has("c") {
		t.Fatalf("%d buckets, c held %v", k.Len(), k.Has("c"))
	}
	// b idles out; a full limiter sweeps at once rather than waiting for
	// SweepEvery.
	if ok, _, _ := allow(k, t0.Add(61*time.Second), perMinute2, "c"); !ok {
		t.Fatal("c refused once b had expired")
	}
	if k.Has("b") || !k.Has("a") {
		t.Fatalf("after expiry: b held %v, a held %v; want false, true", k.Has("b"), k.Has("a"))
	}
}

// Buckets idle for their Idle period are dropped at the next sweep; others
// keep their state.
func TestIdleExpiry(t *testing.T) {
	t.Parallel()
	k := New(Config{SweepEvery: time.Minute})
	hour := Rate{Limit: rate.Limit(1.0 / 3600), Burst: 1, Idle: time.Hour}
	allow(k, t0, perMinute2, "short")
	allow(k, t0, hour, "long")
	allow(k, t0.Add(30*time.Second), perMinute2, "other") // before SweepEvery: no sweep
	if !k.Has("short") {
		t.Fatal("swept before SweepEvery")
	}
	allow(k, t0.Add(2*time.Minute), perMinute2, "other")
	if k.Has("short") {
		t.Fatal("idle bucket survived the sweep")
	}
	if !k.Has("long") {
		t.Fatal("a bucket within its Idle period was swept")
	}
	if ok, _, _ := allow(k, t0.Add(2*time.Minute), hour, "long"); ok {
		t.Fatal("the kept bucket lost its state")
	}
	// Blocked is no use: it does not keep a bucket alive.
	blocked(k, t0.Add(3*time.Minute), "other")
	allow(k, t0.Add(4*time.Minute), perMinute2, "x")
	if k.Has("other") {
		t.Fatal("Blocked kept a bucket alive")
	}
}

// allow and blocked put Keyed's Limiter answers in the shape these tests
// assert on.
func allow(k *Keyed, now time.Time, r Rate, keys ...string) (ok bool, wait time.Duration, full bool) {
	res, _ := k.Allow(context.Background(), now, r, keys...)
	return res.OK, res.Wait, res.Full
}

func blocked(k *Keyed, now time.Time, key string) (bool, time.Duration) {
	res, _ := k.Peek(context.Background(), now, Rate{}, key)
	return !res.OK, res.Wait
}

// AllowN spends n tokens or none, waits for n, never allows more than a
// full bucket, and spends nothing for n below one.
func TestAllowN(t *testing.T) {
	t.Parallel()
	k := New(Config{SweepEvery: time.Minute})
	perMinute6 := Rate{Limit: rate.Limit(6.0 / 60), Burst: 6, Idle: time.Minute}
	ctx := context.Background()
	if res, _ := k.AllowN(ctx, t0, perMinute6, 4, "a"); !res.OK {
		t.Fatal("4 of 6 refused")
	}
	if res, _ := k.AllowN(ctx, t0, perMinute6, 3, "a"); res.OK || res.Wait != 10*time.Second {
		t.Fatalf("3 more of the 2 left: %+v; want refused, 10s", res)
	}
	if res, _ := k.AllowN(ctx, t0, perMinute6, 2, "a"); !res.OK {
		t.Fatal("the 2 left were spent by a refused call")
	}
	if res, _ := k.AllowN(ctx, t0, perMinute6, 0, "a"); !res.OK {
		t.Fatal("spending nothing was refused")
	}
	if res, _ := k.AllowN(ctx, t0, perMinute6, 7, "b"); res.OK || res.Wait != 0 {
		t.Fatalf("7 from a bucket of 6: %+v; want refused, no wait", res)
	}
}
