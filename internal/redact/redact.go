// Package redact holds the detectors that keep secrets and personal data out
// of gated's answers, logs and audit records. The contract's evidence checks
// and the audit record use the same detectors, so what one refuses the other
// never stores.
package redact

import (
	"regexp"
	"strings"
)

// Secret patterns of the reference gate: OpenAI-style keys, AWS access key
// ids, "api_key|secret|token|password" assignments, US social security
// numbers and 13–16 digit card numbers (spaces or dashes allowed).
var secretRE = regexp.MustCompile(
	`sk-[A-Za-z0-9_-]{12,}` +
		`|AKIA[0-9A-Z]{16}` +
		`|(?i:api_key|secret|token|password)\s*[:=]\s*\S{8,}` +
		`|\b\d{3}-\d{2}-\d{4}\b` +
		`|\b(?:\d[ -]?){12,15}\d\b`)

// PII patterns: an e-mail address, or a phone number of 10 or more digits in
// the usual groupings (optionally with a +country prefix). Dates such as
// 2026-11-20 do not match.
var piiRE = regexp.MustCompile(
	`[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}` +
		`|(?:\+\d{1,3}[\s.-]?)?\(?\b\d{3}\)?[\s.-]?\d{3}[\s.-]?\d{4}\b`)

// HasSecret reports whether s contains something that looks like a raw
// secret: a key, a credential assignment, an SSN or a card number.
func HasSecret(s string) bool {
	if !mayHoldSecret(s) {
		return false
	}
	return secretRE.MatchString(s)
}

// HasPII reports whether s contains an e-mail address or a phone number.
func HasPII(s string) bool {
	if strings.IndexByte(s, '@') < 0 && !hasDigitRun(s, 3) {
		return false
	}
	return piiRE.MatchString(s)
}

// mayHoldSecret is a cheap prefilter: every secret pattern needs a digit,
// "sk-", "AKIA" or one of the assignment keywords.
func mayHoldSecret(s string) bool {
	if strings.ContainsAny(s, "0123456789") || strings.Contains(s, "sk-") || strings.Contains(s, "AKIA") {
		return true
	}
	return strings.ContainsAny(s, ":=") && containsFold(s, "api_key", "secret", "token", "password")
}

func hasDigitRun(s string, n int) bool {
	run := 0
	for i := 0; i < len(s); i++ {
		if s[i] >= '0' && s[i] <= '9' {
			run++
			if run >= n {
				return true
			}
		} else {
			run = 0
		}
	}
	return false
}

func containsFold(s string, words ...string) bool {
	l := strings.ToLower(s)
	for _, w := range words {
		if strings.Contains(l, w) {
			return true
		}
	}
	return false
}
