package catalog

import (
	"slices"
	"testing"

	"github.com/gatedhq/gated/internal/route"
	"github.com/gatedhq/gated/internal/testtree"
)

func TestActionJSONPluginDeclarations(t *testing.T) {
	t.Parallel()
	dir := testtree.Write(t, t.TempDir(), map[string]string{
		"p/action.json": `{"name": "fix", "riskTier": "R2",
			"inputSchema": {"type": "object", "properties": {
				"file": {"type": "string", "format": "file-path"},
				"files": {"type": "array", "items": {"type": "string", "format": "file-path"}},
				"note": {"type": "string"}}},
			"permissions": {"commands": ["node --check src/file.js", "npm  test"]},
			"verification": {"required": true}, "rollback": {"required": true}}`,
		"q/ACTION.md": action("a:b"),
	})
	c := mustLoad(t, dir)
	v, _ := c.Lookup("fix")
	if got := v.FileInputs(); !slices.Equal(got, []string{"file", "files"}) {
		t.Errorf("FileInputs = %v, want [file files]", got)
	}
	for _, tt := range []struct {
		cmd  string
		want bool
	}{
		{"node --check src/file.js", true},
		{"npm test", true}, // white space between arguments does not count
		{"node --check src/other.js", false},
		{"node --check", false},
		{"node --check src/file.js --fix", false},
		{"", false},
	} {
		if got := v.PluginCommandAllowed(Argv(tt.cmd)); got != tt.want {
			t.Errorf("PluginCommandAllowed(%q) = %v, want %v", tt.cmd, got, tt.want)
		}
	}
	if ver, rb := v.PluginRequires(); !ver || !rb {
		t.Errorf("PluginRequires = %v, %v, want true, true", ver, rb)
	}
	// A file-path string is validated as a string, not rejected as an
	// unknown format.
	if errs := v.ValidateArguments(map[string]any{"file": "src/a.js"}); errs != nil {
		t.Errorf("ValidateArguments = %v", errs)
	}
}

// An action.json is write-like by what it declares, failing closed; its
// category follows, with R2 and above a write whatever it declares.
func TestActionJSONWriteLike(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name, tier, extra string
		writeLike         bool
		category          route.Category
	}{
		{"r1 filesystem none", "R1", `"permissions": {"commands": ["ls"], "filesystem": "none"}`, false, route.PrivateRead},
		{"r1 network none too", "R1", `"permissions": {"filesystem": "none", "network": "none"}`, false, route.PrivateRead},
		{"r1 workspace", "R1", `"permissions": {"filesystem": "workspace"}`, true, route.Write},
		{"r1 nothing declared", "R1", ``, true, route.Write},
		{"r1 mutates", "R1", `"mutates": ["workspace:src"], "permissions": {"filesystem": "none"}`, true, route.Write},
		{"r1 misspelt key", "R1", `"permissions": {"filesytem": "none"}`, true, route.Write},
		{"r1 unknown value", "R1", `"permissions": {"filesystem": "read-only"}`, true, route.Write},
		{"r1 value in another case", "R1", `"permissions": {"filesystem": "None"}`, true, route.Write},
		{"r1 value not a string", "R1", `"permissions": {"filesystem": null}`, true, route.Write},
		{"r1 network", "R1", `"permissions": {"filesystem": "none", "network": "egress"}`, true, route.Write},
		{"r1 unknown permission", "R1", `"permissions": {"filesystem": "none", "database": "write"}`, true, route.Write},
		{"r0 workspace reads", "R0", `"permissions": {"filesystem": "workspace"}`, false, route.PrivateRead},
		{"r0 nothing declared", "R0", ``, false, route.PrivateRead},
		{"r0 mutates", "R0", `"mutates": ["database:logs"]`, true, route.Write},
		{"r0 network", "R0", `"permissions": {"network": "egress"}`, true, route.Write},
		{"r2 filesystem none", "R2", `"permissions": {"filesystem": "none"}`, false, route.Write},
		{"r3 filesystem none", "R3", `"permissions": {"filesystem": "none"}`, false, route.Write},
		{"r4 filesystem none", "R4", `"permissions": {"filesystem": "none"}`, true, route.Write},
		{"unknown tier", "R9", `"permissions": {"filesystem": "none"}`, true, route.Write},
	} {
		doc := `{"name": "a", "riskTier": "` + tt.tier + `"`
		if tt.extra != "" {
			doc += ", " + tt.extra
		}
		c := mustLoad(t, testtree.Write(t, t.TempDir(), map[string]string{"a/action.json": doc + "}"}))
		v, _ := c.Lookup("a")
		if v.WriteLike() != tt.writeLike || v.Category() != tt.category {
			t.Errorf("%s: WriteLike %v, Category %s, want %v, %s", tt.name, v.WriteLike(), v.Category(), tt.writeLike, tt.category)
		}
	}
	// A mutates gated cannot read is a load error, not ignored.
	for _, bad := range []string{`"mutates": "workspace:src"`, `"mutates": ["src"]`, `"mutates": [1]`} {
		dir := testtree.Write(t, t.TempDir(), map[string]string{"a/action.json": `{"name": "a", "riskTier": "R1", ` + bad + `}`})
		if _, err := Load([]string{dir}); err == nil {
			t.Errorf("%s loaded", bad)
		}
	}
}
