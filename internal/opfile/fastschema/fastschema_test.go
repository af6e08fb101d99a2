package fastschema_test

import (
	"bytes"
	"encoding/json"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/gatedhq/gated/internal/opfile"
	"github.com/gatedhq/gated/internal/opfile/fastschema"
)

// compile compiles schema text the way gated does, and its fast validator.
func compile(t testing.TB, schema string) (*jsonschema.Schema, *fastschema.Validator, error) {
	t.Helper()
	doc, err := jsonschema.UnmarshalJSON(strings.NewReader(schema))
	if err != nil {
		t.Fatalf("schema %s: %v", schema, err)
	}
	sch, err := opfile.CompileSchema("urn:test", doc)
	if err != nil {
		t.Fatalf("schema %s: %v", schema, err)
	}
	fast, err := fastschema.Compile(sch.Schema)
	return sch.Schema, fast, err
}

func decode(t testing.TB, doc string) any {
	t.Helper()
	v, err := jsonschema.UnmarshalJSON(strings.NewReader(doc))
	if err != nil {
		t.Fatalf("document %s: %v", doc, err)
	}
	return v
}

func TestFixedSchemasHaveFastValidators(t *testing.T) {
	t.Parallel()
	if n := len(fixedSchemas(t)); n < 20 {
		t.Fatalf("%d schemas", n)
	}
}

// TestAgreesOnExampleMutations runs the example documents of every fixed
// schema, and thousands of mutations of them, through both validators.
func TestAgreesOnExampleMutations(t *testing.T) {
	t.Parallel()
	for _, f := range fixedSchemas(t) {
		docs := slices.Clone(f.docs)
		for _, d := range f.mutated {
			docs = append(docs, mutations(d)...)
		}
		valid := 0
		for _, d := range docs {
			if agree(t, f.name, f.lib, f.fast, d) {
				valid++
			}
		}
		// Both verdicts must be exercised, or agreement proves little.
		if valid == 0 || valid == len(docs) {
			t.Errorf("%s: %d of %d documents valid; want some of each", f.name, valid, len(docs))
		}
	}
}

func TestAgreesOnEdgeCases(t *testing.T) {
	t.Parallel()
	const tree = `{"$defs": {"node": {"type": "object", "additionalProperties": false,
		"properties": {"name": {"type": "string"}, "kids": {"type": "array", "items": {"$ref": "#/$defs/node"}}}}},
		"$ref": "#/$defs/node"}`
	var long, longDup []string
	for i := range 25 {
		long = append(long, `"s`+strings.Repeat("x", i)+`"`)
		longDup = append(longDup, `{"n": `+string(rune('0'+i%10))+`, "i": `+strings.Repeat("1", i+1)+`}`)
	}
	longDup = append(longDup, `{"i": 1.1e1, "n": 1}`) // the second member's twin, spelt differently
	for _, tc := range []struct {
		schema, doc string
		want        bool
	}{
		{`{"type": "integer"}`, `1`, true},
		{`{"type": "integer"}`, `1.0`, true},
		{`{"type": "integer"}`, `1.5`, false},
		{`{"type": "integer"}`, `1e2`, true},
		{`{"type": "integer"}`, `1.5e1`, true},
		{`{"type": "integer"}`, `15e-1`, false},
		{`{"type": "integer"}`, `-0`, true},
		{`{"type": "integer"}`, `123456789012345678901234567890`, true},
		{`{"type": "integer"}`, `1e400`, true},
		{`{"type": "integer"}`, `"1"`, false},
		{`{"type": ["string", "null"]}`, `null`, true},
		{`{"type": ["string", "integer"]}`, `2.0`, true},
		{`{"type": "number"}`, `true`, false},
		{`{"maximum": 100}`, `100`, true},
		{`{"maximum": 100}`, `100.0`, true},
		{`{"maximum": 100}`, `1e2`, true},
		{`{"maximum": 100}`, `100.00000000000000000001`, false},
		{`{"maximum": 100}`, `"1000"`, true}, // bounds apply to numbers only
		{`{"minimum": 0.1}`, `0.1`, true},
		{`{"minimum": 0.1}`, `0.09999999999999999`, false},
		{`{"exclusiveMinimum": 0}`, `0`, false},
		{`{"exclusiveMinimum": 0}`, `-0`, false},
		{`{"exclusiveMinimum": 0}`, `1e-300`, true},
		{`{"exclusiveMaximum": 9007199254740993}`, `9007199254740992`, true},
		{`{"exclusiveMaximum": 9007199254740993}`, `9007199254740993`, false},
		{`{"minimum": -9223372036854775808}`, `-9223372036854775809`, false},
		{`{"multipleOf": 0.01}`, `0.07`, true},
		{`{"multipleOf": 0.01}`, `0.075`, false},
		{`{"multipleOf": 3}`, `9.0`, true},
		{`{"multipleOf": 3}`, `10`, false},
		{`{"maxLength": 2}`, `"😀😀"`, true},
		{`{"maxLength": 2}`, `"😀😀😀"`, false},
		{`{"maxLength": 2}`, `"e\u0301"`, true}, // two code points, one glyph
		{`{"minLength": 2}`, `"😀"`, false},
		{`{"minLength": 2}`, `5`, true},
		{`{"pattern": "b"}`, `"abc"`, true}, // unanchored, as in ECMA-262
		{`{"pattern": "^b"}`, `"abc"`, false},
		{`{"pattern": "^\\p{L}+$"}`, `"héllo"`, true},
		{`{"format": "email"}`, `"a@example.com"`, true},
		{`{"format": "email"}`, `"not an address"`, false},
		{`{"format": "email"}`, `5`, true},
		{`{"format": "date-time"}`, `"2026-01-01T00:00:00Z"`, true},
		{`{"format": "date-time"}`, `"yesterday"`, false},
		{`{"format": "no-such-format"}`, `"x"`, true},
		{`{"contentEncoding": "base64"}`, `"aGk="`, true},
		{`{"contentEncoding": "base64"}`, `"!!"`, false},
		{`{"contentEncoding": "base64", "contentMediaType": "application/json"}`, `"e30="`, true},
		{`{"contentEncoding": "base64", "contentMediaType": "application/json"}`, `"e30"`, false},
		{`{"contentMediaType": "application/json"}`, `"{"`, false},
		{`{"contentMediaType": "application/json"}`, `""`, false},
		{`{"properties": {"a": {}}, "additionalProperties": false}`, `{"a": 1}`, true},
		{`{"properties": {"a": {}}, "additionalProperties": false}`, `{"a": 1, "b": 2}`, false},
		{`{"additionalProperties": {"type": "string"}}`, `{"a": "x", "b": 2}`, false},
		{`{"patternProperties": {"^x-": {"type": "string"}}, "additionalProperties": false}`, `{"x-a": "1"}`, true},
		{`{"patternProperties": {"^x-": {"type": "string"}}, "additionalProperties": false}`, `{"x-a": 1}`, false},
		{`{"patternProperties": {"^x-": {"type": "string"}}, "additionalProperties": false}`, `{"y": "1"}`, false},
		{`{"required": ["a"], "minProperties": 2, "maxProperties": 3}`, `{"a": 1, "b": 2}`, true},
		{`{"required": ["a"], "minProperties": 2}`, `{"a": 1}`, false},
		{`{"required": ["a"]}`, `{"b": 1}`, false},
		{`{"required": ["a"]}`, `[]`, true},
		{`{"dependentRequired": {"a": ["b"]}}`, `{"a": 1}`, false},
		{`{"dependentRequired": {"a": ["b"]}}`, `{"b": 1}`, true},
		{`{"enum": [1, "a", null]}`, `1.0`, true},
		{`{"enum": [1, "a", null]}`, `1e0`, true},
		{`{"enum": [1, "a", null]}`, `"1"`, false},
		{`{"enum": [1, "a", null]}`, `null`, true},
		{`{"enum": ["a", "b"]}`, `"c"`, false},
		{`{"enum": []}`, `"a"`, false},
		{`{"const": {"a": [1, 2]}}`, `{"a": [1.0, 2e0]}`, true},
		{`{"const": {"a": [1, 2]}}`, `{"a": [2, 1]}`, false},
		{`{"const": null}`, `null`, true},
		{`{"const": null}`, `false`, false},
		{`{"const": 0.1}`, `1e-1`, true},
		{`{"uniqueItems": true}`, `[1, 1.0]`, false},
		{`{"uniqueItems": true}`, `[1, "1"]`, true},
		{`{"uniqueItems": true}`, `[{"a": 1}, {"a": 1.0}]`, false},
		{`{"uniqueItems": true}`, `[[1, 2], [1, 2.0]]`, false},
		{`{"uniqueItems": true}`, `[[1, 2], [2, 1]]`, true},
		{`{"uniqueItems": true}`, `[` + strings.Join(long, ",") + `]`, true},
		{`{"uniqueItems": true}`, `[` + strings.Join(append(long, `"sxx"`), ",") + `]`, false},
		{`{"uniqueItems": true}`, `[` + strings.Join(longDup, ",") + `]`, false},
		{`{"uniqueItems": true}`, `[` + strings.Join(longDup[:25], ",") + `]`, true},
		{`{"minItems": 1, "maxItems": 2}`, `[]`, false},
		{`{"minItems": 1, "maxItems": 2}`, `[1, 2, 3]`, false},
		{`{"prefixItems": [{"type": "string"}], "items": false}`, `["a"]`, true},
		{`{"prefixItems": [{"type": "string"}], "items": false}`, `["a", 1]`, false},
		{`{"prefixItems": [{"type": "string"}], "items": {"type": "integer"}}`, `[1]`, false},
		{`{"prefixItems": [{"type": "string"}], "items": {"type": "integer"}}`, `["a", 2, 3.0]`, true},
		{`true`, `{"anything": 1}`, true},
		{`false`, `null`, false},
		{`{"properties": {"a": false}}`, `{"a": 1}`, false},
		{`{"properties": {"a": false}}`, `{"b": 1}`, true},
		{`{"not": {"type": "string"}}`, `"a"`, false},
		{`{"not": {"type": "string"}}`, `1`, true},
		{`{"anyOf": [{"type": "string"}, {"minimum": 5}]}`, `3`, false},
		{`{"anyOf": [{"type": "string"}, {"minimum": 5}]}`, `7`, true},
		{`{"oneOf": [{"type": "integer"}, {"type": "number"}]}`, `1`, false},
		{`{"oneOf": [{"type": "integer"}, {"type": "number"}]}`, `1.5`, true},
		{`{"oneOf": [{"type": "integer"}, {"type": "number"}]}`, `"a"`, false},
		{`{"allOf": [{"minimum": 1}, {"maximum": 2}]}`, `3`, false},
		{`{"if": {"minimum": 10}, "then": {"multipleOf": 2}, "else": {"maximum": 5}}`, `12`, true},
		{`{"if": {"minimum": 10}, "then": {"multipleOf": 2}, "else": {"maximum": 5}}`, `11`, false},
		{`{"if": {"minimum": 10}, "then": {"multipleOf": 2}, "else": {"maximum": 5}}`, `7`, false},
		{`{"if": {"minimum": 10}, "then": {"multipleOf": 2}}`, `7`, true},
		{`{"then": {"type": "string"}}`, `7`, true}, // then without if is nothing
		{`{"$defs": {"s": {"type": "string"}}, "$ref": "#/$defs/s", "minLength": 2}`, `"a"`, false},
		{`{"$defs": {"s": {"type": "string"}}, "$ref": "#/$defs/s", "minLength": 2}`, `"ab"`, true},
		{tree, `{"name": "a", "kids": [{"name": "b", "kids": [{"name": "c"}]}]}`, true},
		{tree, `{"name": "a", "kids": [{"name": "b", "kids": [{"name": 3}]}]}`, false},
		{tree, `{"name": "a", "kids": [{"extra": 1}]}`, false},
	} {
		lib, fast, err := compile(t, tc.schema)
		if err != nil {
			t.Errorf("%s: no fast validator: %v", tc.schema, err)
			continue
		}
		if got := agree(t, tc.schema, lib, fast, decode(t, tc.doc)); got != tc.want {
			t.Errorf("%s: the library says %s is valid=%v, want %v", tc.schema, tc.doc, got, tc.want)
		}
	}
}

func TestRefusesWhatItDoesNotDecide(t *testing.T) {
	t.Parallel()
	for _, schema := range []string{
		`{"$schema": "http://json-schema.org/draft-07/schema#", "type": "string"}`,
		`{"propertyNames": {"maxLength": 3}}`,
		`{"contains": {"type": "string"}}`,
		`{"unevaluatedProperties": false}`,
		`{"items": {"type": "string"}, "unevaluatedItems": false}`,
		`{"dependentSchemas": {"a": {"required": ["b"]}}}`,
		`{"$dynamicAnchor": "n", "properties": {"a": {"$dynamicRef": "#n"}}}`,
		`{"contentMediaType": "application/json", "contentSchema": {"type": "object"}}`,
		`{"$ref": "#"}`,
		`{"$defs": {"a": {"allOf": [{"$ref": "#/$defs/b"}]}, "b": {"anyOf": [{"$ref": "#/$defs/a"}]}}, "$ref": "#/$defs/a"}`,
		`{"properties": {"a": {"not": {"$ref": "#/properties/a"}}}}`,
	} {
		if _, _, err := compile(t, schema); err == nil {
			t.Errorf("%s: got a fast validator", schema)
		}
	}
}

// TestOtherGoValuesAreLeftToTheLibrary: values a JSON decoder never makes
// are not vouched for where they are checked, and ignored where the
// library ignores them.
func TestOtherGoValuesAreLeftToTheLibrary(t *testing.T) {
	t.Parallel()
	lib, fast, err := compile(t, `{"properties": {"n": {"type": "number"}, "any": true}}`)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		doc  any
		fast bool
	}{
		{map[string]any{"n": 1}, false},                 // an int: the library takes it, the fast path asks it to
		{map[string]any{"n": math.NaN()}, false},        // not a JSON number: the library refuses it too
		{map[string]any{"n": []string{"x"}}, false},     // not a JSON value
		{map[string]any{"any": struct{}{}}, true},       // true checks nothing, in both
		{map[string]any{"n": json.Number("1.5")}, true}, // a decoded number
	} {
		if got := fast.Valid(tc.doc); got != tc.fast {
			t.Errorf("%#v: fast valid=%v, want %v", tc.doc, got, tc.fast)
		}
		if tc.fast && lib.Validate(tc.doc) != nil {
			t.Errorf("%#v: the fast path vouches for what the library refuses", tc.doc)
		}
	}
}

// FuzzFastSchema checks that the fast path and the library agree on what
// the fuzzer makes of the example events (against the contract schema),
// operator files (against their format's schema) and arguments (against
// each example catalog's input schema). which picks the schema, in the
// order of fixedSchemas.
func FuzzFastSchema(f *testing.F) {
	schemas := fixedSchemas(f)
	for i, s := range schemas {
		for _, d := range s.docs {
			f.Add(uint8(i), marshal(f, d))
		}
	}
	f.Fuzz(func(t *testing.T, which uint8, doc []byte) {
		s := schemas[int(which)%len(schemas)]
		if v, ok := decodeBounded(doc); ok {
			agree(t, s.name, s.lib, s.fast, v)
		}
	})
}

// FuzzFastSchemaGenerated checks that the fast path and the library agree
// on schemas the fuzzer writes, for every one the fast path takes.
func FuzzFastSchemaGenerated(f *testing.F) {
	for _, s := range []struct{ schema, doc string }{
		{`{"type": "object", "required": ["a"], "additionalProperties": false, "properties": {"a": {"type": "integer", "minimum": 1, "maximum": 40}, "b": {"enum": [1, "x", null]}}}`, `{"a": 1.0, "b": 1}`},
		{`{"type": "array", "uniqueItems": true, "prefixItems": [{"const": {"k": [1]}}], "items": {"type": "string", "maxLength": 2, "pattern": "^[a-z😀]*$"}}`, `[{"k": [1.0]}, "ab", "😀😀"]`},
		{`{"oneOf": [{"multipleOf": 0.5}, {"exclusiveMaximum": 3}], "not": {"const": 2}}`, `1.5`},
		{`{"if": {"properties": {"k": {"const": "w"}}}, "then": {"required": ["c"]}, "else": {"dependentRequired": {"k": ["d"]}}}`, `{"k": "w", "c": true}`},
		{`{"$defs": {"n": {"type": ["object", "null"], "properties": {"next": {"$ref": "#/$defs/n"}}, "minProperties": 1}}, "$ref": "#/$defs/n"}`, `{"next": {"next": null}}`},
		{`{"patternProperties": {"^x": {"format": "email"}}, "additionalProperties": {"contentEncoding": "base64", "contentMediaType": "application/json"}}`, `{"xa": "a@b.co", "y": "e30="}`},
		{`{"anyOf": [{"type": "string", "minLength": 3, "format": "uri"}, {"type": "number", "minimum": -1e3}, {"allOf": [true, {"maxItems": 1}]}]}`, `[0]`},
	} {
		f.Add([]byte(s.schema), []byte(s.doc))
	}
	f.Fuzz(func(t *testing.T, schema, doc []byte) {
		sv, ok := decodeBounded(schema)
		if !ok {
			return
		}
		sch, err := opfile.CompileSchema("urn:fuzz", sv)
		if err != nil {
			return
		}
		fast, err := fastschema.Compile(sch.Schema)
		if err != nil {
			return
		}
		if v, ok := decodeBounded(doc); ok {
			agree(t, string(schema), sch.Schema, fast, v)
		}
	})
}

// decodeBounded decodes one JSON value whose numbers gated would validate.
func decodeBounded(b []byte) (any, bool) {
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	return v, err == nil && boundedNumbers(v)
}

// BenchmarkContractValid validates a valid event of three evidence refs
// against the contract schema, with the library and with the fast path.
func BenchmarkContractValid(b *testing.B) {
	contract := fixedSchemas(b)[0]
	ev := decodeFile(b, examples+"/events/send_refund_accept.json")
	if contract.lib.Validate(ev) != nil || !contract.fast.Valid(ev) {
		b.Fatal("the event is not valid")
	}
	b.Run("library", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_ = contract.lib.Validate(ev)
		}
	})
	b.Run("fast", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_ = contract.fast.Valid(ev)
		}
	})
}
