package actionapi

import (
	"testing"

	"github.com/gatedhq/gated/internal/route"
)

func TestStatus(t *testing.T) {
	t.Parallel()
	for r, want := range map[route.Route]string{route.Accept: "approved", route.Ask: "queued", route.Defer: "queued", route.Refuse: "rejected"} {
		if got := Status(r); got != want {
			t.Errorf("Status(%s) = %s, want %s", r, got, want)
		}
	}
}

func TestClean(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		in, want string
		ok       bool
	}{
		{"src/a.js", "src/a.js", true},
		{"./src//a.js", "src/a.js", true},
		{"src/x/../a.js", "src/a.js", true},
		{".", ".", true},
		{"a/../..", "", false},
		{"../a", "", false},
		{"..", "", false},
		{"/etc/passwd", "", false},
		{"", "", false},
		{`src\a.js`, "", false},
		{"src/a\x00.js", "", false},
		{"..a/b", "..a/b", true}, // a name starting with dots is not a climb
	} {
		got, ok := clean(tt.in)
		if got != tt.want || ok != tt.ok {
			t.Errorf("clean(%q) = %q, %v, want %q, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
	if !within("lib/a", "lib") || !within("lib", "lib") || within("library/a", "lib") || !within("x", ".") {
		t.Error("within does not match directories by whole segments")
	}
}

func TestTier(t *testing.T) {
	t.Parallel()
	s := func(v string) *string { return &v }
	for _, tt := range []struct {
		tier *string
		want int
	}{{s("R0"), 0}, {s("R2"), 2}, {s("R3"), 3}, {s("R4"), 4}, {nil, 4}, {s("R5"), 4}, {s("r1"), 4}, {s(""), 4}, {s("R1 "), 4}} {
		if got := (&Plan{RiskTier: tt.tier}).tier(); got != tt.want {
			t.Errorf("tier(%v) = %d, want %d", tt.tier, got, tt.want)
		}
	}
}
