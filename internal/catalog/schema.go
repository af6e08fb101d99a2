package catalog

import (
	"bytes"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// The frontmatter schemas of the four formats. action-md is agentproto's
// ACTION.schema.json unchanged; the others say in their description how
// they differ from their source.
//
//go:embed schemas/*.json
var schemaFiles embed.FS

var (
	actionMDSchema    = mustCompileEmbedded("action-md.schema.json")
	toolMDSchema      = mustCompileEmbedded("tool-md.schema.json")
	actionsYAMLSchema = mustCompileEmbedded("actions-yaml.schema.json")
	actionJSONSchema  = mustCompileEmbedded("action-json.schema.json")
)

var printer = message.NewPrinter(language.English)

// mustCompileEmbedded compiles one of the package's own schemas; they are
// constants of the program, so a failure is a build defect (and a test
// compiles them all).
func mustCompileEmbedded(name string) *jsonschema.Schema {
	b, err := schemaFiles.ReadFile("schemas/" + name)
	if err != nil {
		panic(err)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		panic(fmt.Sprintf("schema %s: %v", name, err))
	}
	c := newCompiler()
	if err := c.AddResource(name, doc); err != nil {
		panic(err)
	}
	return c.MustCompile(name)
}

// refuseLoader makes every $ref that leaves the schema document an error:
// loading a catalog never touches the network or other files.
type refuseLoader struct{}

func (refuseLoader) Load(url string) (any, error) {
	return nil, fmt.Errorf("external reference %q is not allowed: a catalog schema must be self-contained", url)
}

func newCompiler() *jsonschema.Compiler {
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.UseLoader(refuseLoader{})
	return c
}

// compileInputSchema compiles an operator-supplied input schema (already a
// JSON value with json.Number numbers), each in a compiler of its own.
func compileInputSchema(doc any) (*jsonschema.Schema, error) {
	c := newCompiler()
	// Arguments are checked strictly: an e-mail that is not an e-mail or
	// base64 that does not decode is as invalid as a wrong type.
	c.AssertFormat()
	c.AssertContent()
	const url = "urn:gated:input-schema"
	if err := c.AddResource(url, doc); err != nil {
		return nil, err
	}
	return c.Compile(url)
}

// fieldError is one schema violation, located in the validated document.
type fieldError struct {
	Path    []string // instance location, one token per level
	Keyword string
	Message string
}

// field renders the location as a dotted path with [i] for array indexes,
// the form Problems use ("actions[2].inputSchema").
func (e fieldError) field() string {
	var sb strings.Builder
	for _, tok := range e.Path {
		if _, err := strconv.Atoi(tok); err == nil {
			sb.WriteString("[" + tok + "]")
			continue
		}
		if sb.Len() > 0 {
			sb.WriteByte('.')
		}
		sb.WriteString(tok)
	}
	return sb.String()
}

// pointerEscaper escapes one JSON pointer token (RFC 6901).
var pointerEscaper = strings.NewReplacer("~", "~0", "/", "~1")

// pointer renders the location as a JSON pointer ("/items/0/sku").
func (e fieldError) pointer() string {
	var sb strings.Builder
	for _, tok := range e.Path {
		sb.WriteByte('/')
		sb.WriteString(pointerEscaper.Replace(tok))
	}
	return sb.String()
}

// code names the kind of violation for a Problem.
func (e fieldError) code() string {
	switch e.Keyword {
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

// messageFunc turns an error kind into text. Catalog files may be quoted
// back to their author; event arguments may not (see safeMessage).
type messageFunc func(k jsonschema.ErrorKind) string

func catalogMessage(k jsonschema.ErrorKind) string { return k.LocalizedString(printer) }

// validate checks doc against sch and flattens the violations.
func validate(sch *jsonschema.Schema, doc any, msg messageFunc) []fieldError {
	err := sch.Validate(doc)
	if err == nil {
		return nil
	}
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return []fieldError{{Keyword: "validation", Message: err.Error()}}
	}
	return flatten(ve, msg, nil)
}

// flatten collects the leaves of a validation error tree. A failed anyOf or
// oneOf is reported once, with the alternatives it tried, rather than as
// one error per alternative.
func flatten(ve *jsonschema.ValidationError, msg messageFunc, out []fieldError) []fieldError {
	switch k := ve.ErrorKind.(type) {
	case *kind.AnyOf, *kind.OneOf:
		var alts []string
		for _, c := range ve.Causes {
			for _, l := range flatten(c, msg, nil) {
				alts = append(alts, l.Message)
			}
		}
		m := msg(k)
		if len(alts) > 0 {
			m = "matches none of the allowed forms: " + strings.Join(alts, "; or ")
		}
		return append(out, fieldError{Path: ve.InstanceLocation, Keyword: keyword(k), Message: m})
	case *kind.Required:
		for _, p := range k.Missing {
			out = append(out, fieldError{Path: appendPath(ve.InstanceLocation, p), Keyword: "required", Message: "is required"})
		}
		return out
	case *kind.AdditionalProperties:
		for _, p := range k.Properties {
			out = append(out, fieldError{Path: appendPath(ve.InstanceLocation, p), Keyword: "additionalProperties", Message: "is not an allowed field"})
		}
		return out
	}
	if len(ve.Causes) == 0 {
		return append(out, fieldError{Path: ve.InstanceLocation, Keyword: keyword(ve.ErrorKind), Message: msg(ve.ErrorKind)})
	}
	for _, c := range ve.Causes {
		out = flatten(c, msg, out)
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

// toJSONValue round-trips a decoded value through encoding/json so that the
// validator sees JSON types only (numbers as json.Number, string keys).
func toJSONValue(v any) (any, []byte, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, nil, err
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		return nil, nil, err
	}
	return doc, b, nil
}
