// Package redacttest holds planted secrets, one of each form gated must
// never show or store, for the canary tests of every place a value goes.
package redacttest

// A Canary is one planted secret: Text is a value that carries it, Secret
// the part that must not appear anywhere gated shows or stores the value,
// and Kind the kind a mask names.
type Canary struct {
	Kind   string
	Secret string
	Text   string
}

// Canaries are the forms of issue 25 §3, then the ones gated caught
// before. Every secret is distinct, so a test can look for each alone, and
// every text has a word of context on either side, which a mask keeps.
var Canaries = []Canary{
	{"github-pat", "ghp_R7cK2mQ9xZ4vB8nL1pW6sT3yH5jD0fG2aE9u", "clone with ghp_R7cK2mQ9xZ4vB8nL1pW6sT3yH5jD0fG2aE9u please"},
	{"url-password", "Pg7xQ2zK9mWv", "psql postgres://admin:Pg7xQ2zK9mWv@db.internal:5432/prod -c 'select 1'"},
	{"url-password", "Ht4nR8bL2cYq", "git clone https://deploy:Ht4nR8bL2cYq@git.example.com/team/repo.git work"},
	{"authorization-header", "tQ8vZ2mK9pL4xR7nW3bY6cJ1", "headers: Authorization: Bearer tQ8vZ2mK9pL4xR7nW3bY6cJ1 sent"},
	{"private-key", "MIIEowIBAAKCAQEA3Tz2mr7SZiAMfQyuvBjM2Ohs9PtQ1aCk5uYx8wRzV0vB7nL4pQ2s", "key: -----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA3Tz2mr7SZiAMfQyuvBjM2Ohs9PtQ1aCk5uYx8wRzV0vB7nL4pQ2s\nH3kR9tWx5yZ1qM7nP2vL8cJ4bT6rK0wF3hD9sG5xN1zY7aE2uQ4iO8j\n-----END RSA PRIVATE KEY----- end"},
	{"jwt", "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwiaWF0IjoxNTE2MjM5MDIyfQ.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c", "session eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwiaWF0IjoxNTE2MjM5MDIyfQ.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c expires"},
	{"slack-webhook-url", "https://hooks.slack.com/services/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", "post to https://hooks.slack.com/services/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 now"},
	{"aws-secret-access-key", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYzq8Xk2Lp9T", "export AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYzq8Xk2Lp9T && aws s3 ls"},
	{"aws-access-key-id", "AKIAIOSFODNN7EXAMPLE", "key id AKIAIOSFODNN7EXAMPLE in use"},
	{"sk-api-key", "sk-live9Xq2Lm7Rv4Tz8Wp", "use sk-live9Xq2Lm7Rv4Tz8Wp for billing"},
	{"slack-bot-token", "xoxb-2684123590-5179264018-Kq8ZmR4vT2xW7nB3cY6pL1jD", "bot xoxb-2684123590-5179264018-Kq8ZmR4vT2xW7nB3cY6pL1jD joined"},
	{"credential-assignment", "hunter2hunter2", "login password=hunter2hunter2 then continue"},
}
