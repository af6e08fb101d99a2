package contract

import (
	"testing"
	"unicode"
	"unicode/utf8"
)

// printable's ASCII path must refuse exactly what the rune-by-rune rule
// refuses: every code point, alone and after ASCII, and invalid bytes.
func TestPrintableMatchesTheRuneRule(t *testing.T) {
	rule := func(s string) bool {
		for _, r := range s {
			if r == utf8.RuneError || unicode.In(r, unicode.Cc, unicode.Cf, unicode.Zl, unicode.Zp) {
				return false
			}
		}
		return true
	}
	check := func(s string) {
		t.Helper()
		if got, want := printable(s), rule(s); got != want {
			t.Fatalf("printable(%q) = %v, the rule says %v", s, got, want)
		}
	}
	for r := rune(0); r <= unicode.MaxRune; r++ {
		check(string(r))
		check("tool_" + string(r) + "x")
	}
	for b := range 256 {
		check("ab" + string([]byte{byte(b)}))
		check("ab" + string([]byte{0xe2, 0x80, byte(b)}) + "c")
	}
	check("")
	if printable("a\x00b") || printable("a\u200bb") || !printable("bot://support-agent") || !printable("café") {
		t.Fatal("printable misjudges a known identifier")
	}
}
