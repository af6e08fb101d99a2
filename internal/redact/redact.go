// Package redact holds the detectors that keep secrets and personal data out
// of gated's answers, logs and audit records. The contract's evidence checks
// and the audit record use the same detectors, so what one refuses the other
// never stores.
package redact

import (
	"regexp"
	"strings"
)

// The personal-data patterns, and the number pattern the secret rules
// share (see gatedRules).
var (
	// US social security numbers and 13–16 digit card numbers (spaces or
	// dashes allowed between digits).
	numberRE = regexp.MustCompile(`\b\d{3}-\d{2}-\d{4}\b|\b(?:\d[ -]?){12,15}\d\b`)
	// An e-mail address, or a phone number of 10 digits in the usual
	// groupings (optionally with a +country prefix). Dates do not match.
	emailRE = regexp.MustCompile(`[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}`)
	phoneRE = regexp.MustCompile(`(?:\+\d{1,3}[\s.-]?)?\(?\b\d{3}\)?[\s.-]?\d{3}[\s.-]?\d{4}\b`)
)

var assignmentWords = []string{"api_key", "secret", "token", "password"}

// HasPII reports whether s contains an e-mail address or a phone number.
func HasPII(s string) bool {
	if strings.IndexByte(s, '@') >= 0 && emailRE.MatchString(s) {
		return true
	}
	return digitGroup(s) >= 10 && phoneRE.MatchString(s)
}

// digitGroup bounds what any number pattern could match in s: the largest
// count of digits in one run of digits and the separators the patterns
// allow (space, dash, dot, parentheses, plus, whitespace), counted from a
// digit that can begin a match. Every number pattern begins its digits at a
// word boundary (\b), so a digit right after a letter or an underscore
// cannot: the digits of a hex hash ("sha256:ef0b58…") count for nothing,
// and the regexps are not run on every revision and fingerprint.
func digitGroup(s string) int {
	best, cur, started := 0, 0, false
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c >= '0' && c <= '9':
			if !started && (i == 0 || !isWordByte(s[i-1])) {
				started = true
			}
			if started {
				cur++
				best = max(best, cur)
			}
		case c == ' ' || c == '-' || c == '.' || c == '(' || c == ')' || c == '+' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v':
		default:
			cur, started = 0, false
		}
	}
	return best
}

// isWordByte is regexp's \w: what \b separates from everything else.
func isWordByte(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_'
}
