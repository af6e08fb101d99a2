package catalog

import (
	"cmp"
	"fmt"
	"math/big"
	"slices"
	"strconv"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"

	"github.com/gatedhq/gated/internal/opfile"
)

// ArgumentError is one way proposed_arguments fail the tool's input schema.
// It names where and which rule, never the offending value: arguments may
// hold secrets or personal data and the decision is logged and audited.
type ArgumentError struct {
	Path    string `json:"path"`    // JSON pointer into proposed_arguments; "" is the whole object
	Keyword string `json:"keyword"` // the JSON Schema keyword that failed
	Message string `json:"message"`
}

func (e ArgumentError) String() string {
	p := e.Path
	if p == "" {
		p = "/"
	}
	return p + ": " + e.Message
}

// maxArgumentErrors bounds what a single decision carries: an attacker-sized
// argument object must not produce an attacker-sized answer.
const maxArgumentErrors = 20

// MaxArgumentValues bounds the values (scalars, arrays and objects) of one
// call's arguments that are checked against an input schema. The validator
// spends one to ten microseconds on each (exact rationals for numbers,
// regexes for patterns and formats), so a 64 KiB body of tiny values cost
// 20 to 130 ms against an ordinary schema; with the bound, 15 ms at most.
// Arguments with more fail validation: refused in enforce mode.
const MaxArgumentValues = 1024

// ValidateArguments checks proposed arguments against the view's input
// schema. It returns nil when they conform or when the view has no schema.
// The validator turns numbers into exact rationals, so the arguments must
// have passed contract.Prepare, which refuses numbers too large for that.
func (v *View) ValidateArguments(args map[string]any) []ArgumentError {
	if v.input == nil {
		return nil
	}
	if countValues(args, MaxArgumentValues) > MaxArgumentValues {
		return []ArgumentError{{Keyword: "maxValues",
			Message: fmt.Sprintf("holds more than %d values, more than gated checks against an input schema", MaxArgumentValues)}}
	}
	var doc any = args
	if args == nil {
		doc = map[string]any{}
	}
	vs := opfile.Validate(v.input, doc, safeMessage)
	if len(vs) == 0 {
		return nil
	}
	// The validator walks objects in map order: sorted, the answer (and
	// which errors the cap keeps) is the same for the same arguments.
	slices.SortFunc(vs, func(a, b opfile.Violation) int {
		return cmp.Or(slices.Compare(a.Path, b.Path), strings.Compare(a.Keyword, b.Keyword), strings.Compare(a.Message, b.Message))
	})
	out := make([]ArgumentError, min(len(vs), maxArgumentErrors))
	for i := range out {
		out[i] = ArgumentError{Path: vs[i].Pointer(), Keyword: vs[i].Keyword, Message: vs[i].Message}
	}
	return out
}

// countValues counts v and the values inside it, stopping once the count
// passes limit.
func countValues(v any, limit int) int {
	n := 1
	switch v := v.(type) {
	case map[string]any:
		for _, x := range v {
			if n += countValues(x, limit-n); n > limit {
				return n
			}
		}
	case []any:
		for _, x := range v {
			if n += countValues(x, limit-n); n > limit {
				return n
			}
		}
	}
	return n
}

// safeMessage describes a violation from the schema's side only. The
// library's own texts quote the value for pattern, format and the numeric
// bounds, so those are rewritten; the rest mention types, schema constants
// and property names only.
func safeMessage(k jsonschema.ErrorKind) string {
	switch k := k.(type) {
	case *kind.Pattern:
		return fmt.Sprintf("does not match pattern %q", k.Want)
	case *kind.Format:
		return "is not a valid " + k.Want
	case *kind.Minimum:
		return "must be >= " + number(k.Want)
	case *kind.Maximum:
		return "must be <= " + number(k.Want)
	case *kind.ExclusiveMinimum:
		return "must be > " + number(k.Want)
	case *kind.ExclusiveMaximum:
		return "must be < " + number(k.Want)
	case *kind.MultipleOf:
		return "must be a multiple of " + number(k.Want)
	case *kind.MinLength:
		return fmt.Sprintf("must be at least %d characters", k.Want)
	case *kind.MaxLength:
		return fmt.Sprintf("must be at most %d characters", k.Want)
	case *kind.ContentEncoding:
		return "is not " + k.Want + " encoded"
	case *kind.ContentMediaType:
		return "is not of media type " + k.Want
	case *kind.InvalidJsonValue:
		return "is not a JSON value"
	case *kind.Type, *kind.Enum, *kind.Const,
		*kind.PropertyNames, *kind.MinItems, *kind.MaxItems, *kind.MinProperties, *kind.MaxProperties,
		*kind.UniqueItems, *kind.Contains, *kind.MinContains, *kind.MaxContains, *kind.AdditionalItems,
		*kind.Dependency, *kind.DependentRequired, *kind.FalseSchema, *kind.Not:
		return opfile.Message(k)
	}
	return "fails '" + strings.Join(k.KeywordPath(), "/") + "'"
}

// number renders a schema bound the way it was probably written.
func number(r *big.Rat) string {
	f, _ := r.Float64()
	return strconv.FormatFloat(f, 'g', -1, 64)
}

// SensitiveArguments lists, as JSON Pointers, the arguments the tool's
// input schema marks writeOnly (JSON Schema's annotation for a value that
// is sent and never shown back, such as a password or a card number): an
// approver's preview masks them. It follows properties, $ref and allOf,
// to a bounded depth; arrays are not entered (a pointer names one value).
func (v *View) SensitiveArguments() []string {
	if v == nil || v.input == nil {
		return nil
	}
	var out []string
	var walk func(s *jsonschema.Schema, at string, depth int)
	walk = func(s *jsonschema.Schema, at string, depth int) {
		if s == nil || depth > 16 {
			return
		}
		if s.WriteOnly && at != "" {
			out = append(out, at)
			return
		}
		walk(s.Ref, at, depth+1)
		for _, sub := range s.AllOf {
			walk(sub, at, depth+1)
		}
		for name, p := range s.Properties {
			walk(p, at+opfile.Pointer(name), depth+1)
		}
	}
	walk(v.input.Schema, "", 0)
	slices.Sort(out)
	return slices.Compact(out)
}
