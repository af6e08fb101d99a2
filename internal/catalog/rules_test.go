package catalog

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gatedhq/gated/internal/route"
	"github.com/gatedhq/gated/internal/testtree"
)

// ruleTool renders a TOOL.md t.x (alias X) with the given rules, one YAML
// list item per entry.
func ruleTool(rules ...string) string {
	lines := []string{"metadata:", "  gated:", "    aliases: [X]", "    rules:"}
	for _, r := range rules {
		lines = append(lines, "      - "+r)
	}
	return tool("t.x", lines...)
}

// loadRuleView loads a catalog holding only ruleTool(rules…) and returns
// its view.
func loadRuleView(t *testing.T, rules ...string) *View {
	t.Helper()
	c := mustLoad(t, testtree.Write(t, t.TempDir(), map[string]string{"tools/x/TOOL.md": ruleTool(rules...)}))
	v, ok := c.Lookup("X")
	if !ok {
		t.Fatal("tool X not loaded")
	}
	return v
}

func decodeArgs(t *testing.T, s string) map[string]any {
	t.Helper()
	if s == "" {
		return nil
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		t.Fatalf("args %s: %v", s, err)
	}
	return m
}

func TestRuleMatching(t *testing.T) {
	t.Parallel()
	const (
		rmRF      = `{code: rm_rf, pointer: /command, regex: ['(^|[;&|(]\s*)rm\s+-[a-zA-Z]*[rR][a-zA-Z]*[fF]'], route: refuse}`
		rmArgv    = `{code: rm_rf, pointer: /argv, regex: '^rm -rf( |$)', route: refuse}`
		dashRF    = `{code: rm_rf, pointer: /argv, regex: '^-rf$', route: refuse}`
		gitPrefix = `{code: git_only, pointer: /command, prefix: ['git push'], route: ask}`
		argvPre   = `{code: git_only, pointer: /argv, prefix: ['git push'], route: ask}`
		secrets   = `{code: secrets_file, pointer: /file_path, glob: ['**/.env', '**/.ssh/**', '**/*.pem'], route: refuse}`
		secretsV  = `{code: secrets_file, pointer: /paths, glob: ['**/.env'], route: refuse}`
		envNotEx  = `{code: secrets_file, pointer: /file_path, glob: ['**/.env*', '!**/.env.example'], route: refuse}`
		builtin   = `{code: secrets_file, pointer: /file_path, glob: ['@secrets', 'vault/**'], route: refuse}`
		patch     = `{code: secrets_file, pointer: /command, glob: '@secrets', paths_from: apply_patch, route: refuse}`
		patchSrc  = `{code: outside_src, pointer: /command, glob: 'src/**', paths_from: apply_patch, route: ask, negate: true}`
		hosts     = `{code: bad_host, pointer: /url, host: [example.com, '*.example.org'], route: defer}`
		allowHost = `{code: host_not_allowed, pointer: /url, host: [docs.python.org, '*.github.com', github.com], route: ask, negate: true}`
		allowSrc  = `{code: outside_src, pointer: /file_path, glob: 'src/**', route: ask, negate: true}`
		allowSrcs = `{code: outside_src, pointer: /paths, glob: 'src/**', route: ask, negate: true}`
		allowGit  = `{code: not_git_read, pointer: /argv, regex: '^git (status|log)( |$)', route: ask, negate: true}`
		nested    = `{code: nested, pointer: /opts/paths/1, glob: '**/.env', route: refuse}`
		escaped   = `{code: escaped, pointer: '/a~1b/~0k', prefix: x, route: refuse}`
		under     = `{code: secrets_file, pointer: /glob, glob: '@secrets', under: /path, route: refuse}`
	)
	tests := []struct {
		name, rule, args string
		fires            bool
	}{
		// regex
		{"regex matches", rmRF, `{"command": "rm -rf build"}`, true},
		{"regex matches -fr after ;", rmRF, `{"command": "make; rm -Rf /"}`, true},
		{"regex does not match rm -r", rmRF, `{"command": "rm -r build"}`, false},
		{"regex does not match a word ending in rm", rmRF, `{"command": "farm -rf"}`, false},
		{"regex on an argv, joined", rmArgv, `{"argv": ["rm", "-rf", "build"]}`, true},
		{"regex on an argv, element", dashRF, `{"argv": ["rm", "-rf", "build"]}`, true},
		{"regex on an argv, neither", rmArgv, `{"argv": ["rm", "-r", "build"]}`, false},
		// prefix
		{"prefix matches", gitPrefix, `{"command": "git push origin main"}`, true},
		{"prefix does not match", gitPrefix, `{"command": "git status"}`, false},
		{"prefix is not a substring match", gitPrefix, `{"command": "echo git push"}`, false},
		{"prefix on an argv, joined", argvPre, `{"argv": ["git", "push", "origin"]}`, true},
		// glob and path normalisation
		{"glob .env", secrets, `{"file_path": ".env"}`, true},
		{"glob nested .env", secrets, `{"file_path": "services/api/.env"}`, true},
		{"glob a/../.env", secrets, `{"file_path": "a/../.env"}`, true},
		{"glob ./.env", secrets, `{"file_path": "./.env"}`, true},
		{"glob ../.env climbs and stays", secrets, `{"file_path": "../.env"}`, true},
		{"glob absolute .ssh", secrets, `{"file_path": "/home/u/.ssh/id_rsa"}`, true},
		{"glob ~/.ssh", secrets, `{"file_path": "~/.ssh/id_ed25519"}`, true},
		{"glob /x/./y cleaned", secrets, `{"file_path": "/home/u/./.ssh/../.ssh/config"}`, true},
		{"glob upper case on a case-insensitive disk", secrets, `{"file_path": "/repo/.ENV"}`, true},
		{"glob *.pem", secrets, `{"file_path": "certs/server.pem"}`, true},
		{"glob .env.example is another file", secrets, `{"file_path": ".env.example"}`, false},
		{"glob an ordinary file", secrets, `{"file_path": "README.md"}`, false},
		{"glob a directory named like it", secrets, `{"file_path": "/home/u/ssh/notes"}`, false},
		{"glob reads a Windows path as Windows does", secrets, `{"file_path": "C:\\Users\\u\\.ssh\\id_rsa"}`, true},
		{"glob .env with a trailing space", secrets, `{"file_path": ".env "}`, true},
		{"glob .env with an NTFS stream", secrets, `{"file_path": ".env::$DATA"}`, true},
		{"glob exclusion", envNotEx, `{"file_path": "config/.env.example"}`, false},
		{"glob exclusion, the rest still fires", envNotEx, `{"file_path": "config/.env.local"}`, true},
		{"glob @secrets .env", builtin, `{"file_path": ".\\.env"}`, true},
		{"glob @secrets ~ spelled $HOME", builtin, `{"file_path": "$HOME/.aws/credentials"}`, true},
		{"glob @secrets /proc environ", builtin, `{"file_path": "/proc/1/environ"}`, true},
		{"glob @secrets .env.example", builtin, `{"file_path": ".env.example"}`, false},
		{"glob @secrets with its own patterns", builtin, `{"file_path": "vault/token.txt"}`, true},
		{"glob @secrets ordinary file", builtin, `{"file_path": "src/main.go"}`, false},
		// paths_from: apply_patch
		{"patch adds .env", patch, `{"command": "*** Begin Patch\n*** Add File: .env\n+K=v\n*** End Patch"}`, true},
		{"patch updates a Windows .env", patch, `{"command": "*** Begin Patch\r\n*** Update File: app\\.env \r\n@@\n-a\n+b\n*** End Patch"}`, true},
		{"patch deletes an SSH key", patch, `{"command": "*** Begin Patch\n*** Delete File: /home/u/.ssh/id_ed25519\n*** End Patch"}`, true},
		{"patch moves a file onto .env", patch, `{"command": "*** Begin Patch\n*** Update File: a.txt\n*** Move to: config/.env.local\n*** End Patch"}`, true},
		{"patch indented marker", patch, `{"command": "*** Begin Patch\n  *** Add File:   ~/.aws/credentials\n*** End Patch"}`, true},
		{"patch in an argv", patch, `{"command": ["apply_patch", "*** Begin Patch\n*** Add File: .env\n*** End Patch"]}`, true},
		{"patch ordinary files", patch, `{"command": "*** Begin Patch\n*** Add File: src/a.go\n+package a\n*** Update File: .env.example\n*** End Patch"}`, false},
		{"patch body mentions .env", patch, `{"command": "*** Begin Patch\n*** Update File: README.md\n+*** Add File: .env\n*** End Patch"}`, false},
		{"patch allowlist inside", patchSrc, `{"command": "*** Begin Patch\n*** Add File: src/a.go\n*** Update File: src/b.go\n*** End Patch"}`, false},
		{"patch allowlist one outside", patchSrc, `{"command": "*** Begin Patch\n*** Add File: src/a.go\n*** Update File: src/../go.mod\n*** End Patch"}`, true},
		// under: a glob filter in a directory (verifying issue 25: Grep
		// {path: "~", glob: ".npmrc"} and {path: "/proc/self", glob:
		// "environ"} were allowed)
		{"under home", under, `{"path": "~", "glob": ".npmrc"}`, true},
		{"under /proc/self", under, `{"path": "/proc/self/", "glob": "environ"}`, true},
		{"under a Windows home", under, `{"path": "C:\\Users\\u", "glob": ".docker/config.json"}`, true},
		{"under each of paths", under, `{"path": ["src", "/home/u"], "glob": ".kube/config"}`, true},
		{"under, the value alone", under, `{"path": "src", "glob": ".env"}`, true},
		{"under an ordinary directory", under, `{"path": "src", "glob": "*.go"}`, false},
		{"under nothing", under, `{"glob": ".npmrc"}`, false},
		{"glob array, one element", secretsV, `{"paths": ["README.md", "app/.env"]}`, true},
		{"glob array, none", secretsV, `{"paths": ["README.md", "app/main.go"]}`, false},
		// host
		{"host exact", hosts, `{"url": "https://example.com/a?b=c"}`, true},
		{"host port, trailing dot, case", hosts, `{"url": "HTTPS://Example.COM.:8443/x"}`, true},
		{"host wildcard subdomain", hosts, `{"url": "http://a.b.example.org/"}`, true},
		{"host wildcard is not the apex", hosts, `{"url": "http://example.org/"}`, false},
		{"host lookalike", hosts, `{"url": "https://notexample.com/"}`, false},
		{"host userinfo trick", hosts, `{"url": "https://example.com@evil.net/"}`, false},
		{"host not an absolute URL", hosts, `{"url": "example.com/path"}`, false},
		{"host scheme-relative", hosts, `{"url": "//example.com/path"}`, false},
		// negate: allowlists
		{"allowlist allowed host", allowHost, `{"url": "https://docs.python.org/3/library/"}`, false},
		{"allowlist allowed subdomain", allowHost, `{"url": "https://api.github.com/repos"}`, false},
		{"allowlist apex listed too", allowHost, `{"url": "https://github.com/gatedhq"}`, false},
		{"allowlist other host", allowHost, `{"url": "https://pastebin.com/raw/x"}`, true},
		{"allowlist userinfo trick", allowHost, `{"url": "https://docs.python.org@evil.net/"}`, true},
		{"allowlist backslash trick", allowHost, `{"url": "https://evil.net\\@docs.python.org/"}`, true},
		{"allowlist not a URL", allowHost, `{"url": "docs.python.org"}`, true},
		{"allowlist missing value", allowHost, `{"prompt": "x"}`, true},
		{"allowlist number", allowHost, `{"url": 7}`, true},
		{"allowlist no arguments", allowHost, ``, true},
		{"allowlist path inside", allowSrc, `{"file_path": "src/pkg/a.go"}`, false},
		{"allowlist path escaping with ..", allowSrc, `{"file_path": "src/../.env"}`, true},
		{"allowlist path escaping with Windows ..", allowSrc, `{"file_path": "src\\..\\..\\.env"}`, true},
		{"allowlist path escaping with a Windows ..", allowSrc, `{"file_path": "src/x\\..\\..\\..\\.env"}`, true},
		{"allowlist array all inside", allowSrcs, `{"paths": ["src/a.go", "./src/b.go"]}`, false},
		{"allowlist array one outside", allowSrcs, `{"paths": ["src/a.go", "etc/passwd"]}`, true},
		{"allowlist empty array", allowSrcs, `{"paths": []}`, false},
		{"allowlist argv joined", allowGit, `{"argv": ["git", "status", "-s"]}`, false},
		{"allowlist argv other", allowGit, `{"argv": ["git", "push"]}`, true},
		// values that are not strings do not match
		{"missing value", rmRF, `{"description": "rm -rf /"}`, false},
		{"no arguments", rmRF, ``, false},
		{"number", rmRF, `{"command": 5}`, false},
		{"object", rmRF, `{"command": {"x": "rm -rf /"}}`, false},
		{"mixed array", rmArgv, `{"argv": ["rm", "-rf", 1]}`, false},
		// pointers
		{"nested pointer with an index", nested, `{"opts": {"paths": ["a", "b/.env"]}}`, true},
		{"nested pointer, other index", nested, `{"opts": {"paths": ["a/.env", "b"]}}`, false},
		{"index out of range", nested, `{"opts": {"paths": ["a"]}}`, false},
		{"escaped pointer", escaped, `{"a/b": {"~k": "xyz"}}`, true},
		{"escaped pointer, other key", escaped, `{"a": {"b": {"~k": "xyz"}}}`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := loadRuleView(t, tt.rule)
			fs := v.Call(nil, "").ruleFindings(decodeArgs(t, tt.args))
			if (len(fs) == 1) != tt.fires || len(fs) > 1 {
				t.Fatalf("findings %+v, want fires=%v", fs, tt.fires)
			}
		})
	}
}

// Every problem names the file and the field.
func TestRuleLoadProblems(t *testing.T) {
	t.Parallel()
	ok := `{code: fine_rule, pointer: /command, regex: x, route: refuse}`
	many := func(n int, r string) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = r
		}
		return out
	}
	list := func(n int, p string) string {
		return "[" + strings.Repeat("'"+p+"', ", n-1) + "'" + p + "']"
	}
	tests := []struct {
		name   string
		rules  []string
		field  string
		code   string
		inMsgs []string
	}{
		{"bad regex", []string{ok, ok, `{code: c_bad, pointer: /command, regex: ['ok', 'a(b'], route: refuse}`}, "/metadata/gated/rules/2/regex/1", "invalid_rule_pattern", []string{"missing closing )"}},
		{"bad regex, one string", []string{`{code: c_bad, pointer: /command, regex: '[z-a]', route: refuse}`}, "/metadata/gated/rules/0/regex", "invalid_rule_pattern", []string{"invalid character class range"}},
		{"accept route", []string{`{code: c_bad, pointer: /command, regex: x, route: accept}`}, "/metadata/gated/rules/0/route", "invalid_rule_route", []string{"only tightens"}},
		{"unknown route", []string{`{code: c_bad, pointer: /command, regex: x, route: deny}`}, "/metadata/gated/rules/0/route", "invalid_rule_route", nil},
		{"route missing", []string{`{code: c_bad, pointer: /command, regex: x}`}, "/metadata/gated/rules/0/route", "missing_field", nil},
		{"code missing", []string{`{pointer: /command, regex: x, route: ask}`}, "/metadata/gated/rules/0/code", "missing_field", nil},
		{"bad code", []string{`{code: Bad-Code, pointer: /command, regex: x, route: ask}`}, "/metadata/gated/rules/0/code", "invalid_rule_code", nil},
		{"short code", []string{`{code: ab, pointer: /command, regex: x, route: ask}`}, "/metadata/gated/rules/0/code", "invalid_rule_code", nil},
		{"catalog's own code", []string{`{code: arguments_invalid, pointer: /command, regex: x, route: ask}`}, "/metadata/gated/rules/0/code", "invalid_rule_code", []string{"gated's own"}},
		// The approval and proxy code match approval_pending by code alone.
		{"an approval's code", []string{`{code: approval_pending, pointer: /command, regex: x, route: ask}`}, "/metadata/gated/rules/0/code", "invalid_rule_code", []string{"gated's own"}},
		{"the kill switch's code", []string{ok, `{code: kill_switch, pointer: /command, route: refuse, command: {program: rm}}`}, "/metadata/gated/rules/1/code", "invalid_rule_code", []string{"gated's own"}},
		{"the runtime's non-blocking code", []string{`{code: runtime_recommended_ask, pointer: /command, prefix: x, route: ask}`}, "/metadata/gated/rules/0/code", "invalid_rule_code", []string{"gated's own"}},
		{"code not a string", []string{`{code: [a], pointer: /command, regex: x, route: ask}`}, "/metadata/gated/rules/0/code", "invalid_type", nil},
		{"pointer missing", []string{`{code: c_bad, regex: x, route: ask}`}, "/metadata/gated/rules/0/pointer", "missing_field", nil},
		{"pointer without slash", []string{`{code: c_bad, pointer: command, regex: x, route: ask}`}, "/metadata/gated/rules/0/pointer", "invalid_rule_pointer", []string{"start with '/'"}},
		{"pointer with a bad escape", []string{`{code: c_bad, pointer: /a~2b, regex: x, route: ask}`}, "/metadata/gated/rules/0/pointer", "invalid_rule_pointer", []string{"~0"}},
		{"empty pointer", []string{`{code: c_bad, pointer: '', regex: x, route: ask}`}, "/metadata/gated/rules/0/pointer", "invalid_rule_pointer", []string{"whole argument object"}},
		{"too many rules", many(maxRulesPerTool+1, ok), "/metadata/gated/rules", "rule_limit_exceeded", []string{"65 rules", "at most 64"}},
		{"too many patterns", []string{`{code: c_bad, pointer: /command, prefix: ` + list(maxPatternsPerRule+1, "p") + `, route: ask}`}, "/metadata/gated/rules/0/prefix", "rule_limit_exceeded", []string{"257 patterns"}},
		{"pattern too long", []string{`{code: c_bad, pointer: /command, prefix: ['ok', '` + strings.Repeat("p", maxPatternBytes+1) + `'], route: ask}`}, "/metadata/gated/rules/0/prefix/1", "rule_limit_exceeded", []string{"1025 bytes"}},
		{"too many pattern bytes", many(20, `{code: c_big, pointer: /command, prefix: '`+strings.Repeat("p", 1000)+`', route: ask}`), "/metadata/gated/rules", "rule_limit_exceeded", []string{"20000 bytes"}},
		{"glob with nine **", []string{`{code: c_bad, pointer: /p, glob: ['` + strings.Repeat("**/a/", 9) + `x'], route: ask}`}, "/metadata/gated/rules/0/glob/0", "rule_limit_exceeded", []string{"9 '**'"}},
		{"glob with too many alternatives", []string{`{code: c_bad, pointer: /p, glob: ['` + strings.Repeat("{a,b}", 7) + `'], route: ask}`}, "/metadata/gated/rules/0/glob/0", "rule_limit_exceeded", []string{"alternatives"}},
		{"invalid glob", []string{`{code: c_bad, pointer: /p, glob: ['**/[a'], route: ask}`}, "/metadata/gated/rules/0/glob/0", "invalid_rule_pattern", nil},
		{"lone !", []string{`{code: c_bad, pointer: /p, glob: ['**/.env', '!'], route: ask}`}, "/metadata/gated/rules/0/glob/1", "invalid_rule_pattern", []string{"lone !"}},
		{"@secrets in an allowlist", []string{`{code: c_bad, pointer: /p, glob: ['@secrets'], route: ask, negate: true}`}, "/metadata/gated/rules/0/glob/0", "invalid_rule_pattern", []string{"negated rule"}},
		{"paths_from unknown", []string{`{code: c_bad, pointer: /p, glob: '**', paths_from: diff, route: ask}`}, "/metadata/gated/rules/0/paths_from", "invalid_rule_paths_from", []string{"apply_patch"}},
		{"under not a pointer", []string{`{code: c_bad, pointer: /p, glob: '**', under: p, route: ask}`}, "/metadata/gated/rules/0/under", "invalid_rule_under", nil},
		{"under on a regex", []string{`{code: c_bad, pointer: /p, regex: x, under: /d, route: ask}`}, "/metadata/gated/rules/0/under", "invalid_rule_under", []string{"glob rule"}},
		{"paths_from on a regex", []string{`{code: c_bad, pointer: /p, regex: x, paths_from: apply_patch, route: ask}`}, "/metadata/gated/rules/0/paths_from", "invalid_rule_paths_from", []string{"glob rule"}},
		{"unknown @set", []string{`{code: c_bad, pointer: /p, glob: '@credentials', route: ask}`}, "/metadata/gated/rules/0/glob", "invalid_rule_pattern", []string{"@secrets"}},
		{"host pattern in upper case", []string{`{code: c_bad, pointer: /url, host: [Example.com], route: ask}`}, "/metadata/gated/rules/0/host/0", "invalid_rule_pattern", []string{"lower-case"}},
		{"host pattern with a scheme", []string{`{code: c_bad, pointer: /url, host: [ok.com, 'https://x.com'], route: ask}`}, "/metadata/gated/rules/0/host/1", "invalid_rule_pattern", nil},
		{"host pattern with an inner wildcard", []string{`{code: c_bad, pointer: /url, host: ['a.*.com'], route: ask}`}, "/metadata/gated/rules/0/host/0", "invalid_rule_pattern", nil},
		{"host pattern that is only a wildcard", []string{`{code: c_bad, pointer: /url, host: ['*'], route: ask}`}, "/metadata/gated/rules/0/host/0", "invalid_rule_pattern", nil},
		{"unknown field with / and ~", []string{`{code: c_bad, pointer: /p, regex: x, route: ask, 'a/b~c': 1}`}, "/metadata/gated/rules/0/a~1b~0c", "unknown_field", nil},
		{"unknown matcher kind", []string{`{code: c_bad, pointer: /p, suffix: [.env], route: ask}`}, "/metadata/gated/rules/0/suffix", "unknown_field", []string{"regex, glob, prefix, host, command or files"}},
		{"two matcher kinds", []string{`{code: c_bad, pointer: /p, regex: x, glob: y, route: ask}`}, "/metadata/gated/rules/0", "invalid_rule_matcher", []string{"glob and regex"}},
		{"no matcher", []string{`{code: c_bad, pointer: /p, route: ask}`}, "/metadata/gated/rules/0", "missing_field", []string{"one matcher"}},
		{"empty pattern list", []string{`{code: c_bad, pointer: /p, regex: [], route: ask}`}, "/metadata/gated/rules/0/regex", "invalid_rule_pattern", []string{"at least one"}},
		{"empty pattern", []string{`{code: c_bad, pointer: /p, prefix: ['a', ''], route: ask}`}, "/metadata/gated/rules/0/prefix/1", "invalid_rule_pattern", []string{"empty"}},
		{"pattern not a string", []string{`{code: c_bad, pointer: /p, prefix: [1, 2], route: ask}`}, "/metadata/gated/rules/0/prefix", "invalid_type", nil},
		{"negate not a boolean", []string{`{code: c_bad, pointer: /p, prefix: a, route: ask, negate: 'yes'}`}, "/metadata/gated/rules/0/negate", "invalid_type", nil},
		{"message too long", []string{`{code: c_bad, pointer: /p, prefix: a, route: ask, message: '` + strings.Repeat("m", maxRuleMessageBytes+1) + `'}`}, "/metadata/gated/rules/0/message", "rule_limit_exceeded", nil},
		{"regex too large", []string{`{code: c_bad, pointer: /p, regex: '` + strings.Repeat(`.{1000}`, 5) + `', route: ask}`}, "/metadata/gated/rules/0/regex", "rule_limit_exceeded", []string{"instructions"}},
		{"rules not a list", []string{}, "/metadata/gated/rules", "invalid_type", nil},
		{"rule not a mapping", []string{"just a string"}, "/metadata/gated/rules/0", "invalid_type", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			content := ruleTool(tt.rules...)
			if len(tt.rules) == 0 {
				content = tool("t.x", "metadata: {gated: {rules: {code: x}}}")
			}
			dir := testtree.Write(t, t.TempDir(), map[string]string{"tools/x/TOOL.md": content})
			ps := loadProblems(t, dir)
			want := filepath.Join(dir, "tools", "x", "TOOL.md")
			for _, p := range ps {
				if p.File != want {
					t.Errorf("problem in another file: %v", p)
				}
			}
			for _, p := range ps {
				if p.Field == tt.field && p.Code == tt.code {
					for _, frag := range tt.inMsgs {
						if !strings.Contains(p.Message, frag) {
							t.Errorf("message %q lacks %q", p.Message, frag)
						}
					}
					return
				}
			}
			t.Fatalf("want %s: %s; got:\n%s", tt.field, tt.code, (&LoadError{Problems: ps}).Error())
		})
	}
}

// Every problem of a rule is reported, not only the first.
func TestRuleProblemsAreAllListed(t *testing.T) {
	t.Parallel()
	dir := testtree.Write(t, t.TempDir(), map[string]string{"tools/x/TOOL.md": ruleTool(
		`{code: X, pointer: p, regex: ['(', ')'], route: accept, colour: red}`)})
	ps := loadProblems(t, dir)
	got := map[string]string{}
	for _, p := range ps {
		got[p.Field] = p.Code
	}
	want := map[string]string{
		"/metadata/gated/rules/0/code":    "invalid_rule_code",
		"/metadata/gated/rules/0/pointer": "invalid_rule_pointer",
		"/metadata/gated/rules/0/route":   "invalid_rule_route",
		"/metadata/gated/rules/0/colour":  "unknown_field",
		"/metadata/gated/rules/0/regex/0": "invalid_rule_pattern",
		"/metadata/gated/rules/0/regex/1": "invalid_rule_pattern",
	}
	for f, c := range want {
		if got[f] != c {
			t.Errorf("%s: got %q, want %s (all: %v)", f, got[f], c, ps)
		}
	}
}

func TestGlobExpansions(t *testing.T) {
	t.Parallel()
	for p, want := range map[string]int{
		"**/.env":                  1,
		"**/*.{pem,key}":           2,
		"{a,b}/{c,d,e}":            6,
		"{a,{b,c}}":                3,
		"{a,b{c,d}}":               3,
		`\{a,b\}`:                  1,
		"[{]{a,b}":                 2,
		"[!}]{a,b}":                2,
		"{,.*}":                    2,
		strings.Repeat("{a,b}", 7): maxGlobExpansions + 1,
		strings.Repeat("{a,b,c,d,e,f,g,h,i,j}", 40): maxGlobExpansions + 1,
	} {
		if got := globExpansions(p); got != want {
			t.Errorf("globExpansions(%q) = %d, want %d", p, got, want)
		}
	}
}

// RE2 matches in linear time: patterns that backtrack catastrophically
// elsewhere load, and matching them against a 64 KiB adversarial value
// returns (a backtracking engine would not, and the test would hang).
func TestHostileRegexesMatchInLinearTime(t *testing.T) {
	t.Parallel()
	v := loadRuleView(t,
		`{code: nested_plus, pointer: /a, regex: '(a+)+$', route: refuse}`,
		`{code: double_plus, pointer: /x, regex: '(x+x+)+y', route: refuse}`,
		`{code: star_repeat, pointer: /b, regex: '(.*a){20}', route: refuse}`,
		`{code: star_repeat_negated, pointer: /b, regex: '(.*a){20}', route: refuse, negate: true}`,
	)
	const n = MaxRuleValueBytes - 64 // the most a regex rule reads
	args := map[string]any{
		"a": strings.Repeat("a", n) + "!",
		"x": strings.Repeat("x", n),
		"b": strings.Repeat("a", 19) + strings.Repeat("b", n),
	}
	fs := v.Call(nil, "").ruleFindings(args)
	if len(fs) != 1 || fs[0].Code != "star_repeat_negated" {
		t.Fatalf("findings %+v, want only the negated rule", fs)
	}
	args["b"] = strings.Repeat("ab", n/2)
	if fs := v.Call(nil, "").ruleFindings(args); len(fs) != 1 || fs[0].Code != "star_repeat" {
		t.Fatalf("findings %+v, want star_repeat", fs)
	}
}

// A patch that names more files than a paths_from rule reads fires the
// rule, naming why, so that a flood of harmless files cannot hide a secret
// past the check or make the check slow.
func TestPatchRuleFiresOnTooManyFiles(t *testing.T) {
	t.Parallel()
	v := loadRuleView(t, `{code: secrets_file, pointer: /command, glob: '@secrets', paths_from: apply_patch, route: refuse}`)
	patch := func(n int) map[string]any {
		return map[string]any{"command": "*** Begin Patch\n" + strings.Repeat("*** Add File: src/a.go\n", n) + "*** End Patch"}
	}
	if fs := v.Call(nil, "").ruleFindings(patch(MaxRulePaths)); len(fs) != 0 {
		t.Fatalf("findings %+v for %d ordinary files", fs, MaxRulePaths)
	}
	fs := v.Call(nil, "").ruleFindings(patch(MaxRulePaths + 1))
	if len(fs) != 1 || !strings.Contains(fs[0].Message, "too many") || strings.Contains(fs[0].Message, "src/a.go") {
		t.Fatalf("findings %+v", fs)
	}
}

// A value longer than a regex rule reads fires the rule, naming why, so
// that padding cannot push a command past the check.
func TestRegexRuleFiresOnValuesTooLongToCheck(t *testing.T) {
	t.Parallel()
	v := loadRuleView(t, `{code: destructive, pointer: /command, regex: 'rm\s+-rf', route: refuse}`,
		`{code: fetch_host, pointer: /url, host: [example.com], route: ask, negate: true}`)
	padded := strings.Repeat(" ", MaxRuleValueBytes) + "rm -rf /"
	for _, args := range []map[string]any{{"command": padded}, {"command": []any{strings.Repeat("x", MaxRuleValueBytes), "ls"}}} {
		fs := v.Call(nil, "").ruleFindings(args)
		if len(fs) != 2 || fs[0].Code != "destructive" || !strings.Contains(fs[0].Message, "too long") || strings.Contains(fs[0].Message, "rm -rf") {
			t.Fatalf("findings %+v", fs)
		}
	}
	if fs := v.Call(nil, "").ruleFindings(map[string]any{"command": "ls -la", "url": "https://example.com/x"}); len(fs) != 0 {
		t.Fatalf("a short clean value fired: %+v", fs)
	}
}

func TestRuleFindingsThroughFloors(t *testing.T) {
	t.Parallel()
	v := loadRuleView(t,
		`{code: secrets_file, pointer: /file_path, glob: '**/.env', route: refuse}`,
		`{code: custom_said, pointer: /file_path, prefix: /, route: defer, message: "absolute paths wait for a person"}`,
	)
	const secret = "/srv/sk-live-0123456789abcdef/.env"
	ev := &route.Event{ProposedArguments: map[string]any{"file_path": secret}}
	for _, mode := range []ArgumentMode{ArgumentsEnforce, ArgumentsWarn, ArgumentsOff} {
		fs, _ := Floors(v.Call(nil, ""), ev, route.AuthConfirmed, mode)
		if len(fs) != 2 {
			t.Fatalf("%s: findings %+v, want both rules", mode, fs)
		}
		want := []route.Finding{
			{Source: route.SourceCatalog, Code: "secrets_file", Route: route.Refuse, Blocking: true,
				Message: "argument rule secrets_file fired on /file_path (tools/x/TOOL.md)"},
			{Source: route.SourceCatalog, Code: "custom_said", Route: route.Defer, Blocking: true,
				Message: "absolute paths wait for a person"},
		}
		for i := range want {
			if fs[i] != want[i] {
				t.Errorf("%s: finding %d = %+v, want %+v", mode, i, fs[i], want[i])
			}
		}
		for _, f := range fs {
			if strings.Contains(f.Message, "sk-live") || strings.Contains(f.Message, "/srv") {
				t.Errorf("finding quotes the argument value: %q", f.Message)
			}
		}
		if o := route.Combine(fs); o.Route != route.Refuse || len(o.HardBlockers) != 2 {
			t.Errorf("combined %+v", o)
		}
	}
	// Rule findings come before the other floors.
	w := loadRuleView(t, `{code: secrets_file, pointer: /file_path, glob: '**/.env', route: refuse}`)
	w.Approval = approvalAlways
	fs, _ := Floors(w.Call(nil, ""), ev, route.AuthAuthenticated, ArgumentsEnforce)
	if len(fs) != 2 || fs[0].Code != "secrets_file" || fs[1].Code != route.CodeApprovalRequired {
		t.Fatalf("order: %+v", fs)
	}
	if fs, _ := Floors(w.Call(nil, ""), &route.Event{ProposedArguments: map[string]any{"file_path": "a.go"}}, route.AuthConfirmed, ArgumentsEnforce); len(fs) != 0 {
		t.Fatalf("a path no rule matches: %+v", fs)
	}
}

func TestRulesInViewJSON(t *testing.T) {
	t.Parallel()
	v := loadRuleView(t,
		`{code: fetch_host_not_allowed, pointer: /url, host: [docs.python.org, '*.github.com'], route: ask, negate: true}`,
		`{code: rm_rf, pointer: /command, regex: 'rm -rf', route: refuse, message: no}`,
	)
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Rules []map[string]any `json:"rules"`
	}
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	want := `[map[code:fetch_host_not_allowed kind:host negate:true patterns:[docs.python.org *.github.com] pointer:/url route:ask] ` +
		`map[code:rm_rf kind:regex message:no negate:false patterns:[rm -rf] pointer:/command route:refuse]]`
	if s := fmt.Sprint(got.Rules); s != want {
		t.Fatalf("rules JSON\n got %s\nwant %s", s, want)
	}
	c := mustLoad(t, examples)
	plain, _ := c.Lookup("send_email")
	if b, _ := json.Marshal(plain); strings.Contains(string(b), `"rules"`) {
		t.Fatalf("a view without rules shows them: %s", b)
	}
}

func BenchmarkRules(b *testing.B) {
	dir := testtree.Write(b, b.TempDir(), map[string]string{"tools/x/TOOL.md": ruleTool(
		`{code: rm_rf, pointer: /command, regex: ['(^|[;&|(]\s*)rm\s+-[a-zA-Z]*[rR][a-zA-Z]*[fF]', 'curl.*\|\s*sh'], route: refuse}`,
		`{code: secrets, pointer: /file_path, glob: ['**/.env', '**/.env.*', '**/.ssh/**', '**/*.pem'], route: refuse}`,
		`{code: hosts, pointer: /url, host: [docs.python.org, '*.github.com'], route: ask, negate: true}`,
	)})
	c := mustLoad(b, dir)
	v, _ := c.Lookup("X")
	args := map[string]any{"command": "go test ./... && git status", "file_path": "/home/u/project/internal/x/y.go"}
	b.ReportAllocs()
	for b.Loop() {
		v.Call(nil, "").ruleFindings(args)
	}
}
