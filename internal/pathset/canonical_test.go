package pathset

import (
	"slices"
	"testing"
)

func TestCanonical(t *testing.T) {
	t.Parallel()
	cases := []struct {
		in   string
		want []string
	}{
		{".env", []string{".env"}},
		{"./.env", []string{".env"}},
		{"foo/../.env", []string{".env"}},
		{"src//a.go", []string{"src/a.go"}},
		{"../.env", []string{"../.env"}},
		{".env ", []string{".env ", ".env"}},
		{".env.", []string{".env.", ".env"}},
		{".env. . ", []string{".env. . ", ".env"}},
		{`.\.env`, []string{`.\.env`, ".env"}},
		{".env::$DATA", []string{".env::$DATA", ".env", ".env::$data"}},
		{".env:secret", []string{".env:secret", ".env"}},
		{".env:s:$DATA", []string{".env:s:$DATA", ".env", ".env:s:$data"}},
		{".ENV", []string{".ENV", ".env"}},
		{`C:\Users\u\.env`, []string{`C:\Users\u\.env`, "C:/Users/u/.env", "~/.env", `c:\users\u\.env`, "c:/users/u/.env"}},
		{`C:/Users/u/.ssh/id_rsa`, []string{"C:/Users/u/.ssh/id_rsa", "~/.ssh/id_rsa", "c:/users/u/.ssh/id_rsa"}},
		{`\\?\C:\Users\u\.aws\credentials`, []string{`\\?\C:\Users\u\.aws\credentials`, "C:/Users/u/.aws/credentials", "~/.aws/credentials",
			`\\?\c:\users\u\.aws\credentials`, "c:/users/u/.aws/credentials"}},
		{`\\server\share\.env`, []string{`\\server\share\.env`, "/server/share/.env"}},
		{`C:.env`, []string{"C:.env", ".env", "c:.env"}},
		{"~/.ssh/id_rsa", []string{"~/.ssh/id_rsa"}},
		{"~", []string{"~"}},
		{"~/", []string{"~"}},
		{"~/../u/.npmrc", []string{"/home/u/.npmrc", "~/.npmrc"}},
		{"~root/.ssh/id_rsa", []string{"/home/root/.ssh/id_rsa", "~/.ssh/id_rsa"}},
		{"$HOME/.aws/credentials", []string{"~/.aws/credentials"}},
		{"${HOME}/.kube/config", []string{"~/.kube/config"}},
		{"$HOMEDIR/x", []string{"$HOMEDIR/x", "$homedir/x"}},
		{"$XDG_CONFIG_HOME/gh/hosts.yml", []string{"~/.config/gh/hosts.yml"}},
		{`%USERPROFILE%\.ssh\id_ed25519`, []string{`%USERPROFILE%\.ssh\id_ed25519`, "~/.ssh/id_ed25519", `%userprofile%\.ssh\id_ed25519`}},
		{`$env:USERPROFILE\.azure\msal_token_cache.json`, []string{`$env:USERPROFILE\.azure\msal_token_cache.json`, "~/.azure/msal_token_cache.json",
			`$env:userprofile\.azure\msal_token_cache.json`}},
		{"/home/u/.ssh/id_rsa", []string{"/home/u/.ssh/id_rsa", "~/.ssh/id_rsa"}},
		{"/Users/U/.SSH/ID_RSA", []string{"/Users/U/.SSH/ID_RSA", "~/.SSH/ID_RSA", "/users/u/.ssh/id_rsa", "~/.ssh/id_rsa"}},
		{"/root/.netrc", []string{"/root/.netrc", "~/.netrc"}},
		{"/var/root/.netrc", []string{"/var/root/.netrc", "~/.netrc"}},
		{"/rooted/x", []string{"/rooted/x"}},
		{"/proc/self/root/etc/shadow", []string{"/proc/self/root/etc/shadow", "/etc/shadow"}},
		{"/proc/1/root/proc/self/root/dev/sda", []string{"/proc/1/root/proc/self/root/dev/sda", "/dev/sda"}},
		{"/proc/self/rooted", []string{"/proc/self/rooted"}},
		{"/home/u", []string{"/home/u", "~"}},
		{"/home/", []string{"/home"}},
		{"/proc/self/environ", []string{"/proc/self/environ"}},
		{"/proc/self/../1/environ", []string{"/proc/1/environ"}},
		{"", []string{"."}},
	}
	for _, tc := range cases {
		t.Run(tc.in, func(t *testing.T) {
			t.Parallel()
			if got := Canonical(tc.in); !slices.Equal(got, tc.want) {
				t.Errorf("Canonical(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

// Canonicalising is idempotent: each form of a path is its own first form.
// No input panics.
func FuzzCanonical(f *testing.F) {
	for _, s := range []string{".env ", `.\.env`, `C:\Users\u\.env`, ".env::$DATA", "~/../u/.npmrc", "$HOME/x", "~u",
		`\\?\C:\x`, "/proc/self/environ", "a/./b/../../..", "C:", ". . .", "~/", "%USERPROFILE%"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, p string) {
		forms := Canonical(p)
		if len(forms) == 0 {
			t.Fatalf("Canonical(%q) has no forms", p)
		}
		for _, form := range forms {
			if again := Canonical(form); again[0] != form {
				t.Errorf("Canonical(%q) has %q, whose own forms are %q", p, form, again)
			}
		}
		_ = Secrets().Match(p)
		_ = Secrets().Allows(p)
		_ = Outside(p, "/work")
	})
}
