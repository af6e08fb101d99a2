package approval

import (
	"testing"
	"time"
)

var t0 = time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)

func TestParseStatus(t *testing.T) {
	for _, s := range []Status{StatusPending, StatusApproved, StatusDenied, StatusExpired, StatusUsed} {
		if got, err := ParseStatus(string(s)); err != nil || got != s {
			t.Errorf("ParseStatus(%q) = %q, %v", s, got, err)
		}
	}
	for _, s := range []string{"", "Approved", "revoked", "pending "} {
		if got, err := ParseStatus(s); err == nil {
			t.Errorf("ParseStatus(%q) = %q, want an error", s, got)
		}
	}
}

func TestExpiresAt(t *testing.T) {
	if got := ExpiresAt(t0, 0); !got.Equal(t0.Add(15 * time.Minute)) {
		t.Errorf("no ttl: %v, want the 15 minute default", got)
	}
	if got := ExpiresAt(t0, -time.Second); !got.Equal(t0.Add(DefaultTTL)) {
		t.Errorf("negative ttl: %v, want the default", got)
	}
	if got := ExpiresAt(t0, time.Hour); !got.Equal(t0.Add(time.Hour)) {
		t.Errorf("1h ttl: %v", got)
	}
}
