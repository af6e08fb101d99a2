package pathset

import "testing"

// Every spelling of a secret file in issue 25 §2, and the credential stores
// it lists, is in the built-in set; templates and near misses are not.
func TestSecrets(t *testing.T) {
	t.Parallel()
	secret := []string{
		// .env in every spelling
		".env", ".env ", ".env.", ".env. ", `.\.env`, "./.env", "foo/../.env", "src/../../.env", ".ENV", ".Env",
		".env::$DATA", ".env:$DATA", ".env:hidden", `C:\Users\u\.env`, `C:\Users\u\project\.env.local`, `c:/work/.env`,
		`\\?\C:\work\.env`, `\\server\share\app\.env`, "/home/u/project/services/api/.env.production", ".envrc",
		".env.local", ".env.production", "config/.env.development.local", ".env.example::$DATA", ".env.example ",
		"~/.env", "$HOME/.env",
		// home-directory credential stores, however home is spelled
		"~/.ssh/id_rsa", "~/.ssh", "~/.ssh/config", "/home/u/.ssh/authorized_keys", "/Users/u/.ssh/known_hosts",
		`C:\Users\u\.ssh\id_rsa`, `%USERPROFILE%\.ssh\config`, "~root/.ssh/id_rsa", "/root/.ssh/id_ed25519",
		"$HOME/.aws/credentials", "~/.aws/config", "~/.aws/sso/cache/x.json", "/home/u/.aws", "project/.aws/credentials",
		"${HOME}/.kube/config", "/home/u/.kube/config", "~/.config/gcloud/application_default_credentials.json",
		"$XDG_CONFIG_HOME/gcloud/credentials.db", "~/.azure/accessTokens.json", `$env:USERPROFILE\.azure\msal_token_cache.json`,
		"~/.docker/config.json", "/Users/u/.docker/config.json", "~/.git-credentials", "/srv/app/.git-credentials",
		"~/.config/git/credentials", "~/.netrc", "/home/u/.netrc", `C:\Users\u\_netrc`, "~/.npmrc", "/home/u/.npmrc",
		"~/../u/.npmrc", "~/.pypirc", "~/.config/gh/hosts.yml", "$XDG_CONFIG_HOME/gh/hosts.yml", "/Users/U/.CONFIG/GH/HOSTS.YML",
		"~/.Kube/Config", "/proc/self/root/home/u/.npmrc", "/proc/1/root/root/.kube/config", `%APPDATA%\gcloud\credentials.db`,
		`C:\Users\u\AppData\Roaming\GitHub CLI\hosts.yml`, "$env:APPDATA/gcloud/access_tokens.db", "~/.ssh/./id_rsa", "~//.ssh//id_rsa", "/home/u/x/../.ssh/id_rsa",
		// private keys by name, anywhere
		"id_rsa", "backup/id_ed25519", "/tmp/id_ecdsa_sk", "keys/id_dsa.pub", "ID_RSA", "certs/server.pem", "server.PEM",
		// process environments
		"/proc/self/environ", "/proc/1/environ", "/proc/thread-self/environ", "/proc/self/task/7/environ",
		"/proc/self/../1/environ", "//proc/self/environ",
		// more stores (issue 25 round two: cat of these through the shell asked)
		"certs/server.key", "TLS.KEY", "~/.gnupg/private-keys-v1.d/x.key", "~/.gnupg/pubring.kbx", "~/.password-store/x.gpg",
		"~/.local/share/keyrings/login.keyring", "~/.pgpass", "/home/u/.my.cnf", "~/.vault-token", "~/.cargo/credentials",
		"~/.cargo/credentials.toml", "~/.gem/credentials", "~/.terraform.d/credentials.tfrc.json", "~/.config/hub",
		"~/.bash_history", "/home/u/.zsh_history", "~/.psql_history", "/etc/shadow", "//etc/./gshadow",
		// Windows' other spellings of home (verifying issue 25: these were ordinary)
		"/proc/self/root/etc/shadow", `\\localhost\c$\Users\u\.npmrc`, `\\?\UNC\127.0.0.1\C$\Users\u\.kube\config`,
		`%HOMEPATH%\.npmrc`, `%HOMEDRIVE%%HOMEPATH%\.kube\config`, "$env:HOMEPATH/.docker/config.json",
	}
	ordinary := []string{
		".env.example", ".env.sample", ".env.template", "config/.env.example", ".ENV.EXAMPLE",
		"README.md", "src/env.go", "internal/env/env.go", "environment.ts", "project/.npmrc", ".npmrc", ".pypirc",
		".docker/config.json", "deploy/.kube/config", "/proc/self/status", "/proc/self/root", "/proc/self/rootfs/home/u/.npmrc", "/proc//root/home/u/.npmrc", "/proc/self/environment.txt", "~/notes/ssh.md",
		"/home/u/project/main.go", "~/.config/other/hosts.yml", "docs/.envoy.md.txt/../guide.md", "my.sshd/config",
		".env/bin/activate", // a virtualenv called .env: files in it are not .env files
		" .env",             // no platform drops a leading space
		"keys.go", "project/.pgpass.example", ".bash_history", "/etc/passwd", "src/key", "monkey",
	}
	for _, p := range secret {
		if !Secrets().Match(p) {
			t.Errorf("Secrets().Match(%q) = false, want true (forms %q)", p, Canonical(p))
		}
	}
	for _, p := range ordinary {
		if Secrets().Match(p) {
			t.Errorf("Secrets().Match(%q) = true, want false (forms %q)", p, Canonical(p))
		}
	}
}

func TestSetExcludeAndAllows(t *testing.T) {
	t.Parallel()
	s := MustCompile("src/**", "!src/gen/**", "src/gen/keep.go", "~/work/**")
	for p, want := range map[string]bool{
		"src/a.go":              true,
		"src/gen/x.go":          false, // excluded after being included
		"src/gen/keep.go":       true,  // included again by a later pattern
		"src/../.env":           false, // cleaned before it is matched
		"src/a.go ":             true,  // both readings are under src
		`src\..\..\etc\passwd`:  false, // Windows reads it as ../etc/passwd
		"SRC/a.go":              false, // an allowlist does not fold case
		"/home/u/work/a.go":     true,  // the home form is allowed
		`C:\Users\u\work\a.go`:  false, // the POSIX reading is one odd name
		"/home/u/other/a.go":    false,
		"~/work/../other/a.go":  false,
		"src/gen/../gen/x.go":   false,
		"src/gen/keep.go::$DAT": false, // its POSIX reading is another file, in src/gen
	} {
		if got := s.Allows(p); got != want {
			t.Errorf("Allows(%q) = %v, want %v", p, got, want)
		}
	}
	if !s.Match("SRC/A.GO") {
		t.Error(`Match("SRC/A.GO") = false: a deny matches the lower-case form`)
	}
}

func TestCompileRefuses(t *testing.T) {
	t.Parallel()
	for _, p := range []string{"", "!", "[", "a{b", `x\`} {
		if _, err := Compile("ok/**", p); err == nil {
			t.Errorf("Compile(%q) succeeded", p)
		}
	}
}

func TestOutside(t *testing.T) {
	t.Parallel()
	const ws = "/work/app"
	for _, tc := range []struct {
		p, ws string
		want  bool
	}{
		{"src/a.go", ws, false},
		{".", ws, false},
		{"a/../b", ws, false},
		{"/work/app", ws, false},
		{"/work/app/src/a.go", ws, false},
		{"/work/app/../app/x", ws, false},
		{"../x", ws, true},
		{"a/../../x", ws, true},
		{"..", ws, true},
		{`..\x`, ws, true},
		{`src\..\..\x`, ws, true},
		{"/work/application/x", ws, true},
		{"/work/app/../other", ws, true},
		{"/etc/passwd", ws, true},
		{"~/x", ws, true},
		{"$HOME/x", ws, true},
		{"$TMPDIR/x", ws, true},
		{"%TEMP%\\x", ws, true},
		{`C:\x`, ws, true},
		{"/anything", "/", false},
		{"~/proj/x", "~/proj", false},
		{"~/other", "~/proj", true},
		{`C:\Src\App\x.go`, `C:\src\app`, false},
		{`C:\src\other`, `C:\src\app`, true},
		{`src\x.go`, `C:\src\app`, false},
		{`D:\src\app\x`, `C:\src\app`, true},
	} {
		if got := Outside(tc.p, tc.ws); got != tc.want {
			t.Errorf("Outside(%q, %q) = %v, want %v", tc.p, tc.ws, got, tc.want)
		}
	}
}

func BenchmarkSecretsMatch(b *testing.B) {
	for _, p := range []string{"/home/u/project/internal/server/routes.go", `C:\Users\u\project\.env.local`} {
		b.Run(p, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				Secrets().Match(p)
			}
		})
	}
}
