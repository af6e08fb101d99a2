package fastschema_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/gatedhq/gated/api"
	"github.com/gatedhq/gated/internal/opfile"
	"github.com/gatedhq/gated/internal/opfile/fastschema"
)

const (
	examples = "../../../examples"
	// The AANA cases (the reference's, copied from the shared cases).
	gateCases = "../../gate/testdata"
)

type obj = map[string]any

// fixed is a schema gated validates documents against, with documents
// that exercise it.
type fixed struct {
	name    string
	doc     any // the schema as CompileSchema gets it
	docs    []any
	mutated []any // those of docs worth mutating
	lib     *jsonschema.Schema
	fast    *fastschema.Validator
}

// formatSchemas are gated's own schemas of operator files, by the name of
// the files they validate.
var formatSchemas = map[string]string{
	"ACTION.md":    "../../catalog/schemas/action-md.schema.json",
	"TOOL.md":      "../../catalog/schemas/tool-md.schema.json",
	"ACTIONS.yaml": "../../catalog/schemas/actions-yaml.schema.json",
	"action.json":  "../../catalog/schemas/action-json.schema.json",
	"POLICY.md":    "../../policy/POLICY.schema.json",
}

// fixedSchemas compiles, in a stable order, the contract schema (first),
// with the example events, all to be mutated; the schemas of operator
// files, with the examples' files, four of each format to be mutated; and
// every input schema of the example catalogs, with the events' arguments
// and documents made for it, the first (which fits it best) to be mutated.
// It fails the test when one gets no fast validator: gated would then
// validate its documents with the library alone.
func fixedSchemas(t testing.TB) []fixed {
	t.Helper()
	var evs, args []any
	for _, ev := range events(t) {
		evs, args = append(evs, ev), append(args, ev["proposed_arguments"])
	}
	out := []fixed{{name: "contract", doc: decodeJSON(t, "contract", api.ContractSchema), docs: evs, mutated: evs}}
	files, inputs := exampleFiles(t)
	for _, format := range slices.Sorted(maps.Keys(formatSchemas)) {
		b, err := os.ReadFile(formatSchemas[format])
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, fixed{name: format, doc: decodeJSON(t, format, b), docs: files[format], mutated: files[format][:min(4, len(files[format]))]})
	}
	for _, name := range slices.Sorted(maps.Keys(inputs)) {
		made := instances(inputs[name])
		out = append(out, fixed{name: name, doc: inputs[name], docs: append(slices.Clip(args), made...), mutated: made[:1]})
	}
	for i := range out {
		f := &out[i]
		if len(f.docs) == 0 {
			t.Fatalf("%s: no example documents", f.name)
		}
		sch, err := opfile.CompileSchema("urn:gated:test", f.doc)
		if err != nil {
			t.Fatalf("%s: %v", f.name, err)
		}
		f.lib = sch.Schema
		if f.fast, err = fastschema.Compile(sch.Schema); err != nil {
			t.Fatalf("%s gets no fast validator: %v", f.name, err)
		}
	}
	return out
}

// exampleFiles reads the operator files under examples: each document by
// the name of its format, and the input schemas they hold by file and
// entry.
func exampleFiles(t testing.TB) (docs map[string][]any, inputs map[string]any) {
	t.Helper()
	docs, inputs = map[string][]any{}, map[string]any{}
	err := filepath.WalkDir(examples, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		format := d.Name()
		if strings.HasSuffix(format, "POLICY.md") {
			format = "POLICY.md"
		}
		if _, ok := formatSchemas[format]; !ok {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		var doc opfile.Doc
		switch format {
		case "action.json":
			doc, err = opfile.ParseJSON(data)
		case "ACTIONS.yaml":
			doc, err = opfile.ParseYAML(data)
		default:
			doc, err = opfile.ParseFrontmatter(data, 1<<20)
		}
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		docs[format] = append(docs[format], doc.Value)
		switch format {
		case "TOOL.md":
			inputs[path] = doc.Value["inputs"]
		case "action.json":
			inputs[path] = doc.Value["inputSchema"]
		case "ACTIONS.yaml":
			actions, _ := doc.Value["actions"].([]any)
			for i, a := range actions {
				inputs[path+"#"+strconv.Itoa(i)] = a.(obj)["inputSchema"]
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	maps.DeleteFunc(inputs, func(_ string, s any) bool { return s == nil })
	if len(inputs) < 20 {
		t.Fatalf("found %d input schemas under %s; the examples have more", len(inputs), examples)
	}
	return docs, inputs
}

func decodeJSON(t testing.TB, name string, b []byte) any {
	t.Helper()
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return v
}

// events reads the example events and the AANA cases' events, each as sent
// and, when it has string evidence refs, as contract.Prepare hands it to the
// schema (string refs become the quickstart's objects).
func events(t testing.TB) []obj {
	t.Helper()
	var out []obj
	add := func(ev obj) {
		out = append(out, ev)
		refs, _ := ev["evidence_refs"].([]any)
		if !slices.ContainsFunc(refs, func(r any) bool { _, s := r.(string); return s }) {
			return
		}
		norm := slices.Clone(refs)
		for i, r := range refs {
			if s, ok := r.(string); ok {
				norm[i] = obj{"source_id": s, "kind": "other", "trust_tier": "runtime", "redaction_status": "redacted",
					"freshness": obj{"status": "fresh"}, "provenance": "runtime_quickstart"}
			}
		}
		out = append(out, with(ev, "evidence_refs", norm))
	}
	for _, glob := range []string{"events/*.json", "events/tour/*.json", "claude-code/event-*.json"} {
		paths, _ := filepath.Glob(filepath.Join(examples, glob))
		for _, p := range paths {
			add(decodeFile(t, p))
		}
	}
	for _, name := range []string{"aana-canonical-cases.json", "contract-v1-examples.json"} {
		cases, _ := decodeFile(t, filepath.Join(gateCases, name))["cases"].([]any)
		for _, c := range cases {
			add(c.(obj)["event"].(obj))
		}
	}
	if len(out) < 15 {
		t.Fatalf("found %d example events; there are more", len(out))
	}
	return out
}

func decodeFile(t testing.TB, path string) obj {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return decodeJSON(t, path, b).(obj)
}

// agree fails the test unless the fast validator and the library give doc
// the same verdict, as decoded with json.Number and, when it is one, as
// encoding/json's float64 form.
func agree(t testing.TB, name string, lib *jsonschema.Schema, fast *fastschema.Validator, doc any) (valid bool) {
	t.Helper()
	want := lib.Validate(doc) == nil
	if got := fast.Valid(doc); got != want {
		t.Errorf("%s: fast path says valid=%v, the library %v, for %s", name, got, want, marshal(t, doc))
	}
	var f any
	if err := json.Unmarshal(marshal(t, doc), &f); err == nil {
		fwant := lib.Validate(f) == nil
		if got := fast.Valid(f); got != fwant {
			t.Errorf("%s: with float64 numbers the fast path says valid=%v, the library %v, for %s", name, got, fwant, marshal(t, doc))
		}
	}
	return want
}

func marshal(t testing.TB, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// boundedNumbers reports whether every number in v has at most 40
// significant digits and an exponent within ±400, as contract.Prepare
// requires of what gated validates. Beyond, the library's exact rationals
// cost seconds, and it panics comparing a number it cannot read
// (1e2000000) with a bound.
func boundedNumbers(v any) bool {
	switch v := v.(type) {
	case json.Number:
		s := strings.TrimPrefix(string(v), "-")
		mant, exp, _ := strings.Cut(strings.ToLower(s), "e")
		if len(mant) > 41 {
			return false
		}
		if exp == "" {
			return true
		}
		e, err := strconv.Atoi(exp)
		return err == nil && e >= -400 && e <= 400
	case []any:
		return !slices.ContainsFunc(v, func(x any) bool { return !boundedNumbers(x) })
	case map[string]any:
		for _, x := range v {
			if !boundedNumbers(x) {
				return false
			}
		}
	}
	return true
}

// replacements are values a mutation puts where another value was: every
// type, integral numbers in several spellings, boundaries, unicode.
var replacements = []any{
	nil, true, false,
	json.Number("0"), json.Number("-0"), json.Number("1"), json.Number("1.0"), json.Number("1e2"),
	json.Number("1.5"), json.Number("-1"), json.Number("40"), json.Number("41"), json.Number("500"),
	json.Number("500.0000000000000000001"), json.Number("12345678901234567890123"),
	"", "a", "😀", "é", "accept", "write", "unknown", "T-1", "v1.2.3", "C123456", "a@example.com",
	"https://example.com/", strings.Repeat("😀", 254), strings.Repeat("a", 255),
	[]any{}, []any{"a", "a"}, []any{json.Number("1")}, obj{}, obj{"status": "fresh"},
}

// mutations returns variations of v: each value inside (to depth 3)
// replaced by each replacement, each member of an object removed, and an
// unknown member added to each object.
func mutations(v any) []any {
	var out []any
	var walk func(v any, depth int, set func(any) any)
	walk = func(v any, depth int, set func(any) any) {
		if depth > 3 {
			return
		}
		for _, r := range replacements {
			out = append(out, set(r))
		}
		switch v := v.(type) {
		case obj:
			out = append(out, set(with(v, "x_unknown", "x")))
			for _, k := range slices.Sorted(maps.Keys(v)) {
				out = append(out, set(without(v, k)))
				walk(v[k], depth+1, func(x any) any { return set(with(v, k, x)) })
			}
		case []any:
			for i := range v {
				walk(v[i], depth+1, func(x any) any { c := slices.Clone(v); c[i] = x; return set(c) })
			}
		}
	}
	walk(v, 0, func(x any) any { return x })
	return out
}

// with copies o with k set to v.
func with(o obj, k string, v any) obj {
	c := maps.Clone(o)
	c[k] = v
	return c
}

// without copies o without k.
func without(o obj, k string) obj {
	c := maps.Clone(o)
	delete(c, k)
	return c
}

// instances are documents made for schema s: one with every property it
// names, filled from enum, const, bounds and types, and each property at
// and beyond its bounds.
func instances(s any) []any {
	base := instance(s, 0)
	out := []any{base}
	m, _ := s.(obj)
	props, _ := m["properties"].(obj)
	b, _ := base.(obj)
	for _, k := range slices.Sorted(maps.Keys(props)) {
		if b == nil {
			break
		}
		for _, x := range boundaries(props[k]) {
			out = append(out, with(b, k, x))
		}
	}
	return out
}

func instance(s any, depth int) any {
	m, _ := s.(obj)
	if m == nil || depth > 4 {
		return "x"
	}
	if c, ok := m["const"]; ok {
		return c
	}
	if e, ok := m["enum"].([]any); ok && len(e) > 0 {
		return e[0]
	}
	t, _ := m["type"].(string)
	switch t {
	case "object":
		o := obj{}
		props, _ := m["properties"].(obj)
		for k, p := range props {
			o[k] = instance(p, depth+1)
		}
		return o
	case "array":
		return []any{instance(m["items"], depth+1)}
	case "integer", "number":
		for _, k := range []string{"minimum", "exclusiveMinimum", "maximum"} {
			if n, ok := m[k].(json.Number); ok {
				return n
			}
		}
		return json.Number("1")
	case "boolean":
		return true
	case "null":
		return nil
	}
	switch m["format"] {
	case "email":
		return "a@example.com"
	case "uri":
		return "https://example.com/"
	}
	if n, ok := m["minLength"].(json.Number); ok {
		l, _ := n.Int64()
		return strings.Repeat("a", int(l))
	}
	return "a"
}

// boundaries are values at, just inside and just beyond the bounds of s,
// and integral numbers in other spellings.
func boundaries(s any) []any {
	m, _ := s.(obj)
	var out []any
	for _, k := range []string{"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"} {
		if n, ok := m[k].(json.Number); ok {
			out = append(out, n, json.Number(string(n)+".0"), json.Number(string(n)+"e0"),
				json.Number(string(n)+".0000000001"), json.Number("-"+string(n)))
			if i, err := n.Int64(); err == nil {
				out = append(out, json.Number(strconv.FormatInt(i-1, 10)), json.Number(strconv.FormatInt(i+1, 10)))
			}
		}
	}
	for _, k := range []string{"minLength", "maxLength"} {
		if n, ok := m[k].(json.Number); ok {
			l, _ := n.Int64()
			for _, d := range []int64{-1, 0, 1} {
				if l+d >= 0 {
					out = append(out, strings.Repeat("😀", int(l+d)), strings.Repeat("a", int(l+d)))
				}
			}
		}
	}
	return append(out, json.Number("1.0"), json.Number("1e1"), json.Number("2.5"), "😀")
}
