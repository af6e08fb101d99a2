package pathset

import (
	"fmt"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
)

// Set is a compiled, ordered list of path globs in doublestar syntax ("*"
// and "?" within a name, "**" across names, "[abc]", "{a,b}"). A pattern
// that starts with "!" excludes what the patterns before it included; for
// each form of a path the last pattern that matches decides, as in
// .gitignore. A Set is safe for concurrent use.
type Set struct {
	patterns []pattern
	home     bool // a pattern starts with "~", so home forms are worth matching
}

type pattern struct {
	glob    string
	exclude bool
}

// Compile checks and compiles patterns. A pattern is refused when
// doublestar would not accept it or when it is empty.
func Compile(patterns ...string) (*Set, error) {
	s := &Set{patterns: make([]pattern, len(patterns))}
	for i, p := range patterns {
		glob, exclude := strings.CutPrefix(p, "!")
		if glob == "" {
			return nil, fmt.Errorf("pattern %d is empty", i)
		}
		if !doublestar.ValidatePattern(glob) {
			return nil, fmt.Errorf("pattern %q is not a valid glob (an unclosed [ or {, an empty [], or a trailing \\)", p)
		}
		s.patterns[i] = pattern{glob: glob, exclude: exclude}
		s.home = s.home || strings.HasPrefix(glob, Home)
	}
	return s, nil
}

// MustCompile is Compile for patterns fixed in the source.
func MustCompile(patterns ...string) *Set {
	s, err := Compile(patterns...)
	if err != nil {
		panic(err)
	}
	return s
}

// Match reports whether any canonical form of p (see Canonical) is in the
// set: the question a rule that denies asks. It runs on every decision, so
// it builds no list of forms, and skips home forms when no pattern starts
// with "~" (the full form then matches whatever they would).
func (s *Set) Match(p string) bool {
	rs, n := readings(p)
	for _, r := range rs[:n] {
		if s.hasEither(r.full) || s.home && r.home != "" && s.hasEither(r.home) {
			return true
		}
		if pr := procRoot(r.full); pr != "" && s.hasEither(pr) {
			return true
		}
	}
	return false
}

// hasEither reports whether f or its lower case is in the set.
func (s *Set) hasEither(f string) bool {
	if s.has(f) {
		return true
	}
	l := strings.ToLower(f)
	return l != f && s.has(l)
}

// Allows reports whether p is in the set however it is read: the question
// an allowlist asks. Each reading of p (POSIX, and Windows when it differs)
// must be in the set as written or relative to its home directory; case is
// not folded, so ".ENV" is not allowed by ".env".
func (s *Set) Allows(p string) bool {
	rs, n := readings(p)
	for _, r := range rs[:n] {
		if !s.has(r.full) && (r.home == "" || !s.has(r.home)) {
			return false
		}
	}
	return true
}

// has reports whether the form f is in the set: the last pattern that
// matches it includes it.
func (s *Set) has(f string) bool {
	in := false
	for _, p := range s.patterns {
		if in != !p.exclude && doublestar.MatchUnvalidated(p.glob, f) {
			in = !p.exclude
		}
	}
	return in
}

// Patterns returns the set's patterns as written.
func (s *Set) Patterns() []string {
	out := make([]string, len(s.patterns))
	for i, p := range s.patterns {
		out[i] = p.glob
		if p.exclude {
			out[i] = "!" + p.glob
		}
	}
	return out
}
