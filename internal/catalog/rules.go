package catalog

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"regexp/syntax"
	"slices"
	"strconv"
	"strings"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/gatedhq/gated/internal/opfile"
	"github.com/gatedhq/gated/internal/pathset"
	"github.com/gatedhq/gated/internal/route"
)

// Argument rules: TOOL.md's metadata.gated.rules, a declarative check of one
// argument (a JSON pointer into proposed_arguments) against regexes, path
// globs, prefixes or URL hosts. A rule that fires adds a blocking finding
// at its route; rules only tighten. Everything about a rule is checked and
// compiled at load, so a decision only runs linear-time matchers.

// Matcher kinds, as TOOL.md writes them and Rule.Kind shows them.
const (
	ruleRegex  = "regex"
	ruleGlob   = "glob"
	rulePrefix = "prefix"
	ruleHost   = "host"
)

var ruleKinds = []string{ruleRegex, ruleGlob, rulePrefix, ruleHost, ruleCommand, ruleFiles}

// SecretPaths is the glob pattern that stands for pathset's built-in set of
// secret files, so that every tool's rules share one definition of it.
const SecretPaths = "@secrets"

// Limits on rules. Anything beyond them is refused at load, never at
// decision time.
const (
	maxRulesPerTool     = 64
	maxPatternsPerRule  = 256
	maxPatternBytes     = 1024
	maxToolPatternBytes = 16 << 10
	maxGlobDoublestars  = 8
	maxGlobExpansions   = 64   // the {a,b} alternatives a glob spells out
	maxRegexInsts       = 4096 // RE2 program size: bounds the cost per byte matched
	maxRuleMessageBytes = 1024
)

var ruleCodePattern = regexp.MustCompile(`^[a-z][a-z0-9_]{2,63}$`)

// hostPattern is what a host pattern may be: a lower-case host name or
// *.name.
var hostPattern = regexp.MustCompile(`^(\*\.)?[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*$`)

// Rule is one argument rule of a TOOL.md, resolved and compiled. Views
// carry their rules read-only; GET /v1/catalog shows them.
type Rule struct {
	Code     string      `json:"code"`
	Pointer  string      `json:"pointer"` // RFC 6901, into proposed_arguments
	Kind     string      `json:"kind"`    // regex, glob, prefix or host
	Patterns []string    `json:"patterns"`
	Route    route.Route `json:"route"` // ask, defer or refuse
	Message  string      `json:"message,omitempty"`
	Negate   bool        `json:"negate"` // fire when no pattern matches
	// Command and Files are the matchers of command rules (commands.go),
	// on the tool's command line.
	Command *CommandMatch `json:"command,omitempty"`
	Files   *ArgMatch     `json:"files,omitempty"`
	// PathsFrom, for a glob, names the format the value is in when it is
	// not a path: "apply_patch" matches the files a Codex patch names.
	PathsFrom string `json:"paths_from,omitempty"`

	tokens  []string         // the pointer's reference tokens, unescaped
	regexes []*regexp.Regexp // Kind regex, one per pattern
	globs   *pathset.Set     // Kind glob: the patterns other than SecretPaths
	secrets bool             // Kind glob: SecretPaths is among the patterns
}

// ruleFindings is one blocking finding per rule of the call's view that
// fires on args, after shell_command_dynamic when the call's command line
// could not be read whole. A finding names the rule, the pointer and the
// file, never the value.
func (c *Call) ruleFindings(args map[string]any) []route.Finding {
	v := c.View
	var out []route.Finding
	if f, ok := c.dynamicFinding(); ok {
		out = append(out, f)
	}
	for _, r := range v.Rules {
		if r.Kind == ruleCommand || r.Kind == ruleFiles {
			if !r.commandFires(c) {
				continue
			}
			msg := r.Message
			if msg == "" {
				msg = fmt.Sprintf("command rule %s fired on the command line at %s (%s)", r.Code, r.Pointer, v.Source)
			}
			out = append(out, route.Finding{Source: route.SourceCatalog, Code: r.Code, Route: r.Route, Blocking: true, Message: msg})
			continue
		}
		long, many := r.tooLong(args), r.tooMany(args)
		if !long && !many && !r.fires(args) {
			continue
		}
		msg := r.Message
		switch {
		case long:
			msg = fmt.Sprintf("the argument at %s is over %d bytes, too long for argument rule %s to check (%s)", r.Pointer, MaxRuleValueBytes, r.Code, v.Source)
		case many:
			msg = fmt.Sprintf("the argument at %s names over %d files, too many for argument rule %s to check (%s)", r.Pointer, MaxRulePaths, r.Code, v.Source)
		case msg == "":
			msg = fmt.Sprintf("argument rule %s fired on %s (%s)", r.Code, r.Pointer, v.Source)
		}
		out = append(out, route.Finding{Source: route.SourceCatalog, Code: r.Code, Route: r.Route, Blocking: true, Message: msg})
	}
	return out
}

// MaxRuleValueBytes bounds the text a regex rule reads. RE2 is linear, but a
// megabyte against every starter pattern still costs most of a second of
// CPU; a longer value fires the rule as unchecked, which fails closed.
const MaxRuleValueBytes = 64 << 10

// tooLong reports whether a regex rule's value is longer than it reads.
func (r *Rule) tooLong(args map[string]any) bool {
	if r.Kind != ruleRegex {
		return false
	}
	items, _, ok := r.values(args)
	n := 0
	for _, s := range items {
		n += len(s) + 1
	}
	return ok && n > MaxRuleValueBytes
}

// MaxRulePaths bounds the files a paths_from rule reads from one value; a
// value that names more fires the rule as unchecked.
const MaxRulePaths = 1000

// tooMany reports whether a paths_from rule's value names more files than
// it reads.
func (r *Rule) tooMany(args map[string]any) bool {
	if r.PathsFrom == "" {
		return false
	}
	items, _, ok := r.values(args)
	return ok && len(items) > MaxRulePaths
}

// fires reports whether the rule fires on the arguments. The value at the
// pointer is a string, or an array of strings matched element by element
// and, for regex and prefix, also as its elements joined by single spaces
// (an argv). Without negate the rule fires when any of those matches any
// pattern; anything else at the pointer (missing, a number, an object)
// does not fire. With negate it fires unless the value is shown to be
// allowed: a string that matches a pattern, an array whose joined form
// matches (regex, prefix) or whose every element matches. A value that is
// missing or not a string cannot be shown to be allowed and fires.
func (r *Rule) fires(args map[string]any) bool {
	items, isArray, ok := r.values(args)
	if !ok {
		return r.Negate
	}
	joins := isArray && (r.Kind == ruleRegex || r.Kind == rulePrefix)
	if !r.Negate {
		if joins && r.matches(strings.Join(items, " "), false) {
			return true
		}
		return slices.ContainsFunc(items, func(s string) bool { return r.matches(s, false) })
	}
	if joins && r.matches(strings.Join(items, " "), true) {
		return false
	}
	return !allOf(items, func(s string) bool { return r.matches(s, true) })
}

// arrayIndex parses an RFC 6901 array index: "0" or digits without a
// leading zero.
func arrayIndex(tok string) (int, bool) {
	if tok == "" || len(tok) > 9 || (len(tok) > 1 && tok[0] == '0') {
		return 0, false
	}
	for i := 0; i < len(tok); i++ {
		if tok[i] < '0' || tok[i] > '9' {
			return 0, false
		}
	}
	i, err := strconv.Atoi(tok)
	return i, err == nil
}

func allOf(items []string, f func(string) bool) bool {
	for _, s := range items {
		if !f(s) {
			return false
		}
	}
	return true
}

// values returns the value at the rule's pointer as strings: one for a
// string, one per element for an array of strings. ok is false for
// anything else. With PathsFrom they are the paths the strings name, as
// an array.
func (r *Rule) values(args map[string]any) (items []string, isArray, ok bool) {
	items, isArray, ok = r.pointed(args)
	if !ok || r.PathsFrom == "" {
		return items, isArray, ok
	}
	var paths []string
	for _, s := range items {
		paths = append(paths, patchPaths(s)...)
	}
	return paths, true, true
}

// pointed is the value at the rule's pointer, as values returns it before
// PathsFrom.
func (r *Rule) pointed(args map[string]any) (items []string, isArray, ok bool) {
	cur := valueAt(r.tokens, args)
	switch c := cur.(type) {
	case string:
		return []string{c}, false, true
	case []any:
		items = make([]string, len(c))
		for i, e := range c {
			s, isString := e.(string)
			if !isString {
				return nil, false, false
			}
			items[i] = s
		}
		return items, true, true
	case []string:
		return c, true, true
	}
	return nil, false, false
}

// matches reports whether s matches any pattern. strict is for negated
// rules, which allow a value: a glob then asks whether the path is allowed
// however it is read (pathset.Set.Allows), so that a path written to look
// allowed ("src/../.env", "src\..\.env") is judged by where it leads. A
// glob that denies matches any canonical form (pathset.Set.Match).
func (r *Rule) matches(s string, strict bool) bool {
	switch r.Kind {
	case ruleRegex:
		return slices.ContainsFunc(r.regexes, func(re *regexp.Regexp) bool { return re.MatchString(s) })
	case rulePrefix:
		return slices.ContainsFunc(r.Patterns, func(p string) bool { return strings.HasPrefix(s, p) })
	case ruleHost:
		h, ok := urlHost(s)
		return ok && slices.ContainsFunc(r.Patterns, func(p string) bool { return hostMatches(p, h) })
	case ruleGlob:
		if strict {
			return r.globs.Allows(s)
		}
		return r.secrets && pathset.Secrets().Match(s) || r.globs.Match(s)
	}
	return false
}

// pathsFromPatch is the PathsFrom of a glob rule over a Codex apply_patch
// patch.
const pathsFromPatch = "apply_patch"

// patchMarkers start the lines of an apply_patch patch that name a file.
var patchMarkers = []string{"*** Add File:", "*** Update File:", "*** Delete File:", "*** Move to:"}

// patchPaths are the files an apply_patch patch names, in order. Lines are
// trimmed as Codex trims them.
func patchPaths(patch string) []string {
	var out []string
	for line := range strings.Lines(patch) {
		line = strings.TrimSpace(line)
		for _, m := range patchMarkers {
			if p, ok := strings.CutPrefix(line, m); ok {
				out = append(out, strings.TrimSpace(p))
				break
			}
		}
	}
	return out
}

// urlHost is the host of an absolute URL: lower case, without port or
// trailing dot. A value that is not an absolute URL with a host has none.
func urlHost(s string) (string, bool) {
	u, err := url.Parse(s)
	if err != nil || !u.IsAbs() || u.Host == "" {
		return "", false
	}
	h := strings.TrimSuffix(strings.ToLower(u.Hostname()), ".")
	return h, h != ""
}

// hostMatches: "example.com" matches exactly; "*.example.com" any subdomain
// of it, not example.com itself.
func hostMatches(pattern, host string) bool {
	if suffix, ok := strings.CutPrefix(pattern, "*"); ok {
		return len(host) > len(suffix) && strings.HasSuffix(host, suffix)
	}
	return host == pattern
}

// ruleSpec is one rule as TOOL.md writes it, before compiling.
type ruleSpec struct {
	rule     *Rule
	patField string // the matcher's field, /metadata/gated/rules/<i>/<kind>
	listed   bool   // the patterns were a list (problems then name [j])
	patsOK   bool   // the patterns decoded and are within their count
	ok       bool   // every field is sound
}

// compileRules checks and compiles a TOOL.md's rules; every problem is
// reported against the file and the rule's field. It returns nil when
// there are none or any is wrong (the load fails then anyway).
func (l *loader) compileRules(f file, raw []map[string]json.RawMessage) []*Rule {
	const base = "/metadata/gated/rules"
	if len(raw) == 0 {
		return nil
	}
	if len(raw) > maxRulesPerTool {
		l.ps.add(f.path, base, "rule_limit_exceeded", "%d rules; a tool may have at most %d", len(raw), maxRulesPerTool)
		return nil
	}
	specs := make([]*ruleSpec, len(raw))
	total := 0
	for i, m := range raw {
		specs[i] = l.parseRule(f, base+"/"+strconv.Itoa(i), m)
		for _, p := range specs[i].rule.Patterns {
			total += len(p)
		}
		total += specs[i].rule.Command.patternBytes() + specs[i].rule.Files.patternBytes()
	}
	if total > maxToolPatternBytes {
		l.ps.add(f.path, base, "rule_limit_exceeded", "the rules' patterns take %d bytes; a tool may have at most %d", total, maxToolPatternBytes)
		return nil
	}
	allOK := true
	out := make([]*Rule, len(specs))
	for i, s := range specs {
		if s.patsOK && !l.compilePatterns(f, s) {
			s.ok = false
		}
		allOK = allOK && s.ok
		out[i] = s.rule
	}
	if !allOK {
		return nil
	}
	return out
}

// parseRule checks one rule's fields; patterns are decoded but not yet
// compiled.
func (l *loader) parseRule(f file, field string, m map[string]json.RawMessage) *ruleSpec {
	s := &ruleSpec{rule: &Rule{}, ok: true}
	bad := func(sub, code, format string, args ...any) {
		l.ps.add(f.path, field+sub, code, format, args...)
		s.ok = false
	}
	// str returns a string field; ok is false when it is absent (a
	// problem when required) or not a string (a problem).
	str := func(key string, required bool) (v string, ok bool) {
		raw, present := m[key]
		if !present {
			if required {
				bad(opfile.Pointer(key), "missing_field", "is required")
			}
			return "", false
		}
		if json.Unmarshal(raw, &v) != nil {
			bad(opfile.Pointer(key), "invalid_type", "must be a string")
			return "", false
		}
		return v, true
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var kinds []string
	for _, k := range keys {
		switch {
		case slices.Contains(ruleKinds, k):
			kinds = append(kinds, k)
		case k == "code" || k == "pointer" || k == "route" || k == "message" || k == "negate" || k == "paths_from":
		default:
			bad(opfile.Pointer(k), "unknown_field", "is not a rule field: a rule has code, pointer, route, optional message, negate and paths_from, and one matcher of regex, glob, prefix, host, command or files")
		}
	}

	r := s.rule
	if code, ok := str("code", true); ok {
		switch {
		case !ruleCodePattern.MatchString(code):
			bad("/code", "invalid_rule_code", "%q is not a blocker code: lower-case letters, digits and _, starting with a letter, 3 to 64 characters", code)
		case route.Reserved(code):
			bad("/code", "invalid_rule_code", "%q is one of gated's own blocker codes (docs/codes.md); choose another", code)
		default:
			r.Code = code
		}
	}

	if p, ok := str("pointer", true); ok {
		if toks, err := parsePointer(p); err != nil {
			bad("/pointer", "invalid_rule_pointer", "%q %v", p, err)
		} else {
			r.Pointer, r.tokens = p, toks
		}
	}

	if rt, ok := str("route", true); ok {
		if v, err := route.ParseRoute(rt); err != nil || v == route.Accept {
			bad("/route", "invalid_rule_route", "%q is not a rule route: a rule only tightens, so it routes to ask, defer or refuse", rt)
		} else {
			r.Route = v
		}
	}

	if msg, ok := str("message", false); ok {
		if len(msg) > maxRuleMessageBytes {
			bad("/message", "rule_limit_exceeded", "is %d bytes; a message may have at most %d", len(msg), maxRuleMessageBytes)
		}
		r.Message = msg
	}

	if raw, present := m["negate"]; present {
		if json.Unmarshal(raw, &r.Negate) != nil {
			bad("/negate", "invalid_type", "must be true or false")
		}
	}

	if pf, ok := str("paths_from", false); ok {
		switch {
		case pf != pathsFromPatch:
			bad("/paths_from", "invalid_rule_paths_from", "%q is not a format gated reads paths from; the one there is %s", pf, pathsFromPatch)
		case !slices.Equal(kinds, []string{ruleGlob}):
			bad("/paths_from", "invalid_rule_paths_from", "is for a glob rule: the paths it reads are matched by globs")
		default:
			r.PathsFrom = pf
		}
	}

	switch len(kinds) {
	case 0:
		bad("", "missing_field", "needs one matcher: regex, glob, prefix, host, command or files")
	case 1:
		r.Kind = kinds[0]
		s.patField = field + "/" + r.Kind
		switch r.Kind {
		case ruleCommand:
			r.Patterns = []string{} // its patterns are in Command
			if r.Command = l.compileCommandMatch(f, s.patField, m[r.Kind], 0); r.Command == nil {
				s.ok = false
			}
		case ruleFiles:
			r.Patterns = []string{}
			if r.Files = l.compileArgMatch(f, s.patField, m[r.Kind]); r.Files == nil {
				s.ok = false
			}
		default:
			s.parsePatterns(l, f, m[r.Kind])
		}
		if r.Negate && (r.Kind == ruleCommand || r.Kind == ruleFiles) {
			bad("/negate", "invalid_rule_matcher", "a %s rule cannot be negated", r.Kind)
		}
	default:
		bad("", "invalid_rule_matcher", "has %s; a rule has exactly one matcher", strings.Join(kinds, " and "))
	}
	return s
}

// parsePatterns decodes a matcher's value: a pattern or a non-empty list
// of them.
func (s *ruleSpec) parsePatterns(l *loader, f file, raw json.RawMessage) {
	var one string
	if json.Unmarshal(raw, &one) == nil {
		s.rule.Patterns = []string{one}
	} else if json.Unmarshal(raw, &s.rule.Patterns) == nil && s.rule.Patterns != nil {
		s.listed = true
	} else {
		s.rule.Patterns = nil
		l.ps.add(f.path, s.patField, "invalid_type", "must be a pattern or a list of patterns (strings)")
		s.ok = false
		return
	}
	switch n := len(s.rule.Patterns); {
	case n == 0:
		l.ps.add(f.path, s.patField, "invalid_rule_pattern", "needs at least one pattern")
		s.ok = false
	case n > maxPatternsPerRule:
		l.ps.add(f.path, s.patField, "rule_limit_exceeded", "%d patterns; a rule may have at most %d", n, maxPatternsPerRule)
		s.ok = false
	default:
		s.patsOK = true
	}
}

// compilePatterns checks and compiles each pattern of a rule, so that a
// pattern's problems are listed even when another field is wrong too.
func (l *loader) compilePatterns(f file, s *ruleSpec) bool {
	ok := true
	r := s.rule
	var globs []string
	for j, p := range r.Patterns {
		field := s.patField
		if s.listed {
			field += "/" + strconv.Itoa(j)
		}
		bad := func(code, format string, args ...any) {
			l.ps.add(f.path, field, code, format, args...)
			ok = false
		}
		if p == "" {
			bad("invalid_rule_pattern", "is empty")
			continue
		}
		if len(p) > maxPatternBytes {
			bad("rule_limit_exceeded", "is %d bytes; a pattern may have at most %d", len(p), maxPatternBytes)
			continue
		}
		switch r.Kind {
		case ruleRegex:
			re, err := compileruleRegex(p)
			if err != nil {
				code := "invalid_rule_pattern"
				if errors.Is(err, errRegexTooLarge) {
					code = "rule_limit_exceeded"
				}
				bad(code, "%v", err)
				continue
			}
			r.regexes = append(r.regexes, re)
		case ruleGlob:
			glob := strings.TrimPrefix(p, "!")
			switch {
			case p == SecretPaths && r.Negate:
				bad("invalid_rule_pattern", "%s names files to deny; a negated rule allows what its patterns match, so it cannot use it", SecretPaths)
			case p == SecretPaths:
				r.secrets = true
			case strings.HasPrefix(p, "@"):
				bad("invalid_rule_pattern", "%q names no built-in set; the one there is %s", p, SecretPaths)
			case glob == "" || !doublestar.ValidatePattern(glob):
				bad("invalid_rule_pattern", "%q is not a valid glob (an unclosed [ or {, an empty [], a trailing \\, or a lone !)", p)
			case strings.Count(p, "**") > maxGlobDoublestars:
				bad("rule_limit_exceeded", "has %d '**'; a glob may have at most %d", strings.Count(p, "**"), maxGlobDoublestars)
			case globExpansions(p) > maxGlobExpansions:
				bad("rule_limit_exceeded", "spells out more than %d alternatives with {…}; split it into several patterns", maxGlobExpansions)
			default:
				globs = append(globs, p)
			}
		case ruleHost:
			if !hostPattern.MatchString(p) {
				bad("invalid_rule_pattern", "%q is not a host pattern: a lower-case host name (letters, digits, dots, hyphens) or *.name", p)
			}
		}
	}
	if r.Kind == ruleGlob && ok {
		r.globs = pathset.MustCompile(globs...) // each passed the checks Compile makes
	}
	return ok
}

var errRegexTooLarge = fmt.Errorf("compiles to more than %d instructions; split it or drop large {n} counts", maxRegexInsts)

// compileruleRegex compiles an RE2 pattern and refuses one whose program
// is large enough to make matching slow (each byte of the value costs up to
// one step per instruction).
func compileruleRegex(p string) (*regexp.Regexp, error) {
	re, err := regexp.Compile(p)
	if err != nil {
		return nil, err
	}
	parsed, err := syntax.Parse(p, syntax.Perl)
	if err != nil {
		return nil, err
	}
	prog, err := syntax.Compile(parsed.Simplify())
	if err != nil {
		return nil, err
	}
	if len(prog.Inst) > maxRegexInsts {
		return nil, errRegexTooLarge
	}
	return re, nil
}

// globExpansions counts the patterns a glob's {a,b} alternatives spell out
// (doublestar tries each in turn), saturating above maxGlobExpansions. The
// pattern has passed doublestar.ValidatePattern.
func globExpansions(p string) int {
	n, _ := expandSeq(p, 0, false)
	return n
}

// expandSeq counts the expansions of a sequence starting at i, up to the
// end of p or, inGroup, to the ',' or '}' that ends an alternative. It
// returns the count and the index where it stopped.
func expandSeq(p string, i int, inGroup bool) (int, int) {
	n := 1
	for i < len(p) {
		switch p[i] {
		case '\\':
			i += 2
		case '[':
			i++
			if i < len(p) && (p[i] == '^' || p[i] == '!') {
				i++
			}
			for i < len(p) && p[i] != ']' { // a valid class is never empty
				if p[i] == '\\' {
					i++
				}
				i++
			}
			i++
		case '{':
			alts := 0
			i++
			for {
				a, end := expandSeq(p, i, true)
				alts = min(alts+a, maxGlobExpansions+1)
				i = end + 1
				if end >= len(p) || p[end] == '}' {
					break
				}
			}
			n = min(n*alts, maxGlobExpansions+1)
		case ',', '}':
			if inGroup {
				return n, i
			}
			i++
		default:
			i++
		}
	}
	return n, i
}

// parsePointer splits an RFC 6901 JSON pointer into unescaped reference
// tokens. The empty pointer (the whole argument object, never a string) is
// refused, as is one that does not start with '/' or has a '~' not
// followed by 0 or 1.
func parsePointer(p string) ([]string, error) {
	switch {
	case p == "":
		return nil, fmt.Errorf("is empty: it would point at the whole argument object, which is never a string; write /<argument name>")
	case len(p) > maxPatternBytes:
		return nil, fmt.Errorf("is longer than %d bytes", maxPatternBytes)
	case p[0] != '/':
		return nil, fmt.Errorf("is not a JSON pointer: it must start with '/' (e.g. /command)")
	}
	toks := strings.Split(p[1:], "/")
	for i, t := range toks {
		for j := 0; j < len(t); j++ {
			if t[j] == '~' && (j+1 == len(t) || (t[j+1] != '0' && t[j+1] != '1')) {
				return nil, fmt.Errorf("has a '~' not followed by 0 or 1 (write ~0 for '~' and ~1 for '/')")
			}
		}
		toks[i] = strings.ReplaceAll(strings.ReplaceAll(t, "~1", "/"), "~0", "~")
	}
	return toks, nil
}
