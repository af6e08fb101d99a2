package redact

import (
	"slices"
	"testing"
)

// Keys are read as words: a credential's name is masked in every spelling,
// and a word that merely contains one is not.
func TestSensitiveKeyWords(t *testing.T) {
	t.Parallel()
	masked := []string{
		"password", "Password", "PASSWORD", "dbPassword", "db_password", "DB-PASSWORD", "password2",
		"passwd", "passphrase", "new_pass_word",
		"secret", "client_secret", "clientSecret", "AWS_SECRET_ACCESS_KEY", "AWSSecretAccessKey", "s3.secret",
		"token", "github_token", "githubToken", "GITHUB_TOKEN", "githubtoken", "access_token", "sessionToken",
		"refresh-token", "oauth2_token", "tokens", "csrfToken", "token_id",
		"api_key", "API-Key", "apiKey", "APIKey", "apikey", "x-api-key", "X-API-KEY", "openaiApiKey", "api_keys",
		"access_key", "accessKey", "private_key", "privateKey", "private_key_id", "signing_key", "secret_key",
		"credential", "Credentials", "creds", "cookie", "set-cookie", "Cookies",
		"session_id", "sessionId", "sessionid", "SESSIONID", "session_key", "session_token",
		"card_number", "cardNumber", "cardnumber", "cc_number", "credit_card", "cvv", "cvv2", "cvc", "ssn",
		"social_security_number", "iban",
		"Authorization", "auth", "auth_user", "authToken", "bearer", "jwt", "otp",
		// A key that is itself a secret or an address.
		"sk-abcdefghijklmnop", "bob@example.com",
	}
	shown := []string{
		// The newcomer's keys: a sensitive word inside another word.
		"discard_note", "scorecard", "discardNote", "ScoreCard",
		"tokenizer_model", "tokenizer", "detokenize", "author", "authority", "authors",
		"session_name", "session", "sessions", "card", "card_id", "keyboard", "key", "keys", "passage",
		"secretary", "cookbook", "passing_score", "pwd",
		// Words that describe a credential rather than hold one.
		"secret_name", "secretName", "token_count", "max_tokens", "maxTokens", "num_tokens", "total_tokens",
		"token_type", "auth_url", "authorization_endpoint", "auth_method", "password_file", "password_length",
		"api_key_name", "github_token_expires_at", "cookie_domain", "secret_arn",
		// Ordinary keys.
		"to", "subject", "body", "city", "limit", "query", "shipping_address", "command", "note", "",
		"_", "--", "x", "9", "naïve_key",
	}
	for _, k := range masked {
		if !SensitiveKey(k) {
			t.Errorf("SensitiveKey(%q) = false, want true", k)
		}
	}
	for _, k := range shown {
		if SensitiveKey(k) {
			t.Errorf("SensitiveKey(%q) = true, want false", k)
		}
	}
}

func TestSplitWords(t *testing.T) {
	t.Parallel()
	for k, want := range map[string][]string{
		"AWS_SECRET_ACCESS_KEY": {"AWS", "SECRET", "ACCESS", "KEY"},
		"dbPassword":            {"db", "Password"},
		"XAPIKey2":              {"XAPI", "Key", "2"},
		"x-api-key":             {"x", "api", "key"},
		"oauth2Token":           {"oauth", "2", "Token"},
		"s3.secret value":       {"s", "3", "secret", "value"},
		"HTTPServer":            {"HTTP", "Server"},
		"__a__":                 {"a"},
		"":                      nil,
		"naïveKey":              {"naïve", "Key"},
	} {
		var got []string
		for _, s := range splitWords(k, nil) {
			got = append(got, k[s[0]:s[1]])
		}
		if !slices.Equal(got, want) {
			t.Errorf("splitWords(%q) = %q, want %q", k, got, want)
		}
	}
}

// A key of many words is read by its first maxKeyWords.
func TestSplitWordsBounded(t *testing.T) {
	t.Parallel()
	k := ""
	for range 1000 {
		k += "a_"
	}
	if n := len(splitWords(k, nil)); n != maxKeyWords {
		t.Errorf("splitWords read %d words, want %d", n, maxKeyWords)
	}
}

// BenchmarkSensitiveKey reads the top-level keys an audit record lists.
func BenchmarkSensitiveKey(b *testing.B) {
	keys := []string{"to", "subject", "body", "customer_id", "amount", "currency", "reason", "ticketId", "discard_note", "api_key"}
	HasSecret("") // the rules compile once, outside the loop
	b.ReportAllocs()
	for b.Loop() {
		for _, k := range keys {
			_ = SensitiveKey(k)
		}
	}
}
