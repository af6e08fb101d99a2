package catalog

import (
	"github.com/gatedhq/gated/internal/testtree"
	"slices"
	"testing"
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
