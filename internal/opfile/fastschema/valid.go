package fastschema

import (
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"slices"
	"strconv"
	"unicode/utf8"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// node is one compiled schema. Every check mirrors the library's validator
// (validator.go of santhosh-tekuri/jsonschema/v6); the order differs, which
// cannot change a verdict that is the conjunction of them all.
type node struct {
	never, always bool // the boolean schemas false and true

	types       jsonType // 0: any
	consts      []any    // const: the one value, or none
	enum        []any
	enumStrings map[string]bool // enum when all of it is strings
	format      *jsonschema.Format

	ref, not            *node
	allOf, anyOf, oneOf []*node
	ifn, then, els      *node

	minProps          int // -1: no bound, as every bound below
	maxProps          int
	props             map[string]*prop
	propList          []prop   // props again, for walking them
	requiredBits      uint64   // the bits of the required properties in props
	requiredElsewhere []string // the required properties without a bit
	dependentRequired map[string][]string
	patternProps      []patternNode
	additional        *node // nil: anything goes

	minItems, maxItems int
	unique             bool
	prefix             []*node
	items              *node

	minLen, maxLen int
	pattern        jsonschema.Regexp
	encoding       *jsonschema.Decoder
	mediaType      *jsonschema.MediaType

	bounds     []bound
	multipleOf *number
}

// prop is a property a schema names. Its bit marks it as seen, when it is
// required, so that a walk of the object checks required for free.
type prop struct {
	name string
	n    *node
	bit  uint64
}

type patternNode struct {
	re jsonschema.Regexp
	n  *node
}

// bound is minimum, maximum or an exclusive one: ok says whether the sign
// of value minus bound passes.
type bound struct {
	num number
	ok  func(cmp int) bool
}

type jsonType uint8

const (
	tNull jsonType = 1 << iota
	tBoolean
	tNumber
	tInteger
	tString
	tArray
	tObject
)

// typeOf is the library's typeOf restricted to decoded JSON values: 0 for
// anything else, which the fast path then finds invalid.
func typeOf(v any) jsonType {
	switch v := v.(type) {
	case nil:
		return tNull
	case bool:
		return tBoolean
	case json.Number:
		return tNumber
	case float64:
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return 0
		}
		return tNumber
	case string:
		return tString
	case []any:
		return tArray
	case map[string]any:
		return tObject
	}
	return 0
}

func (n *node) valid(v any) bool {
	if n.never || n.always {
		return n.always // a boolean schema checks nothing, not even the type
	}
	t := typeOf(v)
	if t == 0 {
		return false
	}
	if n.types != 0 && n.types&t == 0 && (n.types&tInteger == 0 || t != tNumber || !isInteger(v)) {
		return false
	}
	if n.consts != nil && !equal(v, n.consts[0]) {
		return false
	}
	if n.enum != nil && !n.inEnum(v) {
		return false
	}
	if n.format != nil && n.format.Validate(v) != nil {
		return false
	}
	if n.ref != nil && !n.ref.valid(v) {
		return false
	}
	switch t {
	case tObject:
		if !n.validObject(v.(map[string]any)) {
			return false
		}
	case tArray:
		if !n.validArray(v.([]any)) {
			return false
		}
	case tString:
		if !n.validString(v.(string)) {
			return false
		}
	case tNumber:
		if !n.validNumber(v) {
			return false
		}
	}
	return n.validApplied(v)
}

func (n *node) inEnum(v any) bool {
	if n.enumStrings != nil {
		s, ok := v.(string)
		return ok && n.enumStrings[s]
	}
	return slices.ContainsFunc(n.enum, func(e any) bool { return equal(v, e) })
}

func (n *node) validObject(obj map[string]any) bool {
	if n.minProps >= 0 && len(obj) < n.minProps || n.maxProps >= 0 && len(obj) > n.maxProps {
		return false
	}
	var seen uint64
	if n.patternProps == nil && n.additional == nil && len(n.propList) <= len(obj) {
		// Only the named properties are checked: look them up rather
		// than walk the larger object.
		for i := range n.propList {
			p := &n.propList[i]
			if val, ok := obj[p.name]; ok {
				if !p.n.valid(val) {
					return false
				}
				seen |= p.bit
			}
		}
	} else {
		for name, val := range obj {
			p, evaluated := n.props[name]
			if evaluated {
				if !p.n.valid(val) {
					return false
				}
				seen |= p.bit
			}
			for _, pp := range n.patternProps {
				if pp.re.MatchString(name) {
					evaluated = true
					if !pp.n.valid(val) {
						return false
					}
				}
			}
			if !evaluated && n.additional != nil && !n.additional.valid(val) {
				return false
			}
		}
	}
	if seen&n.requiredBits != n.requiredBits {
		return false
	}
	for _, p := range n.requiredElsewhere {
		if _, ok := obj[p]; !ok {
			return false
		}
	}
	for p, reqd := range n.dependentRequired {
		if _, ok := obj[p]; ok {
			for _, r := range reqd {
				if _, ok := obj[r]; !ok {
					return false
				}
			}
		}
	}
	return true
}

func (n *node) validArray(arr []any) bool {
	if n.minItems >= 0 && len(arr) < n.minItems || n.maxItems >= 0 && len(arr) > n.maxItems {
		return false
	}
	if n.unique && len(arr) > 1 && !unique(arr) {
		return false
	}
	for i, x := range arr {
		s := n.items
		if i < len(n.prefix) {
			s = n.prefix[i]
		}
		if s != nil && !s.valid(x) {
			return false
		}
	}
	return true
}

func (n *node) validString(s string) bool {
	if n.minLen >= 0 || n.maxLen >= 0 {
		// JSON Schema counts characters, as the library does: runes, an
		// invalid byte counting as one.
		l := utf8.RuneCountInString(s)
		if n.minLen >= 0 && l < n.minLen || n.maxLen >= 0 && l > n.maxLen {
			return false
		}
	}
	if n.pattern != nil && !n.pattern.MatchString(s) {
		return false
	}
	decoded := []byte(nil)
	if n.encoding != nil {
		var err error
		if decoded, err = n.encoding.Decode(s); err != nil {
			return false
		}
	} else if n.mediaType != nil {
		decoded = []byte(s)
	}
	// The library checks the media type only of what decoded to non-nil.
	return n.mediaType == nil || decoded == nil || n.mediaType.Validate(decoded) == nil
}

func (n *node) validNumber(v any) bool {
	if n.bounds == nil && n.multipleOf == nil {
		return true
	}
	x := newNumber(v)
	for _, b := range n.bounds {
		c, ok := x.cmp(&b.num)
		if !ok || !b.ok(c) {
			return false
		}
	}
	if m := n.multipleOf; m != nil {
		if x.isSmall && m.isSmall {
			return x.small%m.small == 0
		}
		r := x.rat()
		return r != nil && new(big.Rat).Quo(r, m.r).IsInt()
	}
	return true
}

// validApplied checks the keywords that apply other schemas to the same
// value.
func (n *node) validApplied(v any) bool {
	if n.not != nil && n.not.valid(v) {
		return false
	}
	for _, s := range n.allOf {
		if !s.valid(v) {
			return false
		}
	}
	if n.anyOf != nil && !slices.ContainsFunc(n.anyOf, func(s *node) bool { return s.valid(v) }) {
		return false
	}
	if n.oneOf != nil {
		matched := 0
		for _, s := range n.oneOf {
			if s.valid(v) {
				if matched++; matched > 1 {
					return false
				}
			}
		}
		if matched == 0 {
			return false
		}
	}
	if n.ifn != nil {
		next := n.els
		if n.ifn.valid(v) {
			next = n.then
		}
		return next == nil || next.valid(v)
	}
	return true
}

// number is a JSON number as the library reads it: the text fmt.Sprint
// gives, as an exact rational. Integers of up to 18 digits, most numbers,
// are held without allocating.
type number struct {
	v       any
	small   int64
	isSmall bool // small holds the exact value
	r       *big.Rat
	parsed  bool // r was computed; nil if the library cannot read the text
}

func newNumber(v any) number {
	x := number{v: v}
	switch v := v.(type) {
	case json.Number:
		x.small, x.isSmall = smallInt(string(v))
	case float64:
		// Below 2^53 an integral float64 prints as its integer.
		if v == math.Trunc(v) && math.Abs(v) < 1<<53 {
			x.small, x.isSmall = int64(v), true
		}
	}
	return x
}

// smallInt reads an optionally negative run of at most 18 digits.
func smallInt(s string) (int64, bool) {
	digits := s
	if len(digits) > 0 && digits[0] == '-' {
		digits = digits[1:]
	}
	if len(digits) == 0 || len(digits) > 18 {
		return 0, false
	}
	for i := range len(digits) {
		if digits[i] < '0' || digits[i] > '9' {
			return 0, false
		}
	}
	i, err := strconv.ParseInt(s, 10, 64)
	return i, err == nil
}

func (x *number) rat() *big.Rat {
	if !x.parsed {
		x.parsed = true
		if x.isSmall {
			x.r = new(big.Rat).SetInt64(x.small)
		} else {
			x.r, _ = new(big.Rat).SetString(fmt.Sprint(x.v))
		}
	}
	return x.r
}

// cmp compares x with y; false when x is a number the library cannot read
// (its validator then panics on the comparison; the fast path leaves it to
// do so).
func (x *number) cmp(y *number) (int, bool) {
	if x.isSmall && y.isSmall {
		switch {
		case x.small < y.small:
			return -1, true
		case x.small > y.small:
			return 1, true
		}
		return 0, true
	}
	r := x.rat()
	if r == nil {
		return 0, false
	}
	return r.Cmp(y.rat()), true
}

func isInteger(v any) bool {
	x := newNumber(v)
	if x.isSmall {
		return true
	}
	r := x.rat()
	return r != nil && r.IsInt()
}

// equal is the library's equality of JSON values: numbers by value (1 and
// 1.0 are equal), objects by their members, arrays by position.
func equal(a, b any) bool {
	switch a := a.(type) {
	case map[string]any:
		b, ok := b.(map[string]any)
		if !ok || len(a) != len(b) {
			return false
		}
		for k, x := range a {
			y, ok := b[k]
			if !ok || !equal(x, y) {
				return false
			}
		}
		return true
	case []any:
		b, ok := b.([]any)
		return ok && slices.EqualFunc(a, b, equal)
	case nil:
		return b == nil
	case bool:
		b, ok := b.(bool)
		return ok && a == b
	case string:
		b, ok := b.(string)
		return ok && a == b
	case json.Number, float64:
		if typeOf(b) != tNumber {
			return false
		}
		x, y := newNumber(a), newNumber(b)
		if x.isSmall && y.isSmall {
			return x.small == y.small
		}
		rx, ry := x.rat(), y.rat()
		return rx != nil && ry != nil && rx.Cmp(ry) == 0
	}
	return false
}

// unique reports whether no two items of arr are equal. Like the library,
// it compares pairs in short arrays; in longer ones it compares keys.
func unique(arr []any) bool {
	if !inDomain(arr) {
		return false
	}
	if len(arr) <= 20 {
		for i := 1; i < len(arr); i++ {
			for j := range i {
				if equal(arr[i], arr[j]) {
					return false
				}
			}
		}
		return true
	}
	seen := make(map[string]bool, len(arr))
	for _, x := range arr {
		k, ok := appendKey(nil, x)
		if !ok || seen[string(k)] {
			return false
		}
		seen[string(k)] = true
	}
	return true
}

// appendKey appends to b a key of v that is the same for two values
// exactly when they are equal; false for a number the library cannot read
// (hashing a long array, its validator panics on one; the fast path leaves
// it to do so).
func appendKey(b []byte, v any) ([]byte, bool) {
	ok := true
	switch v := v.(type) {
	case nil:
		b = append(b, 'n')
	case bool:
		b = append(b, 'f')
		if v {
			b[len(b)-1] = 't'
		}
	case string:
		b = appendString(b, v)
	case json.Number, float64:
		x := newNumber(v)
		b = append(b, 'd')
		if x.isSmall {
			b = append(strconv.AppendInt(b, x.small, 10), "/1"...)
		} else if r := x.rat(); r != nil {
			b = append(b, r.String()...) // "num/denom", normalised
		} else {
			return b, false
		}
	case []any:
		b = strconv.AppendInt(append(b, '['), int64(len(v)), 10)
		for _, x := range v {
			if b, ok = appendKey(b, x); !ok {
				return b, false
			}
		}
	case map[string]any:
		b = strconv.AppendInt(append(b, '{'), int64(len(v)), 10)
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			if b, ok = appendKey(appendString(b, k), v[k]); !ok {
				return b, false
			}
		}
	default:
		return b, false
	}
	return b, true
}

// appendString appends s with its length, so that keys never run together.
func appendString(b []byte, s string) []byte {
	b = strconv.AppendInt(append(b, 's'), int64(len(s)), 10)
	return append(append(b, ':'), s...)
}
