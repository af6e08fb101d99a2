package catalog

import (
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/gatedhq/gated/internal/pathset"
	"github.com/gatedhq/gated/internal/route"
)

// Argument rules: TOOL.md's metadata.gated.rules, a declarative check of one
// argument (a JSON pointer into proposed_arguments) against regexes, path
// globs, prefixes or URL hosts. A rule that fires adds a blocking finding
// at its route; rules only tighten. Everything about a rule is checked and
// compiled at load (rulecompile.go), so a decision only runs the
// linear-time matchers here.

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
	// Under, for a glob, is the pointer of a directory the value names
	// files in (Grep's path, for its glob filter): the value is matched as
	// it is and as a path in each directory there, so {path: "~", glob:
	// ".npmrc"} is ~/.npmrc.
	Under string `json:"under,omitempty"`

	underTokens []string
	tokens      []string         // the pointer's reference tokens, unescaped
	regexes     []*regexp.Regexp // Kind regex, one per pattern
	globs       *pathset.Set     // Kind glob: the patterns other than SecretPaths
	secrets     bool             // Kind glob: SecretPaths is among the patterns
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
	if ok && r.Under != "" {
		return r.under(args, items, isArray)
	}
	if !ok || r.PathsFrom == "" {
		return items, isArray, ok
	}
	var paths []string
	for _, s := range items {
		paths = append(paths, patchPaths(s)...)
	}
	return paths, true, true
}

// under adds to a glob rule's values each of them as a path in each
// directory at its Under pointer (a string, or an array of strings).
func (r *Rule) under(args map[string]any, items []string, isArray bool) ([]string, bool, bool) {
	dirs, _, ok := pointedAt(r.underTokens, args)
	if !ok || len(dirs) == 0 {
		return items, isArray, true
	}
	out := slices.Clone(items)
	for _, d := range dirs {
		for _, it := range items {
			out = append(out, strings.TrimRight(d, `/\`)+"/"+it)
		}
	}
	return out, true, true
}

// pointed is the value at the rule's pointer, as values returns it before
// PathsFrom.
func (r *Rule) pointed(args map[string]any) (items []string, isArray, ok bool) {
	return pointedAt(r.tokens, args)
}

// pointedAt is the value at a pointer's tokens as strings: one for a
// string, one per element for an array of strings; ok is false for
// anything else.
func pointedAt(tokens []string, args map[string]any) (items []string, isArray, ok bool) {
	cur := valueAt(tokens, args)
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
