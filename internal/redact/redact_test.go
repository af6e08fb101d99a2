package redact

import "testing"

func TestHasSecret(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want bool
	}{
		// sk- keys: 12 or more of [A-Za-z0-9_-].
		{"key sk-abcdefGHIJ12 here", true},
		{"sk-abc_def-ghi_", true},
		{"sk-abcdefghijk", false}, // 11
		{"sk-", false},
		{"task-force meeting", false},
		// AWS access key ids: AKIA + 16 of [0-9A-Z].
		{"AKIAIOSFODNN7EXAMPLE", true},
		{"AKIAIOSFODNN7EXAMPL", false}, // 15
		{"AKIAiosfodnn7example", false},
		// Credential assignments: keyword, ':' or '=', 8+ characters.
		{"api_key=abcdefgh", true},
		{"API_KEY: abcdefgh", true},
		{"secret=hunter22!", true},
		{"token:abcd1234", true},
		{"password = correcthorse", true},
		{"password=short", false},
		{"token rotation policy", false},
		{"password reset requested", false},
		// US social security numbers.
		{"ssn 123-45-6789", true},
		{"123-45-678", false},
		{"1234-56-7890", false},
		// 13–16 digit card numbers, spaces or dashes allowed.
		{"4111111111111111", true},
		{"4111 1111 1111 1111", true},
		{"4111-1111-1111-1111", true},
		{"1234567890123", true},      // 13
		{"123456789012", false},      // 12
		{"12345678901234567", false}, // 17: not a card
		// Dates, versions and ordinary text are not secrets.
		{"2026-11-20", false},
		{"2026-11-20T12:00:00Z", false},
		{"order 12345", false},
		{"v1.22.0", false},
		{"", false},
		{"plain words only", false},
	}
	for _, tt := range tests {
		if got := HasSecret(tt.in); got != tt.want {
			t.Errorf("HasSecret(%q) = %v, want %v", tt.in, got, tt.want)
		}
	}
}

func TestHasPII(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want bool
	}{
		{"customer@example.com", true},
		{"mail a.b+tag@sub.example.co.uk now", true},
		{"user@localhost", false},
		{"@handle", false},
		{"a@b.c", false},
		{"555-123-4567", true},
		{"(555) 123-4567", true},
		{"555.123.4567", true},
		{"5551234567", true},
		{"+1 555 123 4567", true},
		{"+44-555-123-4567", true},
		// Dates, times, short numbers and ids are not phone numbers.
		{"2026-11-20", false},
		{"2026-11-20T12:00:00Z", false},
		{"20261120", false},
		{"order 12345", false},
		{"555-1234", false},
		{"acct_redacted", false},
		{"", false},
	}
	for _, tt := range tests {
		if got := HasPII(tt.in); got != tt.want {
			t.Errorf("HasPII(%q) = %v, want %v", tt.in, got, tt.want)
		}
	}
}
