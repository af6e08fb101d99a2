package catalog

import (
	"encoding/json"
	"errors"
	"fmt"
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
		case k == "code" || k == "pointer" || k == "route" || k == "message" || k == "negate" || k == "paths_from" || k == "under":
		default:
			bad(opfile.Pointer(k), "unknown_field", "is not a rule field: a rule has code, pointer, route, optional message, negate, paths_from and under, and one matcher of regex, glob, prefix, host, command or files")
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

	if u, ok := str("under", false); ok {
		toks, err := parsePointer(u)
		switch {
		case err != nil:
			bad("/under", "invalid_rule_under", "%q %v", u, err)
		case !slices.Equal(kinds, []string{ruleGlob}) || r.PathsFrom != "":
			bad("/under", "invalid_rule_under", "is for a glob rule without paths_from: the value is matched as a path in the directory under names")
		default:
			r.Under, r.underTokens = u, toks
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
