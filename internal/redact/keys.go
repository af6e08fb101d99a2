package redact

// MaskedKey replaces an argument key that looks sensitive, in audit records
// and approval previews alike (the reference service uses the same marker).
const MaskedKey = "[redacted_sensitive_key]"

// An argument key is read as words: split at anything not an ASCII letter
// or digit, between a lower-case letter or digit and an upper-case letter,
// before the last capital of a run followed by a lower-case letter, and
// between letters and digits ("AWS_SECRET_ACCESS_KEY", "dbPassword",
// "XAPIKey2" are aws secret access key, db password, xapi key 2). Whole
// words are compared, never substrings: "discard_note", "scorecard" and
// "tokenizer_model" hold no sensitive word.
var (
	// credentialWords name a credential or a personal identifier by
	// themselves. A word that ends in one of them counts too
	// (credentialSuffixes), so run-together names such as "githubtoken" or
	// "dbpassword" are caught.
	credentialWords = setOf(
		"password", "passwords", "passwd", "passphrase", "passcode",
		"secret", "secrets", "token", "tokens", "apikey", "apikeys", "accesskey",
		"privatekey", "secretkey", "sessionid", "sessionkey", "sessiontoken",
		"credential", "credentials", "creds", "cookie", "cookies",
		"authorization", "auth", "bearer", "jwt", "otp",
		"cardnumber", "ccnumber", "creditcard", "cvv", "cvc", "iban", "ssn",
	)
	credentialSuffixes = []string{
		"password", "passwd", "passphrase", "secret", "token", "apikey",
		"accesskey", "privatekey", "secretkey", "sessionid", "sessiontoken",
		"credentials", "cookie",
	}
	// credentialPairs are two words that name one together ("api key",
	// "session id", "card number") where either alone does not.
	credentialPairs = map[[2]string]bool{
		{"api", "key"}: true, {"api", "keys"}: true, {"access", "key"}: true,
		{"private", "key"}: true, {"signing", "key"}: true, {"encryption", "key"}: true,
		{"session", "id"}: true, {"session", "key"}: true,
		{"card", "number"}: true, {"cc", "number"}: true, {"credit", "card"}: true,
		{"social", "security"}: true, {"pass", "word"}: true, {"pass", "phrase"}: true,
	}
	// aboutWords, as a key's last word after its credential words, say the
	// value is about a credential rather than the credential itself:
	// "secret_name", "token_count", "auth_url", "password_file".
	aboutWords = setOf(
		"name", "names", "type", "kind", "method", "mode", "scheme", "provider",
		"count", "limit", "length", "len", "size", "url", "uri", "endpoint",
		"domain", "path", "file", "dir", "ttl", "expiry", "expires", "expiration",
		"at", "arn",
	)
	// countWords, as a key's first word before its credential words, say the
	// value counts them: "max_tokens", "num_tokens".
	countWords = setOf("max", "min", "num", "total")
)

func setOf(words ...string) map[string]bool {
	m := make(map[string]bool, len(words))
	for _, w := range words {
		m[w] = true
	}
	return m
}

// SensitiveKey reports whether an argument key names a credential or a
// personal identifier, or itself holds a secret or personal data: its value
// (and, when KeyLeaks, the key too) must not be shown.
func SensitiveKey(k string) bool {
	return CredentialKey(k) || KeyLeaks(k)
}

// KeyLeaks reports whether the key itself holds a secret or personal data,
// so that it must not be shown either.
func KeyLeaks(k string) bool { return HasSecret(k) || HasPII(k) }

// maxKeyWords bounds the words a key is read as; a longer key is read by
// its first words (a credential's name is short and comes early enough).
const maxKeyWords = 32

// CredentialKey reports whether k's words name a credential (see
// credentialWords) that its first or last word does not say is only
// described (see aboutWords and countWords). It runs on every top-level
// argument key of every decision, so it allocates only for a key with a
// capital letter, once.
func CredentialKey(k string) bool {
	lower := k
	for i := 0; i < len(k); i++ {
		if isUpper(k[i]) {
			b := []byte(k)
			for j := i; j < len(b); j++ {
				b[j] = toLower[b[j]]
			}
			lower = string(b)
			break
		}
	}
	var spans [maxKeyWords][2]int
	words := splitWords(k, spans[:0])
	word := func(i int) string { return lower[words[i][0]:words[i][1]] }
	for i := range words {
		end := -1 // the last word of a credential name starting at i
		switch w := word(i); {
		case credentialWords[w] || hasCredentialSuffix(w):
			end = i
		case i+1 < len(words) && credentialPairs[[2]string{w, word(i + 1)}]:
			end = i + 1
		}
		if end < 0 {
			continue
		}
		last := len(words) - 1
		if end < last && aboutWords[word(last)] || i > 0 && countWords[word(0)] {
			continue
		}
		return true
	}
	return false
}

func hasCredentialSuffix(w string) bool {
	for _, s := range credentialSuffixes {
		if len(w) > len(s) && w[len(w)-len(s):] == s {
			return true
		}
	}
	return false
}

// splitWords appends to spans the byte ranges of k's words (see the rule
// above credentialWords), at most maxKeyWords of them. Bytes past ASCII
// belong to words, so a key in another script is one word, matching
// nothing.
func splitWords(k string, spans [][2]int) [][2]int {
	start := -1
	for i := 0; i <= len(k); i++ {
		cut, sep := false, i == len(k)
		if !sep {
			c := k[i]
			switch {
			case isLower(c) || c >= 0x80:
				cut = start >= 0 && isDigit(k[i-1])
			case isUpper(c):
				if start >= 0 {
					p := k[i-1]
					cut = isLower(p) || isDigit(p) || isUpper(p) && i+1 < len(k) && isLower(k[i+1])
				}
			case isDigit(c):
				cut = start >= 0 && !isDigit(k[i-1])
			default:
				sep = true
			}
		}
		if (cut || sep) && start >= 0 {
			if spans = append(spans, [2]int{start, i}); len(spans) == maxKeyWords {
				return spans
			}
			start = -1
		}
		if !sep && start < 0 {
			start = i
		}
	}
	return spans
}

func isLower(c byte) bool { return 'a' <= c && c <= 'z' }
func isUpper(c byte) bool { return 'A' <= c && c <= 'Z' }
func isDigit(c byte) bool { return '0' <= c && c <= '9' }
