package doctor

import (
	"fmt"
	"net/url"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"
)

// gatedDefaultTimeout is `gated hook`'s --timeout when none is given
// (client.DefaultTimeout).
const gatedDefaultTimeout = 2 * time.Second

// wired is how one hook reaches gated.
type wired struct {
	kind     string // "gated hook", "curl", "http", or "unread": a line doctor cannot read
	url      string // gated's base URL; empty: decides in-process
	tokenEnv string // the variable the token is read from
	checks   []Check
}

// gatedHook reports whether h calls gated, and how well.
func gatedHook(o *Options, rt *runtime, h hook) (*wired, bool) {
	if h.typ == "http" {
		return httpHook(o, rt, h)
	}
	line, err := syntax.NewParser().Parse(strings.NewReader(h.command), "")
	if err != nil || len(line.Stmts) != 1 {
		if mentionsGated(h.command) {
			return &wired{kind: "unread", checks: []Check{{"fails closed", Unverified,
				"the command line mentions gated but is not one command doctor can read; run `gated hook " + rt.id + " …` directly, which exits 2 on every failure"}}}, true
		}
		return nil, false
	}
	st := line.Stmts[0]
	// `! cmd` and `cmd &` lose the command's exit code.
	lost := st.Negated || st.Background
	switch c := st.Cmd.(type) {
	case *syntax.CallExpr:
		args := words(o, c.Args)
		if isGated(args) {
			return gatedCommand(o, rt, h, args, lost), true
		}
		if isCurl(args) && curlURL(args) != "" {
			return curlCommand(o, rt, h, args, rawWords(c.Args), true), true
		}
	case *syntax.BinaryCmd:
		x, xok := c.X.Cmd.(*syntax.CallExpr)
		y, yok := c.Y.Cmd.(*syntax.CallExpr)
		if !xok || !yok {
			break
		}
		args := words(o, x.Args)
		exit2 := !lost && c.Op == syntax.OrStmt && slices.Equal(words(o, y.Args), []string{"exit", "2"})
		if isGated(args) {
			return gatedCommand(o, rt, h, args, !exit2), true
		}
		if isCurl(args) && curlURL(args) != "" {
			return curlCommand(o, rt, h, args, rawWords(x.Args), !exit2), true
		}
	}
	if mentionsGated(h.command) {
		return &wired{kind: "unread", checks: []Check{{"fails closed", Unverified,
			"the command line mentions gated but doctor cannot tell whether it keeps gated's exit 2; run `gated hook " + rt.id + " …` directly"}}}, true
	}
	return nil, false
}

func mentionsGated(line string) bool {
	return strings.Contains(line, "gated hook") || strings.Contains(line, "/v1/hooks/")
}

// words expands a command's words as the shell would, with the
// environment doctor runs in; a word it cannot expand (a command
// substitution) is kept as written.
func words(o *Options, ws []*syntax.Word) []string {
	cfg := &expand.Config{Env: expand.FuncEnviron(o.getenv)}
	out := make([]string, len(ws))
	for i, w := range ws {
		s, err := expand.Literal(cfg, w)
		if err != nil {
			s = rawWords(ws[i : i+1])[0]
		}
		out[i] = s
	}
	return out
}

// rawWords are the words as written.
func rawWords(ws []*syntax.Word) []string {
	out := make([]string, len(ws))
	for i, w := range ws {
		var b strings.Builder
		_ = syntax.NewPrinter().Print(&b, w)
		out[i] = b.String()
	}
	return out
}

func isGated(args []string) bool {
	return len(args) >= 2 && strings.TrimSuffix(filepath.Base(args[0]), ".exe") == "gated" && args[1] == "hook"
}

func isCurl(args []string) bool {
	return len(args) > 0 && strings.TrimSuffix(filepath.Base(args[0]), ".exe") == "curl"
}

// flagValue returns the value of a --name or -name flag (as Go's flag
// package reads them: --name=v or --name v) and whether it was given.
func flagValue(args []string, name string) (string, bool) {
	for i, a := range args {
		for _, p := range []string{"--" + name, "-" + name} {
			if a == p && i+1 < len(args) {
				return args[i+1], true
			}
			if v, ok := strings.CutPrefix(a, p+"="); ok {
				return v, true
			}
		}
	}
	return "", false
}

// shadowOn reads the boolean --shadow as Go's flag package does (--shadow,
// --shadow=true), or GATED_SHADOW when the flag is not given.
func shadowOn(args []string, env string) bool {
	for _, a := range args {
		for _, p := range []string{"--shadow", "-shadow"} {
			if a == p {
				return true
			}
			if v, ok := strings.CutPrefix(a, p+"="); ok {
				on, _ := strconv.ParseBool(v)
				return on
			}
		}
	}
	on, _ := strconv.ParseBool(env)
	return on
}

// gatedCommand checks a `gated hook <runtime>` command hook. swallowed: the
// line runs something after it that may hide its exit code.
func gatedCommand(o *Options, rt *runtime, h hook, args []string, swallowed bool) *wired {
	w := &wired{kind: "gated hook"}
	setting := func(name string) (string, bool) {
		if v, ok := flagValue(args[2:], name); ok {
			return v, true
		}
		env := "GATED_" + strings.ToUpper(strings.ReplaceAll(name, "-", "_"))
		v := o.getenv(env)
		return v, v != ""
	}
	w.url, _ = setting("url")
	w.tokenEnv = "GATED_TOKEN"
	if v, ok := setting("token-env"); ok {
		w.tokenEnv = v
	}
	gatedTimeout := gatedDefaultTimeout
	if v, ok := setting("timeout"); ok {
		if d, err := time.ParseDuration(v); err == nil {
			gatedTimeout = d
		}
	}
	var closed []string
	fail := func(s string) { w.checks = append(w.checks, Check{"fails closed", Problem, s}) }
	speaks := ""
	if len(args) > 2 {
		speaks = args[2]
	}
	switch {
	case speaks != rt.id:
		fail(fmt.Sprintf("the hook runs `gated hook %s`, which answers %s's hooks, not %s's: use `gated hook %s`", speaks, speaks, rt.name, rt.id))
	case swallowed:
		fail("the command line runs something after gated that can change its exit code: " + rt.name + " blocks a tool only on exit 2, so run `gated hook " + rt.id + " …` alone")
	default:
		closed = append(closed, "`gated hook "+rt.id+"` exits 2 on every failure it sees")
	}
	if shadowOn(args[2:], o.getenv("GATED_SHADOW")) {
		fail("the hook runs in shadow mode (--shadow): every call is allowed, and gated only says what it would have done")
	}
	if path, err := lookPath(o, rt, args[0]); err != nil {
		msg := fmt.Sprintf("%s cannot start the hook: %v", rt.name, err)
		if rt.onFailure && h.onFailureBlock {
			msg += "; onFailure \"block\" blocks every tool call until it can"
		} else {
			msg += ", and then it runs every tool"
		}
		fail(msg)
	} else {
		closed = append(closed, "it starts ("+path+")")
	}
	switch {
	case rt.onFailure && h.onFailureBlock:
		closed = append(closed, `onFailure "block" blocks the tool if the hook cannot start or times out`)
	case h.timeout <= gatedTimeout:
		fail(fmt.Sprintf("%s's timeout for the hook (%s) is not above gated's --timeout (%s): when gated is slow, %s times the hook out and runs the tool; raise the hook's timeout",
			rt.name, h.timeout, gatedTimeout, rt.name))
	default:
		closed = append(closed, fmt.Sprintf("%s's timeout (%s) is above gated's --timeout (%s)", rt.name, h.timeout, gatedTimeout))
		if rt.onFailure {
			closed = append(closed, `(add onFailure "block" to block also when the hook cannot start)`)
		}
	}
	if !slices.ContainsFunc(w.checks, func(c Check) bool { return c.Name == "fails closed" }) {
		w.checks = append(w.checks, Check{"fails closed", OK, strings.Join(closed, "; ")})
	}
	w.checks = append(w.checks, pointsAt(o, w, h))
	return w
}

// lookPath finds a program as the runtime's shell does, by asking that
// shell (a login shell, for Codex, may set its own PATH).
func lookPath(o *Options, rt *runtime, prog string) (string, error) {
	quoted, err := syntax.Quote(prog, syntax.LangPOSIX)
	if err != nil {
		return "", fmt.Errorf("%q cannot be a program name", prog)
	}
	argv := rt.shell(o, "command -v -- "+quoted)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir, cmd.Env = o.Dir, o.Environ
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("%s finds no %s (on its PATH)", strings.Join(argv[:len(argv)-1], " "), prog)
	}
	return strings.TrimSpace(string(out)), nil
}

// curlCommand checks a hook that posts to gated with curl, as NeMo
// Guardrails' hooks server documents for Codex (curl … || exit 2).
func curlCommand(o *Options, rt *runtime, h hook, args, raw []string, noExit2 bool) *wired {
	target := curlURL(args)
	base, speaks, _ := strings.Cut(target, "/v1/hooks/")
	w := &wired{kind: "curl", url: strings.TrimSuffix(base, "/")}
	for i, a := range args {
		if (a == "-H" || a == "--header") && i+1 < len(raw) {
			if m := bearerVar.FindStringSubmatch(raw[i+1]); m != nil {
				w.tokenEnv = m[1]
			}
		}
	}
	var fails []string
	if speaks = strings.SplitN(speaks, "?", 2)[0]; speaks != rt.id {
		fails = append(fails, fmt.Sprintf("it posts to /v1/hooks/%s, which answers %s's hooks: use /v1/hooks/%s", speaks, speaks, rt.id))
	}
	if noExit2 {
		fails = append(fails, "curl's failures (no connection, a timeout) are not turned into exit 2: end the line with `|| exit 2`")
	}
	if !curlFails(args) {
		fails = append(fails, "curl without --fail exits 0 on a non-2xx answer, and "+rt.name+" runs the tool: add --fail")
	}
	if !slices.ContainsFunc(args, func(a string) bool { return a == "-m" || a == "--max-time" || strings.HasPrefix(a, "--max-time=") }) {
		fails = append(fails, "curl has no --max-time, so "+rt.name+"'s own timeout, which runs the tool, ends a slow call: add --max-time below the hook's timeout")
	}
	if len(fails) > 0 {
		w.checks = append(w.checks, Check{"fails closed", Problem, strings.Join(fails, "; ")})
	} else {
		w.checks = append(w.checks, Check{"fails closed", OK, "curl --fail … || exit 2 exits 2 on every failure"})
	}
	w.checks = append(w.checks, pointsAt(o, w, h))
	return w
}

// bearerVar finds the variable a header's bearer token comes from.
var bearerVar = regexp.MustCompile(`Bearer\s+\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?`)

func curlURL(args []string) string {
	for _, a := range args {
		if strings.Contains(a, "/v1/hooks/") && (strings.HasPrefix(a, "http://") || strings.HasPrefix(a, "https://")) {
			return a
		}
	}
	return ""
}

func curlFails(args []string) bool {
	for _, a := range args {
		if a == "--fail" || a == "--fail-with-body" {
			return true
		}
		if strings.HasPrefix(a, "-") && !strings.HasPrefix(a, "--") && strings.ContainsRune(a, 'f') {
			return true
		}
	}
	return false
}

// httpHook checks an HTTP hook posting to gated's /v1/hooks/<runtime>.
func httpHook(o *Options, rt *runtime, h hook) (*wired, bool) {
	u, err := url.Parse(h.url)
	if err != nil || !strings.Contains(u.Path, "/v1/hooks/") {
		return nil, false
	}
	base, speaks, _ := strings.Cut(u.Path, "/v1/hooks/")
	w := &wired{kind: "http", url: strings.TrimSuffix((&url.URL{Scheme: u.Scheme, Host: u.Host, Path: base}).String(), "/")}
	var fails []string
	if speaks != rt.id {
		fails = append(fails, fmt.Sprintf("it posts to /v1/hooks/%s, which answers %s's hooks: use /v1/hooks/%s", speaks, speaks, rt.id))
	}
	if !h.onFailureBlock {
		fails = append(fails, rt.name+` runs the tool when an HTTP hook cannot connect, times out or gets a non-2xx answer: add "onFailure": "block" (Claude Code 2.1.295 or later)`)
	}
	for name, v := range h.headers {
		for _, m := range envRef.FindAllStringSubmatch(v, -1) {
			if !slices.Contains(h.envVars, m[1]) {
				fails = append(fails, fmt.Sprintf("header %s uses $%s, which is not in allowedEnvVars, so %s sends it empty", name, m[1], rt.name))
			} else if strings.EqualFold(name, "Authorization") {
				w.tokenEnv = m[1]
			}
		}
	}
	if q := u.Query().Get("shadow_mode"); q == "true" {
		fails = append(fails, "the URL asks for shadow mode (?shadow_mode=true): every call is allowed")
	}
	if len(fails) > 0 {
		w.checks = append(w.checks, Check{"fails closed", Problem, strings.Join(fails, "; ")})
	} else {
		w.checks = append(w.checks, Check{"fails closed", OK, `gated answers a 200 deny on every failure of its own, and onFailure "block" blocks the rest`})
	}
	w.checks = append(w.checks, pointsAt(o, w, h))
	return w, true
}

var envRef = regexp.MustCompile(`\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?`)

// pointsAt names the gated the hook asks and where its token comes from,
// never the token.
func pointsAt(o *Options, w *wired, h hook) Check {
	if w.url == "" {
		return Check{"points at", OK, "no --url: the hook decides in-process with its --catalog and --policy, and nothing is recorded in an audit"}
	}
	token := "no token"
	if w.tokenEnv != "" {
		state := "set"
		if o.getenv(w.tokenEnv) == "" {
			state = "not set here: fine only for a gated without --tokens"
		}
		token = fmt.Sprintf("the token from $%s (%s)", w.tokenEnv, state)
	}
	return Check{"points at", OK, fmt.Sprintf("%s, with %s", w.url, token)}
}
