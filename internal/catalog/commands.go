package catalog

import (
	"path"
	"regexp"
	"slices"
	"strings"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/gatedhq/gated/internal/pathset"
	"github.com/gatedhq/gated/internal/route"
	"github.com/gatedhq/gated/internal/shell"
)

// Command rules: a tool whose argument is a command line (Bash, Codex's
// shell) says where it is in metadata.gated.command_line, and its rules
// match the simple commands internal/shell reads from it, after quote
// removal and unwrapping, instead of the raw text. The line is parsed once
// per decision (Call), whatever the number of rules. Matchers are checked
// at load in commandcompile.go.

// Rule kinds of command rules, as Rule.Kind shows them.
const (
	ruleCommand = "command"
	ruleFiles   = "files"
)

// Where an argument may lead, for args' path matcher.
const (
	pathOutsideWorkspace = "outside_workspace"
	pathWorkspaceRoot    = "workspace_root"
)

// CommandLine is TOOL.md's metadata.gated.command_line: the argument that
// holds a command line, the route of a line gated cannot read, and the
// commands that only read.
type CommandLine struct {
	Pointer string          `json:"pointer"`
	Dynamic route.Route     `json:"dynamic"`
	Reads   []*CommandMatch `json:"reads,omitempty"`

	tokens []string
}

// CommandMatch matches one simple command of a line: a command rule's
// `command`, or one entry of command_line.reads.
type CommandMatch struct {
	Programs     []string      `json:"program,omitempty"`
	Subcommands  []string      `json:"subcommand,omitempty"`
	ValueOptions []string      `json:"options_with_value,omitempty"`
	Flags        [][]string    `json:"flags,omitempty"`
	WithoutFlags []string      `json:"without_flags,omitempty"`
	Args         *ArgMatch     `json:"args,omitempty"`
	PipedFrom    *CommandMatch `json:"piped_from,omitempty"`
	UnlessCwd    []string      `json:"unless_cwd,omitempty"`
	Recursive    bool          `json:"recursive,omitempty"`
}

// ArgMatch matches words: a command's arguments (args) or the files a
// line's redirections and source name (a files rule). Any word that
// matches any of its matchers matches.
type ArgMatch struct {
	Glob   []string `json:"glob,omitempty"`
	Regex  []string `json:"regex,omitempty"`
	Prefix []string `json:"prefix,omitempty"`
	Path   []string `json:"path,omitempty"` // outside_workspace, workspace_root

	regexes []*regexp.Regexp
	globs   *pathset.Set // the globs other than SecretPaths
	secrets bool         // SecretPaths is among the globs
}

// Call is a view applied to one call's arguments: the command line read
// once, and the view whose floors apply.
type Call struct {
	View      *View
	Workspace string
	line      *shell.Line               // nil: the tool has no command line, or it is not a string
	read      *View                     // the tool as a risk-0 read, when the line only reads
	stages    map[stagesKey]map[int]int // firstStages, per matcher
}

// place is where a line's paths are judged: the workspace, and the
// directory relative paths start from (none once the line changes
// directory: cd .. && rm -rf project).
type place struct{ ws, base string }

func (c *Call) place() place {
	p := place{ws: c.Workspace, base: c.Workspace}
	if c.line != nil && c.line.Chdir {
		p.base = ""
	}
	return p
}

// Call reads args for the view's rules. workspace is the directory the
// agent works in (a hook's cwd); with none, no path is inside it.
func (v *View) Call(args map[string]any, workspace string) *Call {
	c := &Call{View: v, Workspace: cleanWorkspace(workspace)}
	if v == nil || v.CommandLine == nil {
		return c
	}
	if s, ok := valueAt(v.CommandLine.tokens, args).(string); ok {
		c.line = shell.Parse(s)
		if v.readOnly(c) {
			read := *v
			read.RiskLevel, read.Approval, read.Mutates = 0, approvalAuto, nil
			c.read = &read
		}
	}
	return c
}

// Read reports whether the call's command line only reads, inside the
// workspace: its floors are those of a risk-0 read.
func (c *Call) Read() bool { return c.read != nil }

// Floor is the view whose floors apply to the call: the tool's, or for a
// line that only reads, the tool's as a risk-0 read that needs no approval.
func (c *Call) Floor() *View {
	if c.read == nil {
		return c.View
	}
	return c.read
}

func cleanWorkspace(ws string) string {
	if !path.IsAbs(ws) {
		return "" // not a POSIX path: nothing is inside it
	}
	return path.Clean(ws)
}

// valueAt is the value at a pointer's tokens, nil when there is none.
func valueAt(tokens []string, args map[string]any) any {
	var cur any = args
	for _, tok := range tokens {
		switch c := cur.(type) {
		case map[string]any:
			var ok bool
			if cur, ok = c[tok]; !ok {
				return nil
			}
		case []any:
			i, isIndex := arrayIndex(tok)
			if !isIndex || i >= len(c) {
				return nil
			}
			cur = c[i]
		default:
			return nil
		}
	}
	return cur
}

// dynamicFinding is shell_command_dynamic for a line gated could not read.
func (c *Call) dynamicFinding() (route.Finding, bool) {
	if c.line == nil || c.line.Dynamic == "" {
		return route.Finding{}, false
	}
	cl := c.View.CommandLine
	return finding(route.CodeShellCommandDynamic, cl.Dynamic, true, "the command line at %s could not be read whole (%s), so gated cannot tell what it runs (%s)",
		cl.Pointer, c.line.Dynamic, c.View.Source), true
}

// commandFires reports whether a command or files rule fires on the call.
func (r *Rule) commandFires(c *Call) bool {
	if c.line == nil {
		return false
	}
	switch r.Kind {
	case ruleFiles:
		return slices.ContainsFunc(c.line.Files, func(f shell.File) bool { return r.Files.matches(f.Word, c.place()) })
	case ruleCommand:
		for i := range c.line.Commands {
			if r.Command.matches(c, i, false) {
				return true
			}
		}
	}
	return false
}

// readOnly reports whether every command of the line matches a reads
// entry and names only paths inside the workspace, no redirection
// writes, and no variable is set for what follows (PATH=.; ls). It proves a read; anything it cannot tell is not one.
func (v *View) readOnly(c *Call) bool {
	l, at := c.line, c.place()
	if l.Dynamic != "" || l.Assigns || c.Workspace == "" || len(l.Commands) == 0 || len(v.CommandLine.Reads) == 0 {
		return false
	}
	for _, f := range l.Files {
		if f.Static && f.Text == "/dev/null" {
			continue
		}
		if f.Write || !at.inside(f.Word) {
			return false
		}
	}
	for i, cmd := range l.Commands {
		if cmd.Env || !systemProgram(cmd.Path) || !slices.ContainsFunc(v.CommandLine.Reads, func(m *CommandMatch) bool { return m.matches(c, i, true) }) {
			return false
		}
		for _, arg := range cmd.Args {
			for _, w := range arg.Words() { // {-f/etc/x,a} is -f/etc/x and a
				if val, ok := optionValue(w, true); ok {
					w = val
				} else if w.Static && !w.Glob && strings.HasPrefix(w.Text, "-") {
					continue // a flag, or "-" for standard input
				}
				if !at.inside(w) {
					return false
				}
			}
		}
	}
	return true
}

// systemDirs are where a read-only program named by its path is trusted
// to be the one its name says: not ./cat, which the agent may have written.
var systemDirs = []string{"/bin", "/usr/bin", "/usr/local/bin", "/opt/homebrew/bin", "/sbin", "/usr/sbin"}

// systemProgram reports whether a command word that names a file ("" for
// one the shell looks up) is in a system directory.
func systemProgram(p string) bool {
	return p == "" || path.IsAbs(p) && slices.Contains(systemDirs, path.Dir(path.Clean(p)))
}

// optionValue is the value an option word carries: --file=x, -f=x and,
// attached when short, -fx (attached counts only when short is set: a
// cluster of flags, -rf, reads the same). ok is false for a word that is
// not an option with a value.
func optionValue(w shell.Word, short bool) (shell.Word, bool) {
	if !w.Static || w.Glob || !strings.HasPrefix(w.Text, "-") {
		return w, false
	}
	if _, v, ok := strings.Cut(w.Text, "="); ok {
		w.Text = v
		return w, true
	}
	if short && !strings.HasPrefix(w.Text, "--") && len(w.Text) > 2 {
		w.Text = w.Text[2:]
		return w, true
	}
	return w, false
}

// resolve is where a static path leads, cleaned; ok is false when that
// cannot be known (~, a relative path with no base).
func (at place) resolve(p string) (string, bool) {
	switch {
	case strings.HasPrefix(p, "~"):
		return "", false
	case path.IsAbs(p):
		return path.Clean(p), true
	case at.base == "":
		return "", false
	}
	return path.Join(at.base, p), true
}

// inside reports whether a word surely names a path in the workspace, as
// pathset judges it (every reading, ~ and $HOME outside). A word an
// expansion builds is not known to; a glob is judged as written, unless its
// last part could match "..".
func (at place) inside(w shell.Word) bool {
	// each word braces make must be: src/{a,b}.go
	return !slices.ContainsFunc(w.Words(), func(e shell.Word) bool { return !at.inside1(e) })
}

// inside1 is inside for a word the shell does not split.
func (at place) inside1(w shell.Word) bool {
	ws := at.ws
	if !w.Static || ws == "" {
		return false
	}
	if w.Glob {
		if last := path.Base(w.Text); strings.HasPrefix(last, ".") {
			if m, _ := path.Match(last, ".."); m {
				return false
			}
		}
	}
	if at.base == "" && !path.IsAbs(w.Text) {
		return false // relative to a directory the line changed to
	}
	return !pathset.Outside(w.Text, ws)
}

// matches reports whether command i of the call's line matches. prove is for reads: a
// word that might be anything then counts against the match; for a rule
// (prove false) it counts for it, so a rule fires on what it cannot rule
// out.
func (m *CommandMatch) matches(call *Call, i int, prove bool) bool {
	c, at := &call.line.Commands[i], call.place()
	if len(m.Programs) > 0 && !slices.Contains(m.Programs, c.Name) {
		return false
	}
	if m.Recursive && !c.Recursive {
		return false
	}
	if len(m.UnlessCwd) > 0 && at.base != "" && slices.ContainsFunc(m.UnlessCwd, func(g string) bool { return doublestar.MatchUnvalidated(g, at.base) }) {
		return false
	}
	opts, operands := m.split(c.Args)
	if len(m.Subcommands) > 0 {
		if len(operands) == 0 {
			return false
		}
		sub := operands[0]
		if sub.Static && !sub.Glob && !slices.Contains(m.Subcommands, sub.Text) || (!sub.Static || sub.Glob) && prove {
			return false
		}
		operands = operands[1:]
	}
	for _, group := range m.Flags {
		if !slices.ContainsFunc(opts, func(w shell.Word) bool { return hasFlag(w, group, !prove) }) {
			return false
		}
	}
	if len(m.WithoutFlags) > 0 && slices.ContainsFunc(opts, func(w shell.Word) bool { return hasFlag(w, m.WithoutFlags, prove) }) {
		return false
	}
	// an option's value is matched attached too (curl -d@.env, -T.env):
	// a cluster of flags (-rf) read as -r with value f matches nothing a
	// rule names
	if m.Args != nil && !slices.ContainsFunc(operands, func(w shell.Word) bool { return m.Args.matches(w, at) }) &&
		!slices.ContainsFunc(opts, func(w shell.Word) bool { v, ok := optionValue(w, true); return ok && m.Args.matches(v, at) }) {
		return false
	}
	if m.PipedFrom != nil && !call.pipedFrom(i, m.PipedFrom, prove) {
		return false
	}
	return true
}

// split sorts a command's arguments into options (words that are or may
// be options, up to "--") and operands (the rest, with the values of
// options_with_value taken out).
func (m *CommandMatch) split(args []shell.Word) (opts, operands []shell.Word) {
	ended := false
	for i := 0; i < len(args); i++ {
		w := args[i]
		switch {
		case ended:
			operands = append(operands, w)
		case w.Static && !w.Glob && w.Text == "--":
			ended = true
		case w.MayBeOption():
			opts = append(opts, w)
			if !w.Static || w.Glob {
				operands = append(operands, w) // it may as well be an operand
			} else if slices.Contains(m.ValueOptions, w.Text) {
				i++
			}
		default:
			operands = append(operands, w)
		}
	}
	return opts, operands
}

// hasFlag reports whether an option word is one of spellings: -x is a
// short option, found in a cluster (-rf); --long also as --long=value and
// abbreviated (--rec, as getopt_long takes it); -word (find's -delete) is
// the whole word. A word an expansion builds is every option when unknown
// counts.
func hasFlag(w shell.Word, spellings []string, unknown bool) bool {
	if ws := w.Words(); !w.Static && ws[0].Static {
		// the words braces make: {-r,-v} is -r and -v
		return slices.ContainsFunc(ws, func(e shell.Word) bool { return hasFlag(e, spellings, unknown) })
	}
	if !w.Static || w.Glob {
		return unknown
	}
	t := w.Text
	for _, s := range spellings {
		switch {
		case strings.HasPrefix(s, "--"):
			name, _, _ := strings.Cut(t, "=")
			if strings.HasPrefix(name, "--") && len(name) > 2 && strings.HasPrefix(s, name) {
				return true
			}
		case len(s) == 2:
			if !strings.HasPrefix(t, "--") && len(t) > 1 && strings.IndexByte(t[1:], s[1]) >= 0 {
				return true
			}
		default:
			if t == s || strings.HasPrefix(t, s+"=") {
				return true
			}
		}
	}
	return false
}

// pipedFrom reports whether an earlier stage of a pipeline command i runs
// in has a command that m matches.
func (c *Call) pipedFrom(i int, m *CommandMatch, prove bool) bool {
	first := c.firstStages(m, prove)
	return slices.ContainsFunc(c.line.Commands[i].Pipes, func(at shell.Stage) bool {
		n, ok := first[at.Pipe]
		return ok && n < at.N
	})
}

// firstStages is, per pipeline, the first stage with a command m matches:
// worked out once per call and matcher, so a line of many pipes costs
// linear time, not quadratic.
func (c *Call) firstStages(m *CommandMatch, prove bool) map[int]int {
	key := stagesKey{m, prove}
	if first, ok := c.stages[key]; ok {
		return first
	}
	first := map[int]int{}
	for j, cmd := range c.line.Commands {
		if !m.matches(c, j, prove) {
			continue
		}
		for _, at := range cmd.Pipes {
			if n, ok := first[at.Pipe]; !ok || at.N < n {
				first[at.Pipe] = at.N
			}
		}
	}
	if c.stages == nil {
		c.stages = map[stagesKey]map[int]int{}
	}
	c.stages[key] = first
	return first
}

type stagesKey struct {
	m     *CommandMatch
	prove bool
}

// matches reports whether a word matches. A word an expansion builds is
// matched as written ($HOME/.ssh/id_rsa still names .ssh), and may lead
// outside the workspace.
func (a *ArgMatch) matches(w shell.Word, at place) bool {
	// the word, and what braces make of it ({.,}env is .env)
	if a.matchesText(w.Text, at) || slices.ContainsFunc(w.Alts, func(t string) bool { return a.matchesText(t, at) }) {
		return true
	}
	t := w.Text
	for _, p := range a.Path {
		switch p {
		case pathOutsideWorkspace:
			if strings.HasPrefix(t, "-") && w.Static {
				continue
			}
			if !at.inside(w) {
				return true
			}
		case pathWorkspaceRoot:
			if slices.ContainsFunc(w.Words(), at.root) {
				return true
			}
		}
	}
	return false
}

// root reports whether a word names the workspace itself, or everything
// in it: *, ./* and $WS/* delete it as surely as rm -rf . does.
func (at place) root(w shell.Word) bool {
	t := w.Text
	if r, ok := at.resolve(t); w.Static && !w.Glob && ok && r == at.ws {
		return true
	}
	r, ok := at.resolve(path.Dir(t))
	return w.Static && w.Glob && ok && r == at.ws && strings.Trim(path.Base(t), "*") == ""
}

// matchesText reports whether a word's text matches a regex, prefix or
// glob; a relative path is also matched as the path it leads to from the
// workspace, so ../.npmrc from /home/u/project is ~/.npmrc.
func (a *ArgMatch) matchesText(t string, at place) bool {
	if slices.ContainsFunc(a.regexes, func(re *regexp.Regexp) bool { return re.MatchString(t) }) ||
		slices.ContainsFunc(a.Prefix, func(p string) bool { return strings.HasPrefix(t, p) }) {
		return true
	}
	if !a.secrets && a.globs == nil {
		return false
	}
	paths := []string{t}
	if r, ok := at.resolve(t); ok && !path.IsAbs(t) {
		paths = append(paths, r)
	}
	return slices.ContainsFunc(paths, func(p string) bool {
		return a.secrets && pathset.Secrets().Match(p) || a.globs != nil && a.globs.Match(p)
	})
}
