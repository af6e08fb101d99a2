package catalog

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/gatedhq/gated/internal/route"
	"github.com/gatedhq/gated/internal/testtree"
)

// Arguments with more values than MaxArgumentValues are not validated but
// fail: the validator's cost per value (exact rationals, regexes) made a
// 64 KiB body of tiny numbers cost 20 to 130 ms against an ordinary schema.
func TestValidateArgumentsValueCap(t *testing.T) {
	t.Parallel()
	dir := testtree.Write(t, t.TempDir(), map[string]string{
		"p/action.json": `{"name": "x", "riskTier": "R0", "inputSchema": {"properties": {"n": {"type": "array", "items": {"type": "number", "maximum": 500}}}}}`,
	})
	v, _ := mustLoad(t, dir).Lookup("x")
	list := func(n int) map[string]any {
		items := make([]any, n)
		for i := range items {
			items[i] = json.Number("1")
		}
		return map[string]any{"n": items}
	}
	// The arguments object and the list count too.
	if errs := v.ValidateArguments(list(MaxArgumentValues - 2)); len(errs) != 0 {
		t.Fatalf("%d values: %+v", MaxArgumentValues, errs)
	}
	errs := v.ValidateArguments(list(MaxArgumentValues - 1))
	if len(errs) != 1 || errs[0].Keyword != "maxValues" || errs[0].Path != "" {
		t.Fatalf("%d values: %+v", MaxArgumentValues+1, errs)
	}
	fs, _ := Floors(v.Call(nil, ""), &route.Event{ProposedArguments: list(100000)}, route.AuthConfirmed, ArgumentsEnforce)
	if len(fs) != 1 || fs[0].Code != route.CodeArgumentsInvalid || fs[0].Route != route.Refuse {
		t.Fatalf("floors: %+v", fs)
	}
}

// The input schema's writeOnly properties are what an approver's preview
// masks, named as JSON Pointers, through $ref and allOf.
func TestSensitiveArguments(t *testing.T) {
	t.Parallel()
	dir := testtree.Write(t, t.TempDir(), map[string]string{
		"p/action.json": `{"name": "pay", "riskTier": "R2", "inputSchema": {
			"$defs": {"card": {"type": "object", "properties": {"number": {"type": "string", "writeOnly": true}, "brand": {"type": "string"}}}},
			"properties": {
				"amount": {"type": "number"},
				"api/key": {"type": "string", "writeOnly": true},
				"card": {"$ref": "#/$defs/card"},
				"payer": {"allOf": [{"properties": {"pin": {"writeOnly": true}}}]}
			}}}`,
		"q/action.json": `{"name": "plain", "riskTier": "R0", "inputSchema": {"properties": {"q": {"type": "string"}}}}`,
	})
	c := mustLoad(t, dir)
	v, _ := c.Lookup("pay")
	want := []string{"/api~1key", "/card/number", "/payer/pin"}
	if got := v.SensitiveArguments(); !slices.Equal(got, want) {
		t.Fatalf("SensitiveArguments() = %q, want %q", got, want)
	}
	plain, _ := c.Lookup("plain")
	if got := plain.SensitiveArguments(); len(got) != 0 {
		t.Fatalf("a schema without writeOnly: %q", got)
	}
	var none *View
	if got := none.SensitiveArguments(); got != nil {
		t.Fatalf("no view: %q", got)
	}
}

// Every input schema of the example catalogs is validated on the fast path
// (valid arguments never reach the library): otherwise the fast path
// would go silently unused for the schemas gated ships.
func TestExampleInputSchemasHaveFastPath(t *testing.T) {
	t.Parallel()
	n := 0
	for _, dir := range []string{examples, "../../examples/claude-code/catalog"} {
		for _, v := range mustLoad(t, dir).Views() {
			if v.input == nil {
				continue
			}
			n++
			if err := v.input.FastPath(); err != nil {
				t.Errorf("%s: %v", v.ToolID, err)
			}
		}
	}
	if n < 20 {
		t.Fatalf("%d input schemas; the examples have more", n)
	}
}
