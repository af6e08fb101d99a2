package opfile

import (
	"errors"
	"slices"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

const testSchema = `{
	"type": "object",
	"required": ["id"],
	"additionalProperties": false,
	"properties": {
		"id": {"type": "string", "pattern": "^[a-z]+$"},
		"at": {"type": "string", "format": "date-time"},
		"who": {"anyOf": [{"type": "string"}, {"type": "object", "required": ["ref"]}]}
	}
}`

func mustDoc(t *testing.T, yaml string) Doc {
	t.Helper()
	doc, err := ParseYAML([]byte(yaml))
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

func TestValidateGroupsForPeople(t *testing.T) {
	t.Parallel()
	sch := MustCompileSchema("urn:test", []byte(testSchema))
	if vs := Validate(sch, mustDoc(t, "id: abc\nat: 2026-01-01T00:00:00Z\nwho: x\n").Value, Message); vs != nil {
		t.Fatalf("a valid document: %v", vs)
	}
	vs := Validate(sch, mustDoc(t, "at: yesterday\n\"a/b\": 1\nwho: 5\n").Value, Message)
	var got []string
	for _, v := range vs {
		got = append(got, v.Pointer()+" "+v.Code())
	}
	slices.Sort(got)
	want := []string{
		"/at schema_violation", // formats are asserted
		"/a~1b unknown_field",  // at the unknown property itself, escaped
		"/id missing_field",    // at the missing property itself
		"/who invalid_value",   // one anyOf, not one violation per form
	}
	if !slices.Equal(got, want) {
		t.Fatalf("violations %v, want %v", got, want)
	}
}

func TestLeavesAreTheValidatorsOwn(t *testing.T) {
	t.Parallel()
	sch := MustCompileSchema("urn:test", []byte(testSchema))
	vs := Leaves(sch, mustDoc(t, "who: 5\n").Value, Message)
	var got []string
	for _, v := range vs {
		got = append(got, v.Pointer()+" "+v.Keyword)
	}
	slices.Sort(got)
	// required at the object, and each form of the anyOf on its own.
	want := []string{" required", "/who type", "/who type"}
	if !slices.Equal(got, want) {
		t.Fatalf("leaves %v, want %v", got, want)
	}
}

func TestCompileSchemaRefusesExternalRefs(t *testing.T) {
	t.Parallel()
	for _, ref := range []string{"https://example.com/s.json", "file:///etc/passwd"} {
		_, err := CompileSchema("urn:test", map[string]any{"$ref": ref})
		var le *jsonschema.LoadURLError
		if !errors.As(err, &le) {
			t.Errorf("$ref %s: error %v, want a refused load", ref, err)
		}
	}
}

// A valid document is answered by the fast path without calling the
// library, which allocates scopes even for a valid one; an invalid one
// still gets the library's violations (the tests above).
func TestValidDocumentsSkipTheLibrary(t *testing.T) {
	sch := MustCompileSchema("urn:test", []byte(testSchema))
	if err := sch.FastPath(); err != nil {
		t.Fatal(err)
	}
	doc := mustDoc(t, "id: abc\nwho: {ref: x}\n").Value
	if sch.Schema.Validate(doc) != nil {
		t.Fatal("the document is not valid")
	}
	if n := testing.AllocsPerRun(100, func() { _ = Validate(sch, doc, Message) }); n != 0 {
		t.Errorf("Validate of a valid document allocated %v times; the library was called", n)
	}
	if n := testing.AllocsPerRun(100, func() { _ = sch.Schema.Validate(doc) }); n == 0 {
		t.Error("the library validated without allocating: this test no longer shows it was skipped")
	}
}
