package server

import (
	"context"
	"net/netip"
	"testing"
	"time"

	"github.com/gatedhq/gated/internal/limit"
)

// blocked looks without taking, on the limiter's own clock.
func TestLimiterBlocked(t *testing.T) {
	t.Parallel()
	l := newLimiter(2, limit.Local, "requests") // one request every 30 s, a burst of 2
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	if b, _ := blocked(l, now); b || l.keys.(*limit.Keyed).Len() != 0 {
		t.Fatalf("an unknown key is blocked (%v) or got a bucket (%d)", b, l.keys.(*limit.Keyed).Len())
	}
	for i := range 2 {
		if ok, _ := allow(l, now); !ok {
			t.Fatalf("request %d refused", i)
		}
	}
	b, wait := blocked(l, now)
	if !b || wait != 30*time.Second {
		t.Fatalf("after the burst: blocked %v, wait %v; want true, 30s", b, wait)
	}
	later := now.Add(wait)
	for range 3 {
		if b, _ := blocked(l, later); b {
			t.Fatal("blocked once a request is due again, or blocked took it")
		}
	}
	if ok, _ := allow(l, later); !ok {
		t.Fatal("the due request was refused")
	}
	if b, _ := blocked(l, later); !b {
		t.Error("not blocked after taking the due request")
	}
}

func TestFailureKey(t *testing.T) {
	t.Parallel()
	key := func(s string) string { return failureKey(netip.MustParseAddr(s)) }
	if got := key("192.0.2.1"); got != "192.0.2.1" {
		t.Errorf("IPv4 key %q", got)
	}
	if key("192.0.2.1") == key("192.0.2.2") {
		t.Error("two IPv4 addresses share a key")
	}
	if key("2001:db8:1:2::1") != key("2001:db8:1:2:ffff::9") {
		t.Error("one /64 has two keys")
	}
	if key("2001:db8:1:2::1") == key("2001:db8:1:3::1") {
		t.Error("two /64s share a key")
	}
}

// allow and blocked drop the error a local limiter never returns.
func allow(l *limiter, now time.Time) (bool, time.Duration) {
	ok, wait, _ := l.allow(context.Background(), "k", 1, now)
	return ok, wait
}

func blocked(l *limiter, now time.Time) (bool, time.Duration) {
	b, wait, _ := l.blocked(context.Background(), "k", now)
	return b, wait
}
