package contract

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Bounds on what one event may hold. Prepare checks them on the document as
// decoded, before it copies, normalises or validates anything, so an event
// that breaks one costs no more than reading it once.
const (
	// MaxEvidenceRefs bounds the evidence refs of one event. Each ref costs
	// a few microseconds to validate and check, and normalising one
	// allocates several hundred bytes; no real decision rests on more.
	MaxEvidenceRefs = 128
	// MaxEvidenceClaims bounds the supports and contradicts lists of one
	// ref, which the typed event copies.
	MaxEvidenceClaims = 64

	// A JSON number is read as an integer of significant digits (leading
	// zeros dropped) times 10^k, where k is the written exponent less the
	// digits after the decimal point. JSON Schema validation turns numbers
	// into exact rationals, whose cost grows with both, so 1e999999 costs
	// tens of milliseconds and megabytes. The bounds keep every IEEE double
	// as any encoder writes it (at most 17 significant digits, |k| ≤ 340)
	// and every 128-bit integer (39 digits), and make the largest rational
	// about 1,500 bits.
	MaxNumberDigits   = 40
	MaxNumberExponent = 400
)

// maxNumberErrors bounds the out-of-range numbers one answer lists.
const maxNumberErrors = 10

// The fields the contract defines at the top level and in an evidence ref:
// an object with more has unknown fields, which the schema refuses anyway.
var (
	eventFields = len(contractSchema.Properties)
	refFields   = len(contractSchema.Properties["evidence_refs"].Items2020.Properties)
)

// sizeErrors reports the arrays and objects Prepare would copy that are
// larger than gated accepts.
func sizeErrors(doc map[string]any) []ValidationError {
	var out []ValidationError
	if len(doc) > eventFields {
		out = append(out, ValidationError{Path: "$", Keyword: "maxProperties",
			Message: fmt.Sprintf("an event has at most %d fields (those the contract defines), got %d", eventFields, len(doc))})
	}
	refs, _ := doc["evidence_refs"].([]any)
	if len(refs) > MaxEvidenceRefs {
		return append(out, ValidationError{Path: "$.evidence_refs", Keyword: "maxItems",
			Message: fmt.Sprintf("gated accepts at most %d evidence refs, got %d", MaxEvidenceRefs, len(refs))})
	}
	for i, r := range refs {
		m, ok := r.(map[string]any)
		if !ok {
			continue
		}
		if len(m) > refFields {
			out = append(out, ValidationError{Path: fmt.Sprintf("$.evidence_refs[%d]", i), Keyword: "maxProperties",
				Message: fmt.Sprintf("an evidence ref has at most %d fields (those the contract defines), got %d", refFields, len(m))})
		}
		for _, k := range [...]string{"supports", "contradicts"} {
			if a, _ := m[k].([]any); len(a) > MaxEvidenceClaims {
				out = append(out, ValidationError{Path: fmt.Sprintf("$.evidence_refs[%d].%s", i, k), Keyword: "maxItems",
					Message: fmt.Sprintf("gated accepts at most %d entries here, got %d", MaxEvidenceClaims, len(a))})
			}
		}
	}
	return out
}

// NumbersInRange reports whether every number in v is within the bounds.
// It allocates nothing, so the common case costs one walk.
func NumbersInRange(v any) bool {
	switch v := v.(type) {
	case map[string]any:
		for _, x := range v {
			if !NumbersInRange(x) {
				return false
			}
		}
	case []any:
		for _, x := range v {
			if !NumbersInRange(x) {
				return false
			}
		}
	case json.Number:
		return numberInRange(string(v))
	case float64: // an event built in Go rather than decoded
		return !math.IsNaN(v) && !math.IsInf(v, 0)
	}
	return true
}

// numberErrors locates the numbers out of range in doc, walking keys in
// sorted order so the answer is the same whatever the map order. Only an
// event that failed NumbersInRange pays for the sorting; paths are
// rendered for the numbers reported only.
func numberErrors(doc map[string]any) []ValidationError {
	var out []ValidationError
	var at []string // the path so far, as JSON pointer tokens
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			keys := make([]string, 0, len(v))
			for k := range v {
				keys = append(keys, k)
			}
			slices.Sort(keys)
			for _, k := range keys {
				if len(out) == maxNumberErrors {
					return
				}
				at = append(at, k)
				walk(v[k])
				at = at[:len(at)-1]
			}
		case []any:
			for i, x := range v {
				if len(out) == maxNumberErrors {
					return
				}
				at = append(at, strconv.Itoa(i))
				walk(x)
				at = at[:len(at)-1]
			}
		default:
			if !NumbersInRange(v) {
				out = append(out, ValidationError{Path: jsonPath(at, doc), Keyword: "numberRange", Message: fmt.Sprintf(
					"a number must have at most %d significant digits and an exponent within ±%d", MaxNumberDigits, MaxNumberExponent)})
			}
		}
	}
	walk(doc)
	return out
}

// numberInRange checks one number as written (JSON number syntax; anything
// else is out of range). It reads the text only: no arithmetic beyond the
// exponent, which it stops reading once it is far out of range.
func numberInRange(s string) bool {
	i, sig, frac := 0, 0, 0
	if i < len(s) && s[i] == '-' {
		i++
	}
	digits := func() int {
		start := i
		for ; i < len(s) && '0' <= s[i] && s[i] <= '9'; i++ {
			if s[i] != '0' || sig > 0 {
				sig++
			}
		}
		return i - start
	}
	if digits() == 0 {
		return false
	}
	if i < len(s) && s[i] == '.' {
		i++
		if frac = digits(); frac == 0 {
			return false
		}
	}
	if sig > MaxNumberDigits {
		return false
	}
	exp := 0
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		neg := false
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			neg = s[i] == '-'
			i++
		}
		start := i
		for ; i < len(s) && '0' <= s[i] && s[i] <= '9'; i++ {
			if exp = exp*10 + int(s[i]-'0'); exp > 1<<30 {
				return false
			}
		}
		if i == start {
			return false
		}
		if neg {
			exp = -exp
		}
	}
	k := exp - frac
	return i == len(s) && -MaxNumberExponent <= k && k <= MaxNumberExponent
}

// printable reports whether s is valid UTF-8 without control characters,
// invisible formatting characters (zero-width, bidirectional overrides),
// line and paragraph separators or U+FFFD (what a lenient decoder made of
// invalid bytes). Identifiers with them can hide what they name from a
// person reading a log or an answer, and PostgreSQL text cannot hold NUL.
func printable(s string) bool {
	// ASCII first, by byte: its only refused characters are the C0 controls
	// and DEL (Cf, Zl and Zp have none below U+0080), and unicode.In's
	// table search is most of the cost of an identifier.
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= utf8.RuneSelf {
			return printableUnicode(s[i:])
		}
		if c < 0x20 || c == 0x7f {
			return false
		}
	}
	return true
}

func printableUnicode(s string) bool {
	for _, r := range s {
		if r == utf8.RuneError || unicode.In(r, unicode.Cc, unicode.Cf, unicode.Zl, unicode.Zp) {
			return false
		}
	}
	return true
}

// clean replaces what printable refuses by U+FFFD, so that what the answer
// and the audit record say about an invalid event is printable too.
func clean(s string) string {
	if printable(s) {
		return s
	}
	return strings.Map(func(r rune) rune {
		if unicode.In(r, unicode.Cc, unicode.Cf, unicode.Zl, unicode.Zp) {
			return utf8.RuneError
		}
		return r
	}, s)
}

// identifierErrors reports the identifiers of doc that are not printable:
// the tool, agent and request names, evidence source ids and the subject.
// The reference allows any string there; gated does not.
func identifierErrors(doc map[string]any) []ValidationError {
	var out []ValidationError
	bad := func(v any) bool { s, ok := v.(string); return ok && !printable(s) }
	add := func(path string) {
		out = append(out, ValidationError{Path: path, Keyword: "printable",
			Message: "must not contain control characters, invisible formatting characters or line separators"})
	}
	for _, f := range [...]string{"tool_name", "agent_id", "request_id"} {
		if bad(doc[f]) {
			add("$." + f)
		}
	}
	if s, ok := doc["authorization_subject"].(map[string]any); ok && bad(s["subject_ref"]) {
		add("$.authorization_subject.subject_ref")
	}
	refs, _ := doc["evidence_refs"].([]any)
	for i, r := range refs {
		switch r := r.(type) {
		case string:
			if bad(r) {
				add(fmt.Sprintf("$.evidence_refs[%d]", i))
			}
		case map[string]any:
			if bad(r["source_id"]) {
				add(fmt.Sprintf("$.evidence_refs[%d].source_id", i))
			}
		}
	}
	return out
}

// sortByPath orders validation errors by path, so answers are stable.
func sortByPath(errs []ValidationError) {
	sort.SliceStable(errs, func(i, j int) bool { return errs[i].Path < errs[j].Path })
}
