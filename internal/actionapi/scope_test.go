package actionapi

import (
	"slices"
	"testing"

	"github.com/gatedhq/gated/internal/catalog"
	"github.com/gatedhq/gated/internal/route"
	"github.com/gatedhq/gated/internal/testtree"
)

// A file input the scope cannot read as paths is refused, not skipped:
// under --argument-validation warn or off nothing else refuses
// {"files": {"a": "/etc/passwd"}}, and an executor that reads the value
// leniently would get a path gated never checked.
func TestScopeRefusesAFileInputItCannotRead(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	testtree.Write(t, dir, map[string]string{"plugins/edit/action.json": `{"name": "edit", "riskTier": "R0",
		"inputSchema": {"type": "object", "properties": {"files": {"type": "array", "items": {"type": "string", "format": "file-path"}}}}}`})
	cat, err := catalog.Load([]string{dir})
	if err != nil {
		t.Fatal(err)
	}
	v, ok := cat.Lookup("edit")
	if !ok {
		t.Fatal("edit is not catalogued")
	}
	codes := func(input string) []string {
		p, err := Decode([]byte(`{"actionType": "edit", "riskTier": "R0", "input": ` + input + `, "scope": {"allowedDirs": ["src"]}}`))
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, f := range scopeFindings(p, v) {
			out = append(out, f.Code)
		}
		return out
	}
	for _, input := range []string{
		`{"files": {"a": "/etc/passwd"}}`, `{"files": [["/etc/passwd"]]}`, `{"files": [{"path": "/etc/passwd"}]}`,
		`{"files": [7, "src/a.go"]}`, `{"files": 7}`, `{"files": true}`,
	} {
		if got := codes(input); !slices.Contains(got, route.CodePlanPathInvalid) {
			t.Errorf("input %s: findings %v, want %s", input, got, route.CodePlanPathInvalid)
		}
	}
	for input, want := range map[string][]string{
		`{}`:                              nil,
		`{"files": null}`:                 nil,
		`{"files": []}`:                   nil,
		`{"files": ["src/a.go"]}`:         nil,
		`{"files": "src/a.go"}`:           nil,
		`{"files": ["src/a.go", "/etc"]}`: {route.CodePlanPathOutsideWorkspace},
	} {
		if got := codes(input); !slices.Equal(got, want) {
			t.Errorf("input %s: findings %v, want %v", input, got, want)
		}
	}
}
