package catalog

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"regexp"
	"strconv"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/gatedhq/gated/internal/route"
)

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
