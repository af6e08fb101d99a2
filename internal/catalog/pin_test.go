package catalog

import (
	"testing"

	"github.com/gatedhq/gated/internal/testtree"
)

// A pinned implements binds when the action's version is in the range, in
// each of the ways the AIPs write a pin, and the view carries that version.
func TestVersionPinsThatHold(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, version, implements string
	}{
		{"caret", "1.4.2", "implements: {ref: store:write, version: '^1.2'}"},
		{"tilde", "1.2.9", "implements: {ref: store:write, version: '~1.2.3'}"},
		{"exact", "1.2.3", "implements: {ref: store:write, version: 1.2.3}"},
		{"x range", "1.9.0", "implements: {ref: store:write, version: 1.x}"},
		{"any version", "3.0.0", "implements: {ref: store:write, version: '*'}"},
		{"explicitly two majors", "2.0.0", "implements: {ref: store:write, version: '^1 || ^2'}"},
		{"@ suffix on a bare id", "1.0.0", "implements: 'store:write@1.0.0'"},
		{"@ suffix on a registry ref", "1.5.0", "implements: '@acme/actions/store-write@^1.2'"},
		{"@ suffix on an object ref", "1.5.0", "implements: {ref: '@acme/actions/store-write@~1.5'}"},
		{"file ref", "1.2.0", "implements: {file: ./actions/store, version: '^1'}"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := testtree.Write(t, t.TempDir(), map[string]string{
				"actions/store/ACTION.md": action("store:write", "version: "+tt.version, "risk_level: 1"),
				"TOOL.md":                 tool("t.x", tt.implements),
			})
			v, ok := mustLoad(t, dir).Lookup("t.x")
			if !ok || v.ActionID != "store:write" || v.ActionVersion != tt.version || v.RiskLevel != 1 {
				t.Fatalf("view %+v, want store:write %s with its floors", v, tt.version)
			}
		})
	}
}
