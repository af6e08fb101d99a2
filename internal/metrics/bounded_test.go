package metrics

import (
	"regexp"
	"strings"
	"testing"
)

// bounded is a byte loop for speed; the pattern it implements is the oracle.
func FuzzBoundedLabel(f *testing.F) {
	shape := regexp.MustCompile(`^[A-Za-z0-9@][A-Za-z0-9_.:/@+-]{0,127}$`)
	for _, s := range []string{"billing:refund", "@acme/tools/Refund", "_x", "-x", ".x", "a b", "", strings.Repeat("a", 128), strings.Repeat("a", 129), "é", "x\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want := Other
		if shape.MatchString(s) {
			want = s
		}
		if got := bounded(s); got != want {
			t.Errorf("bounded(%q) = %q, want %q", s, got, want)
		}
	})
}
