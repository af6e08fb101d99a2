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
