package approval

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"testing"
	"time"
)

var secret = []byte("whsec-test")

// The header is Stripe's scheme, checked here against HMAC computed
// independently of Sign.
func TestSignFormat(t *testing.T) {
	body := []byte(`{"id":"e1"}`)
	h := hmac.New(sha256.New, secret)
	h.Write([]byte(`1767268800.{"id":"e1"}`))
	want := "t=1767268800,v1=" + hex.EncodeToString(h.Sum(nil))
	if got := Sign(secret, t0, body); got != want {
		t.Fatalf("Sign = %s, want %s", got, want)
	}
}

func TestVerify(t *testing.T) {
	body := []byte(`{"id":"e1"}`)
	header := Sign(secret, t0, body)
	old := Sign([]byte("whsec-old"), t0, body)
	for _, c := range []struct {
		name   string
		secret []byte
		header string
		body   string
		now    time.Time
		ok     bool
	}{
		{name: "valid", header: header, ok: true},
		{name: "valid, receiver clock 5m ahead", header: header, now: t0.Add(DefaultTolerance), ok: true},
		{name: "valid, receiver clock 5m behind", header: header, now: t0.Add(-DefaultTolerance), ok: true},
		{name: "rotating secret: old and new", header: header + "," + strings.TrimPrefix(old, "t=1767268800,"), ok: true},
		{name: "unknown schemes ignored", header: "v0=abc," + header, ok: true},
		{name: "too old", header: header, now: t0.Add(DefaultTolerance + time.Second)},
		{name: "from the future", header: header, now: t0.Add(-DefaultTolerance - time.Second)},
		{name: "body changed", header: header, body: `{"id":"e2"}`},
		{name: "wrong secret", header: header, secret: []byte("whsec-other")},
		{name: "timestamp changed", header: strings.Replace(header, "t=1767268800", "t=1767268801", 1)},
		{name: "no signature", header: "t=1767268800"},
		{name: "no timestamp", header: strings.TrimPrefix(header, "t=1767268800,")},
		{name: "two timestamps", header: "t=1767268800," + header},
		{name: "signature not hex", header: "t=1767268800,v1=zz"},
		{name: "malformed", header: "garbage"},
		{name: "empty", header: ""},
	} {
		s, b, now := secret, body, t0
		if c.secret != nil {
			s = c.secret
		}
		if c.body != "" {
			b = []byte(c.body)
		}
		if !c.now.IsZero() {
			now = c.now
		}
		if err := Verify(s, c.header, b, now, 0); (err == nil) != c.ok {
			t.Errorf("%s: Verify = %v, want ok %v", c.name, err, c.ok)
		}
	}
}

func TestVerifyTolerance(t *testing.T) {
	body := []byte("{}")
	header := Sign(secret, t0, body)
	if err := Verify(secret, header, body, t0.Add(time.Minute), 30*time.Second); err == nil {
		t.Fatal("a minute-old signature passed a 30s tolerance")
	}
	if err := Verify(secret, header, body, t0.Add(time.Minute), 2*time.Minute); err != nil {
		t.Fatalf("a minute-old signature failed a 2m tolerance: %v", err)
	}
}
