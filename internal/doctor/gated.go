package doctor

import (
	"fmt"
	"net/url"
	"os"
	"os/exec"
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
	if h.typ == "http" && !rt.httpHooks {
		if !mentionsGated(h.url) {
			return nil, false
		}
		return &wired{kind: "unread", checks: []Check{{"fails closed", Problem, "an HTTP hook: " + rt.name + " runs the tool when it cannot connect or times out; use a command hook, `gated-hook " + rt.id + " --url …`"}}}, true
	}
	if h.typ == "http" {
		return httpHook(o, rt, h)
	}
	src, what := h.command, "the command line"
	if h.script {
		raw, err := os.ReadFile(h.command)
		if err != nil {
			return &wired{kind: "unread", checks: []Check{{"fails closed", Problem, fmt.Sprintf("cannot read the hook script: %v", err)}}}, true
		}
		src, what = string(raw), "the hook script"
	}
	file, err := syntax.NewParser().Parse(strings.NewReader(src), "")
	if err == nil {
		if c, ok := findGated(o, file.Stmts); ok {
			if c.curl {
				return curlCommand(o, rt, h, c.args, c.raw, !c.kept), true
			}
			return gatedCommand(o, rt, h, c, what), true
		}
	}
	if mentionsGated(src) {
		return &wired{kind: "unread", checks: []Check{{"fails closed", Unverified,
			what + " mentions gated but is not one command doctor can read, nor one whose exit code and answer it can follow; run `gated-hook " + rt.id + " …` (or `gated hook " + rt.id + " …`) alone"}}}, true
	}
	return nil, false
}

func mentionsGated(line string) bool {
	return strings.Contains(line, "gated hook") || strings.Contains(line, "gated-hook") || strings.Contains(line, "/v1/hooks/")
}

// gatedCall is gated's hook command found on a line or in a script.
type gatedCall struct {
	args []string // as the shell expands them, `exec` dropped
	raw  []string // as written
	form string   // "gated hook" or "gated-hook"
	rest []string // the runtime and the flags
	curl bool     // a curl to /v1/hooks/ instead
	// kept: nothing the shell runs after gated can change its exit code or
	// add to its answer: gated is exec'd, or last, or followed only by
	// `|| exit 2`.
	kept bool
}

// findGated finds the command that calls gated among stmts, each a
// command or a chain of them joined by && and ||.
func findGated(o *Options, stmts []*syntax.Stmt) (*gatedCall, bool) {
	for si, st := range stmts {
		calls, ops, ok := flatten(st)
		if !ok {
			continue
		}
		for i, call := range calls {
			args, raw := words(o, call.Args), rawWords(call.Args)
			exec := len(args) > 1 && args[0] == "exec"
			if exec {
				args, raw = args[1:], raw[1:]
			}
			c := &gatedCall{args: args, raw: raw}
			switch form, rest, isGated := gatedArgs(args); {
			case isGated:
				c.form, c.rest = form, rest
			case isCurl(args) && curlURL(args) != "":
				c.curl = true
			default:
				continue
			}
			last := si == len(stmts)-1
			exit2 := i == len(calls)-2 && ops[i] == syntax.OrStmt && last && slices.Equal(words(o, calls[i+1].Args), []string{"exit", "2"})
			switch {
			case st.Negated || st.Background: // `! cmd` and `cmd &` lose the exit code
			case c.curl: // curl fails with its own exit codes, not 2
				c.kept = exit2
			case exec:
				c.kept = true
			case i == len(calls)-1:
				c.kept = last
			default:
				c.kept = exit2
			}
			return c, true
		}
	}
	return nil, false
}

// flatten lists the commands of a chain joined by && and ||, and the
// operators between them; ok is false for anything else (pipes,
// subshells, blocks).
func flatten(st *syntax.Stmt) ([]*syntax.CallExpr, []syntax.BinCmdOperator, bool) {
	switch c := st.Cmd.(type) {
	case *syntax.CallExpr:
		return []*syntax.CallExpr{c}, nil, len(c.Args) > 0
	case *syntax.BinaryCmd:
		if c.Op != syntax.AndStmt && c.Op != syntax.OrStmt {
			return nil, nil, false
		}
		xc, xo, xok := flatten(c.X)
		yc, yo, yok := flatten(c.Y)
		if !xok || !yok {
			return nil, nil, false
		}
		ops := append(append(xo, c.Op), yo...)
		return append(xc, yc...), ops, true
	}
	return nil, nil, false
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

// program is a command's program name without its folder (either
// slash, so a Windows path reads too) or .exe.
func program(arg string) string {
	return strings.TrimSuffix(arg[strings.LastIndexAny(arg, `/\`)+1:], ".exe")
}

// gatedArgs reports whether args run gated's command hook, `gated hook
// RUNTIME …` or the small `gated-hook RUNTIME …`, which take the same
// flags and answer the same way; rest is the runtime and the flags.
func gatedArgs(args []string) (form string, rest []string, ok bool) {
	switch {
	case len(args) >= 2 && program(args[0]) == "gated" && args[1] == "hook":
		return "gated hook", args[2:], true
	case len(args) >= 1 && program(args[0]) == "gated-hook":
		return "gated-hook", args[1:], true
	}
	return "", nil, false
}

func isCurl(args []string) bool {
	return len(args) > 0 && program(args[0]) == "curl"
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

// gatedCommand checks a `gated hook <runtime>` or `gated-hook <runtime>`
// command hook, which read their flags, and GATED_ variables for those not
// given, alike (internal/hookcmd).
func gatedCommand(o *Options, rt *runtime, h hook, c *gatedCall, what string) *wired {
	w := &wired{kind: c.form}
	flags := c.rest
	if len(flags) > 0 {
		flags = flags[1:]
	}
	setting := func(name string) (string, bool) {
		if v, ok := flagValue(flags, name); ok {
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
	var closed []string
	fail := func(s string) { w.checks = append(w.checks, Check{"fails closed", Problem, s}) }
	gatedTimeout := gatedDefaultTimeout
	if v, ok := setting("timeout"); ok {
		d, err := time.ParseDuration(v)
		if err != nil {
			fail(fmt.Sprintf("its timeout %q is not a duration: the hook blocks every call", v))
		}
		gatedTimeout = d
	}
	speaks := ""
	if len(c.rest) > 0 {
		speaks = c.rest[0]
	}
	self := fmt.Sprintf("`%s %s`", c.form, rt.id)
	switch {
	case speaks != rt.id:
		fail(fmt.Sprintf("the hook runs `%s %s`, which answers %s's hooks, not %s's: use %s", c.form, speaks, speaks, rt.name, self))
	case !c.kept && rt.printsFailure:
		fail(what + " runs something after gated that can print a second answer or change its exit code: " + rt.name + " reads one answer, so run gated with `exec`, or alone")
	case !c.kept:
		fail(what + " runs something after gated that can change its exit code: " + rt.name + " blocks a tool only on exit 2, so run " + self + " alone (or with `exec`)")
	case rt.printsFailure:
		closed = append(closed, self+" prints "+rt.name+"'s deny on every failure it sees")
	default:
		closed = append(closed, self+" exits 2 on every failure it sees")
	}
	if c.form == "gated-hook" && w.url == "" {
		fail("gated-hook has no --url (nor GATED_URL): it blocks every call; give it the gated to ask")
	}
	shadowFlag := slices.ContainsFunc(flags, func(a string) bool {
		return a == "--shadow" || a == "-shadow" || strings.HasPrefix(a, "--shadow=") || strings.HasPrefix(a, "-shadow=")
	})
	if v := o.getenv("GATED_SHADOW"); v != "" && !shadowFlag {
		if _, err := strconv.ParseBool(v); err != nil {
			fail(fmt.Sprintf("GATED_SHADOW=%q is not a boolean: the hook blocks every call", v))
		}
	}
	if shadowOn(flags, o.getenv("GATED_SHADOW")) {
		fail("the hook runs in shadow mode (--shadow): every call is allowed, and gated only says what it would have done")
	}
	shell := rt.shell
	if h.script {
		shell = posixShell // the script's own shell finds gated
	}
	if path, err := lookPath(o, shell, c.args[0]); err != nil {
		msg := fmt.Sprintf("%s cannot start the hook: %v", rt.name, err)
		if blocksOnFailure(rt, h) {
			msg += "; " + rt.name + " then blocks every tool call until it can"
		} else {
			msg += ", and then it runs every tool"
		}
		fail(msg)
	} else {
		closed = append(closed, "it starts ("+path+")")
	}
	switch {
	case blocksOnFailure(rt, h):
		closed = append(closed, blockedWhy(rt, h))
	case h.timeout == 0 && rt.blockSetting != "":
		fail(fmt.Sprintf("without %s, %s runs the tool when the hook crashes or times out, and its timeout for a hook is not documented: add %s", rt.blockSetting, rt.name, rt.blockSetting))
	case h.timeout == 0:
		w.checks = append(w.checks, Check{"timeout", Unverified, fmt.Sprintf("%s's timeout for a hook is not documented: if it is shorter than gated's --timeout (%s), a slow gated runs the tool", rt.name, gatedTimeout)})
	case h.timeout <= gatedTimeout:
		fail(fmt.Sprintf("%s's timeout for the hook (%s) is not above gated's --timeout (%s): when gated is slow, %s times the hook out and runs the tool; raise the hook's timeout",
			rt.name, h.timeout, gatedTimeout, rt.name))
	default:
		closed = append(closed, fmt.Sprintf("%s's timeout (%s) is above gated's --timeout (%s)", rt.name, h.timeout, gatedTimeout))
		if rt.blockSetting != "" {
			closed = append(closed, "(add "+rt.blockSetting+" to block also when the hook cannot start)")
		}
	}
	if !slices.ContainsFunc(w.checks, func(c Check) bool { return c.Name == "fails closed" }) {
		w.checks = append(w.checks, Check{"fails closed", OK, strings.Join(closed, "; ")})
	}
	w.checks = append(w.checks, pointsAt(o, w, h))
	return w
}

// blocksOnFailure reports whether the runtime blocks the tool when the
// hook cannot start or times out: always (Cline), or by a setting on the
// handler (Claude Code's onFailure, Cursor's failClosed, goose's
// on_failure).
func blocksOnFailure(rt *runtime, h hook) bool {
	return rt.failureBlocks || (rt.blockSetting != "" && h.onFailureBlock)
}

func blockedWhy(rt *runtime, h hook) string {
	if rt.failureBlocks {
		return rt.name + " blocks the tool if the hook cannot start, exits non-zero or times out"
	}
	return rt.blockSetting + " blocks the tool if the hook cannot start or times out"
}

// lookPath finds a program as the runtime's shell does, by asking that
// shell (a login shell, for Codex, may set its own PATH).
func lookPath(o *Options, shell func(*Options, string) []string, prog string) (string, error) {
	quoted, err := syntax.Quote(prog, syntax.LangPOSIX)
	if err != nil {
		return "", fmt.Errorf("%q cannot be a program name", prog)
	}
	argv := shell(o, "command -v -- "+quoted)
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
	switch {
	case rt.exitCoded():
		fails = append(fails, fmt.Sprintf("%s reads only the exit code, and curl exits 0 on gated's deny, so nothing is ever blocked: use `gated-hook %s`", rt.name, rt.id))
	case rt.printsFailure && !rt.failureBlocks:
		fails = append(fails, fmt.Sprintf("curl prints nothing when it fails, and %s runs the tool on a hook that prints no answer (older versions on any failure): use `gated-hook %s`, which prints a deny", rt.name, rt.id))
	case noExit2:
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
