package catalog

import (
	"fmt"
	"math/big"
	"strconv"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
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

// ValidateArguments checks proposed arguments against the view's input
// schema. It returns nil when they conform or when the view has no schema.
func (v *View) ValidateArguments(args map[string]any) []ArgumentError {
	if v.input == nil {
		return nil
	}
	var doc any = args
	if args == nil {
		doc = map[string]any{}
	}
	errs := validate(v.input, doc, safeMessage)
	out := make([]ArgumentError, 0, min(len(errs), maxArgumentErrors))
	for _, e := range errs {
		if len(out) == maxArgumentErrors {
			break
		}
		out = append(out, ArgumentError{Path: e.pointer(), Keyword: e.Keyword, Message: e.Message})
	}
	return out
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
		return k.LocalizedString(printer)
	}
	return "fails '" + strings.Join(k.KeywordPath(), "/") + "'"
}

// number renders a schema bound the way it was probably written.
func number(r *big.Rat) string {
	f, _ := r.Float64()
	return strconv.FormatFloat(f, 'g', -1, 64)
}
