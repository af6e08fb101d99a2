package keyset

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestRoundTripAndRefusals(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 11, 24, 5, 0, 0, 123456000, time.UTC)
	c, err := Decode(Encode(at, "id-1"), nil)
	if err != nil || !c.T.Equal(at) || c.ID != "id-1" {
		t.Fatalf("round trip = %+v, %v", c, err)
	}
	notX := func(id string) bool { return !strings.HasPrefix(id, "x") }
	for _, s := range []string{"", "!!", Encode(time.Time{}, "id"), Encode(at, ""), Encode(at, "x-1"), "eyJ0IjoxfQ"} {
		if _, err := Decode(s, notX); !errors.Is(err, ErrInvalid) {
			t.Errorf("Decode(%q) = %v, want ErrInvalid", s, err)
		}
	}
}
