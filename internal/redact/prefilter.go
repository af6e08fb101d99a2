package redact

import (
	"math/bits"
	"regexp/syntax"
	"unicode"
)

// byteSet is a set of bytes, one bit each.
type byteSet [4]uint64

func (b *byteSet) add(c byte) { b[c>>6] |= 1 << (c & 63) }
func (b *byteSet) union(o *byteSet) {
	b[0], b[1], b[2], b[3] = b[0]|o[0], b[1]|o[1], b[2]|o[2], b[3]|o[3]
}
func (b *byteSet) meets(o *byteSet) bool { return b[0]&o[0]|b[1]&o[1]|b[2]&o[2]|b[3]&o[3] != 0 }
func (b *byteSet) size() int {
	return bits.OnesCount64(b[0]) + bits.OnesCount64(b[1]) + bits.OnesCount64(b[2]) + bits.OnesCount64(b[3])
}
func (b *byteSet) addFold(c byte, fold bool) {
	b.add(c)
	if fold && c < 0x80 {
		for _, f := range []rune{unicode.ToLower(rune(c)), unicode.ToUpper(rune(c))} {
			if f < 0x80 {
				b.add(byte(f))
			}
		}
	}
}

// required returns a set of bytes at least one of which is in every string
// the pattern matches, as small as the pattern allows, or nil when it finds
// none (the rule must then run on every string its keywords admit). Most
// gitleaks rules need an assignment (one of "=:>,|") or a fixed prefix, so
// a string without one is passed over without running the regexp, whose
// NFA costs microseconds even where it finds nothing.
func required(pattern string) *byteSet {
	re, err := syntax.Parse(pattern, syntax.Perl)
	if err != nil {
		return nil
	}
	return requiredOf(re.Simplify())
}

func requiredOf(re *syntax.Regexp) *byteSet {
	fold := re.Flags&syntax.FoldCase != 0
	switch re.Op {
	case syntax.OpLiteral:
		// Every literal character must appear; any one of them will do, so
		// take the one with the smallest set (a non-letter when there is one).
		var best *byteSet
		for _, r := range re.Rune {
			if r >= 0x80 {
				continue
			}
			var s byteSet
			s.addFold(byte(r), fold)
			if best == nil || s.cost() < best.cost() {
				best = &s
			}
		}
		return best
	case syntax.OpCharClass:
		var s byteSet
		for i := 0; i+1 < len(re.Rune); i += 2 {
			lo, hi := re.Rune[i], re.Rune[i+1]
			if hi >= 0x80 {
				return nil // a non-ASCII rune has no single byte to look for
			}
			for c := lo; c <= hi; c++ {
				s.addFold(byte(c), fold)
			}
		}
		return &s
	case syntax.OpCapture, syntax.OpPlus:
		return requiredOf(re.Sub[0])
	case syntax.OpRepeat:
		if re.Min >= 1 {
			return requiredOf(re.Sub[0])
		}
		return nil
	case syntax.OpConcat:
		var best *byteSet
		for _, sub := range re.Sub {
			if s := requiredOf(sub); s != nil && (best == nil || s.cost() < best.cost()) {
				best = s
			}
		}
		return best
	case syntax.OpAlternate:
		var u byteSet
		for _, sub := range re.Sub {
			s := requiredOf(sub)
			if s == nil {
				return nil
			}
			u.union(s)
		}
		return &u
	}
	return nil
}

// cost ranks sets for required: fewer bytes first, and between sets of one
// size the one without letters or digits, which are rarer in text.
func (b *byteSet) cost() int {
	alnum := 0
	if b[0]&(0x3ff<<48) != 0 || b[1]&(0x7fffffe<<32|0x7fffffe) != 0 {
		alnum = 1
	}
	return 2*b.size() + alnum
}
