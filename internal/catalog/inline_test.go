package catalog

import (
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/gatedhq/gated/internal/route"
	"github.com/gatedhq/gated/internal/testtree"
)

// aip39InlineExample is the "Inline" form of AIP-39's composition pattern,
// read from the spec text itself, so the test follows the text.
func aip39InlineExample(t *testing.T) string {
	t.Helper()
	raw, err := os.ReadFile("../../spec/aip-39-action-md.md")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(raw), "# Inline — action defined directly in the consumer (one-shot)\n")
	if !ok {
		t.Fatal("AIP-39 has no inline example")
	}
	block, _, _ := strings.Cut(rest, "\n\n")
	if !strings.HasPrefix(block, "implements:\n  inline:\n    id: my.local-action\n") {
		t.Fatalf("the inline example is not my.local-action:\n%s", block)
	}
	return block
}

// AIP-39's own inline example loads: the action belongs to the tool, is in
// the catalog's action index, and its floors are the tool's view.
func TestAIP39InlineExample(t *testing.T) {
	t.Parallel()
	dir := testtree.Write(t, t.TempDir(), map[string]string{"tools/scratch/TOOL.md": tool("ws.scratch", aip39InlineExample(t))})
	c := mustLoad(t, dir)
	v, ok := c.Lookup("ws.scratch")
	if !ok {
		t.Fatal("the tool with the inline action is not in the catalog")
	}
	if v.ActionID != "my.local-action" || v.ActionVersion != "1.0.0" || v.RiskLevel != 0 || v.Approval != "auto" ||
		!slices.Equal(v.Mutates, []string{"storage:scratch"}) {
		t.Errorf("view %+v, want action my.local-action 1.0.0, risk 0, auto, mutates storage:scratch", v)
	}
	// It mutates storage, so the catalog reads any call to it as a write.
	if v.Category() != route.Write {
		t.Errorf("category %s, want write", v.Category())
	}
	if id, ok := c.ResolveActionRef("my.local-action"); !ok || id != "my.local-action" {
		t.Errorf("POLICY.md grants cannot name the inline action: %q %v", id, ok)
	}
	if id, ok := c.ResolveActionRef("@ws/actions/my.local-action"); !ok || id != "my.local-action" {
		t.Errorf("a registry ref does not name the inline action: %q %v", id, ok)
	}
	as := c.Actions()
	if len(as) != 1 || as[0].ID != "my.local-action" || as[0].Source != "tools/scratch/TOOL.md" || as[0].Format != FormatToolMD || as[0].TargetKind != "my.local-action" {
		t.Errorf("actions %+v, want the inline action, sourced from its TOOL.md", as)
	}
}

// An inline action's fields are floors like an ACTION.md's, and two tools
// may inline one id when they declare the same action.
func TestInlineActionFloors(t *testing.T) {
	t.Parallel()
	inline := "implements: {inline: {id: notes:write, version: 2.1.0, description: d, risk_level: 1, approval: on-mutate, mutates: ['notes:*'], requires: {secrets: [notes-key]}, fires_events: [write]}}"
	// The same action, written in another order and with another description.
	same := "implements: {inline: {fires_events: [write], mutates: ['notes:*'], requires: {secrets: [notes-key]}, approval: on-mutate, risk_level: 1, description: other words, version: 2.1.0, id: notes:write}}"
	dir := testtree.Write(t, t.TempDir(), map[string]string{
		"a/TOOL.md": tool("notes.write", inline, "risk_level: 2", "approval: always"),
		"b/TOOL.md": tool("notes.append", same),
	})
	c := mustLoad(t, dir)
	a, _ := c.Lookup("notes.write")
	b, _ := c.Lookup("notes.append")
	if a.ActionID != "notes:write" || a.ActionVersion != "2.1.0" || a.RiskLevel != 2 || a.Approval != "always" {
		t.Errorf("notes.write view %+v, want notes:write 2.1.0 raised to risk 2, always", a)
	}
	if b.ActionID != "notes:write" || b.ActionVersion != "2.1.0" || b.RiskLevel != 1 || b.Approval != "on-mutate" ||
		!slices.Equal(b.Mutates, []string{"notes:*"}) || !slices.Equal(b.Requires, []string{"secrets:notes-key"}) || !slices.Equal(b.FiresEvents, []string{"write"}) {
		t.Errorf("notes.append view %+v, want the inline action's floors", b)
	}
	if as := c.Actions(); len(as) != 1 || as[0].Source != "a/TOOL.md" {
		t.Errorf("actions %+v, want the one shared inline action, from the first tool", as)
	}
}
