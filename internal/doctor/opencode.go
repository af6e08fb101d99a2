package doctor

import (
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// OpenCode is gated's only runtime whose hook is not a command nor a URL
// but a plugin, @gatedhq/gated/opencode (sdk/typescript), that OpenCode
// loads into its own process: its tool.execute.before throws, blocking the
// tool, on every answer but allow and on every failure of its own.
// doctor cannot load it as OpenCode does, so it checks that the plugin is
// listed and loadable, and posts the canary to the gated the plugin's
// options (or its defaults) point at, as the plugin would: that proves the
// gated, the token and OpenCode's hook endpoint, not that OpenCode runs the
// plugin (`runs` says so).

// openCodeFiles are OpenCode's configuration files, lowest precedence
// first: the global ones ($XDG_CONFIG_HOME/opencode or ~/.config/opencode),
// $OPENCODE_CONFIG, then the project's, from the repository root (the
// nearest folder holding .git) down to the folder OpenCode starts in,
// each folder's opencode.json(c) and .opencode/opencode.json(c).
func openCodeFiles(o *Options) []string {
	files := []string{}
	for _, name := range []string{"config.json", "opencode.json", "opencode.jsonc"} {
		files = append(files, filepath.Join(openCodeHome(o), name))
	}
	if p := o.getenv("OPENCODE_CONFIG"); p != "" {
		files = append(files, p)
	}
	var dirs []string
	for dir := o.Dir; ; dir = filepath.Dir(dir) {
		dirs = append(dirs, dir)
		if _, err := os.Stat(filepath.Join(dir, ".git")); err == nil || filepath.Dir(dir) == dir {
			break
		}
	}
	slices.Reverse(dirs)
	for _, dir := range dirs {
		for _, name := range []string{"opencode.json", "opencode.jsonc", filepath.Join(".opencode", "opencode.json"), filepath.Join(".opencode", "opencode.jsonc")} {
			files = append(files, filepath.Join(dir, name))
		}
	}
	return files
}

func openCodeHome(o *Options) string {
	if x := o.getenv("XDG_CONFIG_HOME"); x != "" {
		return filepath.Join(x, "opencode")
	}
	return filepath.Join(o.getenv("HOME"), ".config", "opencode")
}

// loadOpenCode finds gated's plugin among the plugin lists of every
// configuration file (OpenCode adds them up; "plugin", or "plugins" in
// newer versions, each entry a spec, [spec, options] or {package,
// options}) and among the files of the plugin folders that re-export it.
func loadOpenCode(o *Options, rt *runtime) (*config, error) {
	cfg := &config{}
	for _, p := range openCodeFiles(o) {
		doc, ok := cfg.readFile(p, rt, "configuration", ": OpenCode does not start with it")
		if !ok {
			continue
		}
		for _, key := range []string{"plugin", "plugins"} {
			list, _ := doc[key].([]any)
			for i, e := range list {
				spec, opts := pluginEntry(e)
				if !isGatedPlugin(spec) {
					continue
				}
				cfg.hooks = append(cfg.hooks, pluginHook(o, p, fmt.Sprintf("%s[%d]", key, i), spec, opts))
			}
		}
	}
	for _, dir := range []string{openCodeHome(o), filepath.Join(o.Dir, ".opencode")} {
		for _, sub := range []string{"plugin", "plugins"} {
			for _, ext := range []string{"js", "mjs", "ts"} {
				files, _ := filepath.Glob(filepath.Join(dir, sub, "*."+ext))
				for _, f := range files {
					raw, err := os.ReadFile(f)
					if err != nil || !strings.Contains(string(raw), "@gatedhq/gated/opencode") {
						continue
					}
					cfg.read = append(cfg.read, f)
					h := pluginHook(o, f, "", "@gatedhq/gated/opencode", nil)
					h.runs = &Check{"runs", Unverified, "a plugin file that re-exports @gatedhq/gated/opencode: OpenCode loads it only when the package is installed beside it (in " + dir + "), which doctor cannot see; the plugin's options are its defaults"}
					cfg.hooks = append(cfg.hooks, h)
				}
			}
		}
	}
	return cfg, nil
}

// pluginEntry reads one entry of a plugin list.
func pluginEntry(e any) (string, map[string]any) {
	switch v := e.(type) {
	case string:
		return v, nil
	case []any:
		if len(v) > 0 {
			spec, _ := v[0].(string)
			var opts map[string]any
			if len(v) > 1 {
				opts, _ = v[1].(map[string]any)
			}
			return spec, opts
		}
	case map[string]any:
		opts, _ := v["options"].(map[string]any)
		return str(v, "package"), opts
	}
	return "", nil
}

// isGatedPlugin: the npm package's OpenCode entry, or its built file
// (sdk/typescript/dist/opencode.js) by path.
func isGatedPlugin(spec string) bool {
	return strings.Contains(spec, "@gatedhq/gated") || strings.HasSuffix(filepath.ToSlash(spec), "sdk/typescript/dist/opencode.js")
}

// pluginHook is gated's plugin as doctor checks it: a POST of OpenCode's
// hook input to /v1/hooks/opencode on the plugin's gated, with its token.
func pluginHook(o *Options, source, key, spec string, opts map[string]any) hook {
	h := hook{source: source, key: key, event: "tool.execute.before", typ: "plugin", command: spec, timeout: 2 * time.Second, headers: map[string]string{}}
	base, _ := opts["url"].(string)
	if base == "" {
		base = o.getenv("GATED_URL")
	}
	if base == "" {
		base = "http://127.0.0.1:8080"
	}
	h.url = strings.TrimSuffix(base, "/") + "/v1/hooks/opencode"
	if t, ok := opts["token"].(string); ok {
		h.headers["Authorization"], h.tokenInline = "Bearer "+t, true
	} else {
		h.headers["Authorization"], h.envVars = "Bearer ${GATED_TOKEN}", []string{"GATED_TOKEN"}
	}
	if ms, ok := opts["timeoutMs"].(float64); ok && ms > 0 {
		h.timeout = time.Duration(ms) * time.Millisecond
	}
	// A file spec must name a file OpenCode can load; a package OpenCode
	// installs at start-up, out of doctor's sight.
	path := spec
	if u, err := url.Parse(spec); err == nil && u.Scheme == "file" {
		path = u.Path
	} else if !strings.HasPrefix(spec, ".") && !filepath.IsAbs(spec) {
		h.runs = &Check{"runs", Unverified, "OpenCode installs the package " + spec + " when it starts, which doctor cannot see: check that it bites (ask OpenCode to `cat .env` in a scratch folder)"}
		return h
	}
	if !filepath.IsAbs(path) {
		path = filepath.Join(filepath.Dir(source), path)
	}
	if _, err := os.Stat(path); err != nil {
		h.runs = &Check{"runs", Problem, fmt.Sprintf("OpenCode cannot load the plugin (%v), and a plugin it cannot load gates nothing: build it (cd sdk/typescript && npm run build) or fix the path", err)}
	} else {
		h.runs = &Check{"runs", Unverified, "OpenCode loads " + path + " into its own process, which doctor cannot do: the canary proves the gated and token the plugin uses, not that OpenCode runs it; check that it bites (ask OpenCode to `cat .env` in a scratch folder)"}
	}
	return h
}

// pluginWired checks gated's OpenCode plugin: it fails closed by itself,
// and points at the gated its options say.
func pluginWired(o *Options, rt *runtime, h hook) *wired {
	w := &wired{kind: "plugin", url: strings.TrimSuffix(h.url, "/v1/hooks/opencode")}
	if !h.tokenInline {
		w.tokenEnv = "GATED_TOKEN"
	}
	w.checks = append(w.checks, Check{"fails closed", OK, fmt.Sprintf("the plugin throws on every answer but allow and on every failure of its own (gated down, slower than its timeoutMs %s, a non-2xx or unreadable answer, a bad option), and a throwing tool.execute.before blocks the tool in %s", h.timeout, rt.name)})
	c := pointsAt(o, w, h)
	if h.tokenInline {
		c.Detail = strings.Replace(c.Detail, "no token", "the token written in the plugin's options (not shown)", 1)
	}
	w.checks = append(w.checks, c)
	return w
}
