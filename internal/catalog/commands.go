package catalog

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"regexp"
	"slices"
	"strconv"
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
// per decision (Call), whatever the number of rules.

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
		if cmd.Env || !slices.ContainsFunc(v.CommandLine.Reads, func(m *CommandMatch) bool { return m.matches(c, i, true) }) {
			return false
		}
		for _, w := range cmd.Args {
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
	return true
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
	if m.Args != nil && !slices.ContainsFunc(operands, func(w shell.Word) bool { return m.Args.matches(w, at) }) &&
		!slices.ContainsFunc(opts, func(w shell.Word) bool { v, ok := optionValue(w, false); return ok && m.Args.matches(v, at) }) {
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
	t := w.Text
	if slices.ContainsFunc(a.regexes, func(re *regexp.Regexp) bool { return re.MatchString(t) }) ||
		slices.ContainsFunc(a.Prefix, func(p string) bool { return strings.HasPrefix(t, p) }) {
		return true
	}
	if a.secrets && pathset.Secrets().Match(t) || a.globs != nil && a.globs.Match(t) {
		return true
	}
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
			if r, ok := at.resolve(t); w.Static && !w.Glob && ok && r == at.ws {
				return true
			}
			// *, ./* and $WS/* name everything in the workspace: rm -rf *
			// deletes it as surely as rm -rf . does
			if r, ok := at.resolve(path.Dir(t)); w.Static && w.Glob && ok && r == at.ws && strings.Trim(path.Base(t), "*") == "" {
				return true
			}
		}
	}
	return false
}

// Limits of command rules, beside those of argument rules.
const (
	maxCommandWords = 64 // programs, subcommands, flags … in one list
	maxReads        = 64
)

// compileCommandLine checks metadata.gated.command_line.
func (l *loader) compileCommandLine(f file, raw json.RawMessage) *CommandLine {
	const field = "/metadata/gated/command_line"
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	var doc struct {
		Pointer string            `json:"pointer"`
		Dynamic string            `json:"dynamic"`
		Reads   []json.RawMessage `json:"reads"`
	}
	if err := strictDecode(raw, &doc); err != nil {
		l.ps.add(f.path, field, "invalid_command_line", "is not a command line description (pointer, dynamic, reads): %v", err)
		return nil
	}
	cl, ok := &CommandLine{Pointer: doc.Pointer, Dynamic: route.Ask}, true
	toks, err := parsePointer(doc.Pointer)
	if err != nil {
		l.ps.add(f.path, field+"/pointer", "invalid_rule_pointer", "%q %v", doc.Pointer, err)
		ok = false
	}
	cl.tokens = toks
	if doc.Dynamic != "" {
		if r, err := route.ParseRoute(doc.Dynamic); err != nil || r == route.Accept {
			l.ps.add(f.path, field+"/dynamic", "invalid_rule_route", "%q is not a route for a line gated cannot read: ask, defer or refuse", doc.Dynamic)
			ok = false
		} else {
			cl.Dynamic = r
		}
	}
	if len(doc.Reads) > maxReads {
		l.ps.add(f.path, field+"/reads", "rule_limit_exceeded", "%d entries; at most %d", len(doc.Reads), maxReads)
		return nil
	}
	for i, r := range doc.Reads {
		m := l.compileCommandMatch(f, field+"/reads/"+strconv.Itoa(i), r, 0)
		if m == nil {
			ok = false
			continue
		}
		if len(m.Programs) == 0 {
			l.ps.add(f.path, field+"/reads/"+strconv.Itoa(i)+"/program", "missing_field", "is required: a read names the programs it covers")
			ok = false
		}
		cl.Reads = append(cl.Reads, m)
	}
	if !ok {
		return nil
	}
	return cl
}

// commandDoc is a command matcher as TOOL.md writes it.
type commandDoc struct {
	Program      strList         `json:"program"`
	Subcommand   strList         `json:"subcommand"`
	ValueOptions []string        `json:"options_with_value"`
	Flags        []strList       `json:"flags"`
	WithoutFlags []string        `json:"without_flags"`
	Args         json.RawMessage `json:"args"`
	PipedFrom    json.RawMessage `json:"piped_from"`
	UnlessCwd    []string        `json:"unless_cwd"`
	Recursive    bool            `json:"recursive"`
}

// strList is a string or a list of strings.
type strList []string

func (s *strList) UnmarshalJSON(b []byte) error {
	var one string
	if json.Unmarshal(b, &one) == nil {
		*s = []string{one}
		return nil
	}
	var many []string
	if err := json.Unmarshal(b, &many); err != nil {
		return errors.New("must be a string or a list of strings")
	}
	*s = many
	return nil
}

func strictDecode(raw json.RawMessage, v any) error {
	d := json.NewDecoder(bytes.NewReader(raw))
	d.DisallowUnknownFields()
	return d.Decode(v)
}

var (
	programPattern = regexp.MustCompile(`^[^/\s]{1,128}$`)
	flagPattern    = regexp.MustCompile(`^-[^\s=]{1,127}$`)
)

// compileCommandMatch checks one command matcher; depth is 1 inside
// piped_from, which may not nest.
func (l *loader) compileCommandMatch(f file, field string, raw json.RawMessage, depth int) *CommandMatch {
	var doc commandDoc
	if err := strictDecode(raw, &doc); err != nil {
		l.ps.add(f.path, field, "invalid_command_matcher", "is not a command matcher (program, subcommand, options_with_value, flags, without_flags, args, piped_from, unless_cwd, recursive): %v", err)
		return nil
	}
	ok := true
	bad := func(sub, code, format string, args ...any) {
		l.ps.add(f.path, field+sub, code, format, args...)
		ok = false
	}
	words := func(sub string, list []string, re *regexp.Regexp, what string) {
		if len(list) > maxCommandWords {
			bad(sub, "rule_limit_exceeded", "%d entries; at most %d", len(list), maxCommandWords)
		}
		for i, w := range list {
			if !re.MatchString(w) {
				bad(sub+"/"+strconv.Itoa(i), "invalid_rule_pattern", "%q is not %s", w, what)
			}
		}
	}
	m := &CommandMatch{Programs: doc.Program, Subcommands: doc.Subcommand, ValueOptions: doc.ValueOptions,
		WithoutFlags: doc.WithoutFlags, UnlessCwd: doc.UnlessCwd, Recursive: doc.Recursive}
	words("/program", m.Programs, programPattern, "a program name (its base name: rm, not /bin/rm)")
	words("/subcommand", m.Subcommands, programPattern, "a subcommand (one word)")
	words("/options_with_value", m.ValueOptions, flagPattern, "an option (-C, --git-dir)")
	words("/without_flags", m.WithoutFlags, flagPattern, "an option (-x, --long, -word)")
	if len(doc.Flags) > maxCommandWords {
		bad("/flags", "rule_limit_exceeded", "%d groups; at most %d", len(doc.Flags), maxCommandWords)
	}
	for i, g := range doc.Flags {
		if len(g) == 0 {
			bad("/flags/"+strconv.Itoa(i), "invalid_rule_pattern", "is an empty group: list the spellings of one option")
		}
		words("/flags/"+strconv.Itoa(i), g, flagPattern, "an option (-x, --long, -word)")
		m.Flags = append(m.Flags, g)
	}
	for i, g := range m.UnlessCwd {
		if !path.IsAbs(g) || !doublestar.ValidatePattern(g) {
			bad("/unless_cwd/"+strconv.Itoa(i), "invalid_rule_pattern", "%q is not a glob of absolute directories", g)
		}
	}
	if len(doc.Args) > 0 {
		m.Args = l.compileArgMatch(f, field+"/args", doc.Args)
		ok = ok && m.Args != nil
	}
	if len(doc.PipedFrom) > 0 {
		if depth > 0 {
			bad("/piped_from", "invalid_command_matcher", "may not have a piped_from of its own")
		} else if m.PipedFrom = l.compileCommandMatch(f, field+"/piped_from", doc.PipedFrom, 1); m.PipedFrom == nil {
			ok = false
		}
	}
	if len(m.Programs) == 0 && m.Args == nil && !m.Recursive && m.PipedFrom == nil {
		bad("", "invalid_command_matcher", "matches every command: give a program, args, piped_from or recursive")
	}
	if !ok {
		return nil
	}
	return m
}

// compileArgMatch checks an args or files matcher.
func (l *loader) compileArgMatch(f file, field string, raw json.RawMessage) *ArgMatch {
	var doc struct {
		Glob   strList `json:"glob"`
		Regex  strList `json:"regex"`
		Prefix strList `json:"prefix"`
		Path   strList `json:"path"`
	}
	if err := strictDecode(raw, &doc); err != nil {
		l.ps.add(f.path, field, "invalid_command_matcher", "is not an argument matcher (glob, regex, prefix, path): %v", err)
		return nil
	}
	a, ok := &ArgMatch{Glob: doc.Glob, Regex: doc.Regex, Prefix: doc.Prefix, Path: doc.Path}, true
	if len(a.Glob)+len(a.Regex)+len(a.Prefix)+len(a.Path) == 0 {
		l.ps.add(f.path, field, "invalid_command_matcher", "needs at least one of glob, regex, prefix or path")
		return nil
	}
	// The pattern checks of argument rules, through a rule of each kind.
	for _, k := range []struct {
		kind string
		pats []string
	}{{ruleGlob, a.Glob}, {ruleRegex, a.Regex}, {rulePrefix, a.Prefix}} {
		if len(k.pats) == 0 {
			continue
		}
		s := &ruleSpec{rule: &Rule{Kind: k.kind, Patterns: k.pats}, patField: field + "/" + k.kind, listed: true}
		if len(k.pats) > maxPatternsPerRule {
			l.ps.add(f.path, s.patField, "rule_limit_exceeded", "%d patterns; at most %d", len(k.pats), maxPatternsPerRule)
			ok = false
			continue
		}
		if !l.compilePatterns(f, s) {
			ok = false
		}
		a.regexes = append(a.regexes, s.rule.regexes...)
		if k.kind == ruleGlob {
			a.globs, a.secrets = s.rule.globs, s.rule.secrets
		}
	}
	for i, p := range a.Path {
		if p != pathOutsideWorkspace && p != pathWorkspaceRoot {
			l.ps.add(f.path, fmt.Sprintf("%s/path/%d", field, i), "invalid_rule_pattern", "%q is not a place: outside_workspace or workspace_root", p)
			ok = false
		}
	}
	if !ok {
		return nil
	}
	return a
}

// patternBytes is what a command matcher's patterns count against a
// tool's pattern budget.
func (m *CommandMatch) patternBytes() int {
	if m == nil {
		return 0
	}
	n := m.Args.patternBytes() + m.PipedFrom.patternBytes()
	for _, list := range [][]string{m.Programs, m.Subcommands, m.ValueOptions, m.WithoutFlags, m.UnlessCwd} {
		for _, s := range list {
			n += len(s)
		}
	}
	for _, g := range m.Flags {
		for _, s := range g {
			n += len(s)
		}
	}
	return n
}

func (a *ArgMatch) patternBytes() int {
	if a == nil {
		return 0
	}
	n := 0
	for _, list := range [][]string{a.Glob, a.Regex, a.Prefix} {
		for _, s := range list {
			n += len(s)
		}
	}
	return n
}

// checkCommandRules checks that a tool's command and files rules read its
// command line: metadata.gated.command_line names it, at their pointer.
func (l *loader) checkCommandRules(f file, t *toolDef) {
	for i, r := range t.rules {
		if r.Kind != ruleCommand && r.Kind != ruleFiles {
			continue
		}
		field := "/metadata/gated/rules/" + strconv.Itoa(i) + "/pointer"
		switch {
		case t.line == nil && len(t.doc.Metadata.Gated.CommandLine) == 0:
			l.ps.add(f.path, field, "invalid_rule_pointer", "a %s rule reads the tool's command line: set metadata.gated.command_line.pointer to %s", r.Kind, r.Pointer)
		case t.line != nil && t.line.Pointer != r.Pointer:
			l.ps.add(f.path, field, "invalid_rule_pointer", "%q is not the command line's pointer %q: a %s rule reads the command line", r.Pointer, t.line.Pointer, r.Kind)
		}
	}
}
