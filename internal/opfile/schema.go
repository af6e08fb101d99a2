package opfile

import (
	"bytes"
	"errors"
	"fmt"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"

	"github.com/gatedhq/gated/internal/opfile/fastschema"
)

// refuseLoader makes every $ref that leaves the schema document an error:
// loading never touches the network or other files.
type refuseLoader struct{}

func (refuseLoader) Load(url string) (any, error) {
	return nil, fmt.Errorf("external reference %q is not allowed: a schema must be self-contained", url)
}

// Schema is a compiled schema: the library's, which callers may read (the
// contract counts its properties, the catalog looks for writeOnly), and
// when fastschema decides all of it, a fast validator. Validate and Leaves
// ask the fast validator first: most documents are valid, and it says so
// without the library's error tree. What it finds invalid goes to the
// library, so violations are always worded by the library. (The embedded
// schema's own Validate method is the library's alone.)
type Schema struct {
	*jsonschema.Schema
	fast   *fastschema.Validator
	noFast error // why fast is nil
}

// FastPath reports why valid documents cannot skip the library, or nil
// when they do; tests use it to keep the fast path from going unused.
func (s *Schema) FastPath() error { return s.noFast }

// CompileSchema compiles doc, a JSON value with json.Number numbers, as the
// schema at url: draft 2020-12 unless it declares another $schema, and
// self-contained. Formats and content encodings are asserted: a date-time
// that is not one, or base64 that does not decode, is as invalid as a
// wrong type.
func CompileSchema(url string, doc any) (*Schema, error) {
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.UseLoader(refuseLoader{})
	c.AssertFormat()
	c.AssertContent()
	if err := c.AddResource(url, doc); err != nil {
		return nil, err
	}
	sch, err := c.Compile(url)
	if err != nil {
		return nil, err
	}
	fast, noFast := fastschema.Compile(sch)
	return &Schema{Schema: sch, fast: fast, noFast: noFast}, nil
}

// MustCompileSchema compiles one of gated's own schemas (JSON text) with
// CompileSchema. They are constants of the program, so a failure is a
// build defect and panics (each package's tests compile its schemas).
func MustCompileSchema(url string, data []byte) *Schema {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		panic(fmt.Sprintf("schema %s is not JSON: %v", url, err))
	}
	sch, err := CompileSchema(url, doc)
	if err != nil {
		panic(fmt.Sprintf("schema %s: %v", url, err))
	}
	return sch
}

var english = message.NewPrinter(language.English)

// Message is the validator's own English description of a violation. It
// may quote the value at fault.
func Message(k jsonschema.ErrorKind) string { return k.LocalizedString(english) }

// Violation is one way a document breaks its schema.
type Violation struct {
	Path    []string // the value at fault, as JSON Pointer tokens; none for the whole document
	Keyword string   // the keyword that failed ("required", "pattern"…), or "schema"
	Message string
}

// Pointer is the violation's location as a JSON Pointer.
func (v Violation) Pointer() string { return Pointer(v.Path...) }

// Code names the kind of violation for a Problem.
func (v Violation) Code() string {
	switch v.Keyword {
	case "required":
		return "missing_field"
	case "additionalProperties":
		return "unknown_field"
	case "type":
		return "invalid_type"
	case "pattern":
		return "invalid_format"
	case "enum", "const", "anyOf", "oneOf":
		return "invalid_value"
	case "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum":
		return "out_of_range"
	case "minLength", "maxLength", "minItems", "maxItems", "minProperties", "maxProperties":
		return "invalid_length"
	case "uniqueItems":
		return "duplicate_items"
	}
	return "schema_violation"
}

// Validate checks doc against sch and lists the violations the way a
// person fixing the file wants them: a missing or unknown property at the
// property's own path, and a failed anyOf or oneOf once, with the forms it
// tried, rather than once per form. msg words each violation.
func Validate(sch *Schema, doc any, msg func(jsonschema.ErrorKind) string) []Violation {
	return check(sch, doc, msg, group)
}

// Leaves checks doc against sch and lists the leaves of the validator's
// error tree as they are, for answers whose form is fixed elsewhere (the
// contract's validation_errors follow the reference implementation).
func Leaves(sch *Schema, doc any, msg func(jsonschema.ErrorKind) string) []Violation {
	return check(sch, doc, msg, leaves)
}

type flattener func(ve *jsonschema.ValidationError, msg func(jsonschema.ErrorKind) string, out []Violation) []Violation

func check(sch *Schema, doc any, msg func(jsonschema.ErrorKind) string, flatten flattener) []Violation {
	if sch.fast != nil && sch.fast.Valid(doc) {
		return nil
	}
	err := sch.Schema.Validate(doc)
	if err == nil {
		return nil
	}
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		// The validator documents no other error; should one come, it is
		// still a failure of the whole document, never a pass.
		return []Violation{{Keyword: "schema", Message: err.Error()}}
	}
	return flatten(ve, msg, nil)
}

func group(ve *jsonschema.ValidationError, msg func(jsonschema.ErrorKind) string, out []Violation) []Violation {
	switch k := ve.ErrorKind.(type) {
	case *kind.AnyOf, *kind.OneOf:
		var alts []string
		for _, c := range ve.Causes {
			for _, l := range group(c, msg, nil) {
				alts = append(alts, l.Message)
			}
		}
		m := msg(k)
		if len(alts) > 0 {
			m = "matches none of the allowed forms: " + strings.Join(alts, "; or ")
		}
		return append(out, Violation{Path: ve.InstanceLocation, Keyword: keyword(k), Message: m})
	case *kind.Required:
		for _, p := range k.Missing {
			out = append(out, Violation{Path: appendPath(ve.InstanceLocation, p), Keyword: "required", Message: "is required"})
		}
		return out
	case *kind.AdditionalProperties:
		for _, p := range k.Properties {
			out = append(out, Violation{Path: appendPath(ve.InstanceLocation, p), Keyword: "additionalProperties", Message: "is not an allowed field"})
		}
		return out
	}
	if len(ve.Causes) == 0 {
		return append(out, Violation{Path: ve.InstanceLocation, Keyword: keyword(ve.ErrorKind), Message: msg(ve.ErrorKind)})
	}
	for _, c := range ve.Causes {
		out = group(c, msg, out)
	}
	return out
}

func leaves(ve *jsonschema.ValidationError, msg func(jsonschema.ErrorKind) string, out []Violation) []Violation {
	if len(ve.Causes) == 0 {
		return append(out, Violation{Path: ve.InstanceLocation, Keyword: keyword(ve.ErrorKind), Message: msg(ve.ErrorKind)})
	}
	for _, c := range ve.Causes {
		out = leaves(c, msg, out)
	}
	return out
}

func keyword(k jsonschema.ErrorKind) string {
	if p := k.KeywordPath(); len(p) > 0 {
		return p[0]
	}
	return "schema"
}

func appendPath(base []string, tok string) []string {
	return append(append([]string(nil), base...), tok)
}
