package gate_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gatedhq/gated/internal/catalog"
	"github.com/gatedhq/gated/internal/gate"
	"github.com/gatedhq/gated/internal/policy"
	"github.com/gatedhq/gated/internal/route"
	"github.com/gatedhq/gated/internal/testtree"
)

// inlineAndPinnedOptions configure a gate over a catalog with AIP-39's own inline
// example (read from the spec text) and a tool pinning store:write to ^1.2,
// and a policy granting both actions to bot://agent only.
func inlineAndPinnedOptions(t *testing.T) []gate.Option {
	t.Helper()
	raw, err := os.ReadFile("../../spec/aip-39-action-md.md")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, _ := strings.Cut(string(raw), "# Inline — action defined directly in the consumer (one-shot)\n")
	inline, _, _ := strings.Cut(rest, "\n\n")
	if !strings.Contains(inline, "id: my.local-action") {
		t.Fatalf("AIP-39's inline example is not my.local-action:\n%s", inline)
	}
	toolMD := func(id, implements string) string {
		return "---\nname: " + id + "\nid: " + id + "\ndescription: d\nversion: 1.0.0\ninputs: {type: object}\noutputs: {type: object}\n" + implements + "\n---\n"
	}
	files := map[string]string{
		"catalog/tools/scratch/TOOL.md":   toolMD("ws.scratch", inline),
		"catalog/actions/store/ACTION.md": "---\nschema: action/v1\nid: store:write\nversion: 1.4.0\ndescription: d\nmutates: ['storage:*']\nrisk_level: 1\n---\n",
		"catalog/tools/store/TOOL.md":     toolMD("store.put", "implements: {ref: store:write, version: '^1.2'}"),
		"policy/POLICY.md":                "---\nschema: policy/v1\nid: \"@gated-tests/actions\"\ngrants:\n  - principal: \"bot://agent\"\n    actions:\n      - action: my.local-action\n      - action: \"store:write\"\n---\n",
	}
	dir := t.TempDir()
	testtree.Write(t, dir, files)
	c, err := catalog.Load([]string{filepath.Join(dir, "catalog")})
	if err != nil {
		t.Fatal(err)
	}
	ps, err := policy.Load([]string{filepath.Join(dir, "policy")}, c)
	if err != nil {
		t.Fatal(err)
	}
	return []gate.Option{
		gate.WithCatalog(func() *catalog.Catalog { return c }, gate.UnknownRefuse, catalog.ArgumentsEnforce),
		gate.WithPolicy(func() *policy.Set { return ps }, policy.NewLimiter()),
	}
}

func writeEvent(tool string) map[string]any {
	return map[string]any{"tool_name": tool, "tool_category": "write", "authorization_state": "confirmed",
		"evidence_refs": []any{map[string]any{"source_id": "approval.1", "kind": "approval", "trust_tier": "verified",
			"redaction_status": "redacted", "freshness": map[string]any{"status": "fresh"}, "provenance": "connector"}},
		"risk_domain": "research", "proposed_arguments": map[string]any{}, "recommended_route": "accept"}
}

// Every decision records the action id and version it used, for a tool
// with an inline action and for one that pins its action's version; the
// POLICY.md grant names the inline action by its id.
func TestDecisionsRecordInlineAndPinnedActions(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		tool, action, version string
	}{
		{"ws.scratch", "my.local-action", "1.0.0"},
		{"store.put", "store:write", "1.4.0"},
	} {
		t.Run(tt.tool, func(t *testing.T) {
			t.Parallel()
			opts := inlineAndPinnedOptions(t)
			d, stored := decideRequestRecorded(t, gate.Request{Event: writeEvent(tt.tool), Principals: []string{"bot://agent"}}, opts...)
			if d.Route != route.Accept {
				t.Errorf("granted: route %s blockers %v, want accept", d.Route, d.HardBlockers)
			}
			if stored["action_id"] != tt.action || stored["action_version"] != tt.version {
				t.Errorf("granted: record action %v %v, want %s %s", stored["action_id"], stored["action_version"], tt.action, tt.version)
			}
			d, stored = decideRequestRecorded(t, gate.Request{Event: writeEvent(tt.tool), Principals: []string{"bot://other"}}, opts...)
			if d.Route != route.Refuse || !slices.Contains(d.HardBlockers, "policy_no_grant") {
				t.Errorf("not granted: route %s blockers %v, want refuse policy_no_grant", d.Route, d.HardBlockers)
			}
			if stored["action_id"] != tt.action || stored["action_version"] != tt.version {
				t.Errorf("not granted: record action %v %v, want %s %s", stored["action_id"], stored["action_version"], tt.action, tt.version)
			}
		})
	}
}
