package pathset

// secretPatterns are the files an agent must not read or write: credential
// stores, private keys and environment files. Names that are secrets
// wherever they are (".env", "id_rsa", ".ssh/") match in any directory;
// stores that are secrets only in the home directory ("~/.npmrc", while a
// project's .npmrc is ordinary configuration) match there, and Canonical
// gives every path under a home directory its "~/" form; the Windows
// locations are in lower case, as Windows readings are matched. Templates of .env
// files, committed to show which variables exist, are not secrets.
var secretPatterns = []string{
	"**/.env*",
	"!**/.env.example",
	"!**/.env.sample",
	"!**/.env.template",
	"**/.ssh/**",
	"**/id_{rsa,dsa,ecdsa,ed25519}*",
	"**/*.pem",
	"~/.aws/**",
	"**/.aws/credentials",
	"~/.azure/**",
	"~/.config/gcloud/**",
	"~/appdata/roaming/gcloud/**",
	"~/.kube/config",
	"~/.docker/config.json",
	"**/.git-credentials",
	"~/.config/git/credentials",
	"**/.netrc",
	"~/_netrc",
	"~/.npmrc",
	"~/.pypirc",
	"~/.config/gh/hosts.yml",
	"~/appdata/roaming/github cli/hosts.yml",
	"/proc/**/environ",
	"**/*.key",
	"~/.gnupg/**",
	"~/.password-store/**",
	"~/.local/share/keyrings/**",
	"~/.pgpass",
	"~/.my.cnf",
	"~/.vault-token",
	"~/.cargo/credentials{,.toml}",
	"~/.gem/credentials",
	"~/.terraform.d/credentials.tfrc.json",
	"~/.config/hub",
	"~/.*_history",
	"/etc/{shadow,gshadow}",
}

var secrets = MustCompile(secretPatterns...)

// Secrets is the built-in set of secret files.
func Secrets() *Set { return secrets }
