package doctor

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/pelletier/go-toml/v2"
)

// Codex's defaults for a command hook, as codex-rs/hooks discovers them
// (Codex 0.169.0).
const (
	codexDefaultTimeout        = 600 // seconds
	codexDefaultContextLimit   = 2500
	codexVersionOfTrustHashing = "0.169.0"
)

// codexSystemConfig is the administrator's config.toml, whose hooks are
// managed: Codex runs them without a trust record.
func codexSystemConfig() []string { return []string{"/etc/codex/config.toml"} }

// codexLayer is one configuration file Codex reads hooks from.
type codexLayer struct {
	path    string // config.toml or hooks.json
	managed bool
	project bool
}

// loadCodex reads Codex's hooks as Codex 0.169.0 discovers them: the system
// config (managed), $CODEX_HOME (default ~/.codex) config.toml and
// hooks.json, then — only when the project folder is trusted — every
// .codex/config.toml and .codex/hooks.json from the project root (the
// nearest folder above Dir holding .git, else Dir) down to Dir. A hook
// that is not managed runs only when [hooks.state."<key>"] in the user's
// config.toml records a trusted_hash equal to the hook's current hash.
func loadCodex(o *Options, _ *runtime) (*config, error) {
	cfg := &config{}
	home := o.getenv("CODEX_HOME")
	if home == "" {
		home = filepath.Join(o.getenv("HOME"), ".codex")
	}
	userPath := filepath.Join(home, "config.toml")
	var state struct {
		Hooks struct {
			State map[string]struct {
				Enabled     *bool  `toml:"enabled"`
				TrustedHash string `toml:"trusted_hash"`
			} `toml:"state"`
		} `toml:"hooks"`
		Projects map[string]struct {
			TrustLevel string `toml:"trust_level"`
		} `toml:"projects"`
		ProjectRootMarkers []string `toml:"project_root_markers"`
		Features           struct {
			Hooks *bool `toml:"hooks"`
		} `toml:"features"`
	}
	user, err := readTOML(cfg, userPath, &state)
	if err != nil {
		return nil, err
	}
	if state.Features.Hooks != nil && !*state.Features.Hooks {
		cfg.checks = append(cfg.checks, Check{"hooks on", Problem, fmt.Sprintf("%s sets [features] hooks = false: Codex runs no hook, gated's included", userPath)})
	}

	var layers []codexLayer
	system := o.Managed
	if system == nil {
		system = codexSystemConfig()
	}
	for _, p := range system {
		layers = append(layers, codexLayer{path: filepath.Join(filepath.Dir(p), "hooks.json"), managed: true}, codexLayer{path: p, managed: true})
	}
	layers = append(layers, codexLayer{path: filepath.Join(home, "hooks.json")}, codexLayer{path: userPath})

	markers := state.ProjectRootMarkers
	if markers == nil {
		markers = []string{".git"}
	}
	root := projectRoot(o.Dir, markers)
	trusted := state.Projects[root].TrustLevel == "trusted"
	var projectLayers []codexLayer
	for _, d := range foldersDown(root, o.Dir) {
		projectLayers = append(projectLayers,
			codexLayer{path: filepath.Join(d, ".codex", "hooks.json"), project: true},
			codexLayer{path: filepath.Join(d, ".codex", "config.toml"), project: true})
	}
	layers = append(layers, projectLayers...)

	for _, l := range layers {
		if l.project && l.path == userPath {
			continue // the project is $CODEX_HOME's parent: one file, read once
		}
		var events map[string]any
		if strings.HasSuffix(l.path, ".json") {
			raw, err := os.ReadFile(l.path)
			if errors.Is(err, fs.ErrNotExist) {
				continue
			}
			if err != nil {
				return nil, fmt.Errorf("cannot read %s: %w", l.path, err)
			}
			cfg.read = append(cfg.read, l.path)
			var f struct {
				Hooks map[string]any `json:"hooks"`
			}
			if err := json.Unmarshal(raw, &f); err != nil {
				cfg.checks = append(cfg.checks, Check{"config", Problem, fmt.Sprintf("%s does not parse (%v): Codex skips its hooks", l.path, err)})
				continue
			}
			events = f.Hooks
		} else {
			var doc map[string]any
			if l.path == userPath {
				doc = user
			} else if doc, err = readTOML(cfg, l.path, nil); err != nil {
				return nil, err
			}
			if doc == nil {
				continue
			}
			events, _ = doc["hooks"].(map[string]any)
		}
		groups, _ := events["PreToolUse"].([]any)
		if len(groups) > 0 && l.project && !trusted {
			cfg.checks = append(cfg.checks, Check{"project trusted", Problem, fmt.Sprintf(
				"Codex ignores %s: the project %s is not trusted. Trust it when Codex asks, run `codex exec --trust` once in it, or add [projects.%s] trust_level = \"trusted\" to %s",
				l.path, root, tomlKey(root), userPath)})
			continue
		}
		for gi, g := range groups {
			group, _ := g.(map[string]any)
			handlers, _ := group["hooks"].([]any)
			var matcher *string
			if m, ok := group["matcher"].(string); ok {
				matcher = &m
			}
			for hi, hd := range handlers {
				handler, _ := hd.(map[string]any)
				if handler["type"] != "command" {
					continue
				}
				command, _ := handler["command"].(string)
				if strings.TrimSpace(command) == "" {
					continue
				}
				identity, timeout := codexIdentity(matcher, handler)
				h := hook{
					source: l.path, key: fmt.Sprintf("%s:pre_tool_use:%d:%d", l.path, gi, hi), managed: l.managed, event: "PreToolUse",
					typ: "command", matcher: matcher, command: command, timeout: time.Duration(timeout) * time.Second,
					hash: codexHash(identity),
				}
				st := state.Hooks.State[h.key]
				h.runs = codexTrust(h, st.Enabled, st.TrustedHash, userPath)
				cfg.hooks = append(cfg.hooks, h)
			}
		}
	}
	return cfg, nil
}

// codexTrust is Codex's verdict on running a hook: managed hooks run,
// others need a trust record whose hash is the hook's current one.
func codexTrust(h hook, enabled *bool, trustedHash, userPath string) *Check {
	current := h.hash
	rerun := fmt.Sprintf("Open /hooks in an interactive `codex` and trust it (each edit of the hook's command line, timeout or matcher untrusts it), "+
		"or record what /hooks records, once you have reviewed the hook, as these two lines in %[3]s (Codex %[4]s's hash):\n\n    [hooks.state.%[1]s]\n    trusted_hash = %[2]q\n\n"+
		"or install it as a managed hook, or pass --dangerously-bypass-hook-trust to a codex exec whose hooks you control",
		tomlKey(h.key), current, userPath, codexVersionOfTrustHashing)
	switch {
	case h.managed:
		return &Check{"trusted", OK, "a managed hook: Codex runs it without a trust record"}
	case enabled != nil && !*enabled:
		return &Check{"trusted", Problem, fmt.Sprintf("the hook is turned off ([hooks.state.%s] enabled = false in %s): Codex skips it; turn it on in /hooks", tomlKey(h.key), userPath)}
	case trustedHash == "":
		return &Check{"trusted", Problem, fmt.Sprintf("Codex has no trust record for this hook ([hooks.state.%s] in %s), so it skips it in silence. %s", tomlKey(h.key), userPath, rerun)}
	case trustedHash != current:
		return &Check{"trusted", Problem, fmt.Sprintf("the hook's trust record (%s) is not its current hash as Codex %s computes it: the hook was edited after it was trusted, and Codex skips it in silence. %s",
			trustedHash, codexVersionOfTrustHashing, rerun)}
	}
	return &Check{"trusted", OK, fmt.Sprintf("trusted: the record in %s matches the hook's hash as Codex %s computes it (%s)", userPath, codexVersionOfTrustHashing, current)}
}

// codexIdentity is what Codex hashes to key its trust to a hook: the event
// and the hook's one matcher group, holding only this handler, with the
// handler's fields as Codex normalises them — the timeout always set
// (default 600 s, at least 1), async always set, optional fields only when
// given, the context limit only when not its default. It returns the
// timeout Codex runs the hook with, in seconds.
func codexIdentity(matcher *string, handler map[string]any) (map[string]any, int64) {
	timeout := int64(codexDefaultTimeout)
	if t, ok := handler["timeout"].(int64); ok {
		timeout = max(t, 1)
	} else if t, ok := handler["timeout"].(float64); ok { // from hooks.json
		timeout = max(int64(t), 1)
	}
	async, _ := handler["async"].(bool)
	h := map[string]any{"type": "command", "command": handler["command"], "timeout": timeout, "async": async}
	if s, ok := handler["statusMessage"].(string); ok {
		h["statusMessage"] = s
	}
	switch n := handler["additionalContextLimit"].(type) {
	case int64:
		if n != codexDefaultContextLimit {
			h["additionalContextLimit"] = n
		}
	case float64:
		if int64(n) != codexDefaultContextLimit {
			h["additionalContextLimit"] = int64(n)
		}
	}
	id := map[string]any{"event_name": "pre_tool_use", "hooks": []any{h}}
	if matcher != nil {
		id["matcher"] = *matcher
	}
	return id, timeout
}

// codexHash is Codex's version_for_toml of a hook identity: the value as
// JSON with every object's keys sorted and no spaces, strings escaped as
// serde_json escapes them, then SHA-256.
func codexHash(v any) string {
	var b strings.Builder
	canonicalJSON(&b, v)
	sum := sha256.Sum256([]byte(b.String()))
	return "sha256:" + hex.EncodeToString(sum[:])
}

// joinJSON writes n members between open and close, comma separated.
func joinJSON(b *strings.Builder, open, close byte, n int, member func(i int)) {
	b.WriteByte(open)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		member(i)
	}
	b.WriteByte(close)
}

func canonicalJSON(b *strings.Builder, v any) {
	switch v := v.(type) {
	case map[string]any:
		keys := slices.Sorted(maps.Keys(v))
		joinJSON(b, '{', '}', len(keys), func(i int) {
			jsonString(b, keys[i])
			b.WriteByte(':')
			canonicalJSON(b, v[keys[i]])
		})
	case []any:
		joinJSON(b, '[', ']', len(v), func(i int) { canonicalJSON(b, v[i]) })
	case string:
		jsonString(b, v)
	case bool:
		fmt.Fprint(b, v)
	case int64:
		fmt.Fprint(b, v)
	default:
		b.WriteString("null")
	}
}

// jsonString escapes as serde_json does: quote, backslash and control
// characters only, with \b \f \n \r \t and otherwise \u00xx.
func jsonString(b *strings.Builder, s string) {
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\b':
			b.WriteString(`\b`)
		case '\f':
			b.WriteString(`\f`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		default:
			if r < 0x20 {
				fmt.Fprintf(b, `\u%04x`, r)
			} else {
				b.WriteRune(r)
			}
		}
	}
	b.WriteByte('"')
}

// readTOML reads a TOML file into a generic document, and into typed when
// not nil; nil when absent. A file that does not parse is reported, since
// Codex refuses to start on it.
func readTOML(cfg *config, path string, typed any) (map[string]any, error) {
	raw, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("cannot read %s: %w", path, err)
	}
	cfg.read = append(cfg.read, path)
	var doc map[string]any
	err = toml.Unmarshal(raw, &doc)
	if err == nil && typed != nil {
		err = toml.Unmarshal(raw, typed)
	}
	if err != nil {
		cfg.checks = append(cfg.checks, Check{"config", Problem, fmt.Sprintf("%s is not a config Codex can read (%v): Codex will not start with it", path, err)})
		return nil, nil
	}
	return doc, nil
}

// projectRoot is the nearest folder from dir up holding one of markers;
// dir itself when none does.
func projectRoot(dir string, markers []string) string {
	for d := dir; ; d = filepath.Dir(d) {
		for _, m := range markers {
			if _, err := os.Stat(filepath.Join(d, m)); err == nil {
				return d
			}
		}
		if filepath.Dir(d) == d {
			return dir
		}
	}
}

// foldersDown lists root, then each folder below it down to dir.
func foldersDown(root, dir string) []string {
	var out []string
	for d := dir; ; d = filepath.Dir(d) {
		out = append(out, d)
		if d == root || filepath.Dir(d) == d {
			break
		}
	}
	slices.Reverse(out)
	return out
}

// tomlKey quotes a key for a TOML table header, as people write it.
func tomlKey(k string) string {
	b, _ := json.Marshal(k)
	return string(b)
}

// codexShell is how Codex runs a command hook's line: the user's shell with
// -c, not a login shell (Codex 0.169.0, driven: $SHELL when it exists,
// login_shell off, the session's folder), else /bin/sh.
func codexShell(o *Options, line string) []string {
	sh := o.getenv("SHELL")
	if fi, err := os.Stat(sh); sh == "" || err != nil || fi.IsDir() {
		sh = "/bin/sh"
	}
	return []string{sh, "-c", line}
}
