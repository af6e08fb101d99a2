package catalog

import (
	"fmt"
	"github.com/gatedhq/gated/internal/testtree"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestProblems: each broken catalog yields the expected problem, located by
// file and field, and no catalog.
func TestProblems(t *testing.T) {
	t.Parallel()
	base := action("store:write", "risk_level: 2", `mutates: ["storage:*"]`, "approval: on-mutate",
		"requires: {network: [api.example], secrets: [key]}", "fires_events: [write]")
	policyBase := action("store:deploy", `approval: "policy:prod"`)
	tests := []struct {
		name         string
		files        map[string]string
		file, field  string
		code         string
		msgFragments []string
	}{
		// Frontmatter and syntax.
		{"no frontmatter", map[string]string{"ACTION.md": "# title\n"}, "ACTION.md", "", "frontmatter_missing", nil},
		{"unterminated", map[string]string{"ACTION.md": "---\nid: x\n"}, "ACTION.md", "", "frontmatter_unterminated", nil},
		{"bad yaml", map[string]string{"ACTION.md": "---\nid: [x\n---\n"}, "ACTION.md", "", "yaml_invalid", nil},
		{"not a mapping", map[string]string{"ACTION.md": "---\n- a\n- b\n---\n"}, "ACTION.md", "", "frontmatter_not_mapping", nil},
		{"non-string key", map[string]string{"ACTION.md": "---\nid: a:b\nmetadata: {1: x}\n---\n"}, "ACTION.md", "", "yaml_invalid", []string{"keys must be strings"}},
		{"bad json", map[string]string{"p/action.json": `{"name": "x",}`}, "p/action.json", "", "json_invalid", nil},
		{"bad actions yaml", map[string]string{"ACTIONS.yaml": "actions: [\n"}, "ACTIONS.yaml", "", "yaml_invalid", nil},

		// ACTION.md fields against the schema.
		{"id pattern", map[string]string{"ACTION.md": action("Store::Write")}, "ACTION.md", "/id", "invalid_format", nil},
		{"risk above 3", map[string]string{"ACTION.md": action("a:b", "risk_level: 4")}, "ACTION.md", "/risk_level", "out_of_range", nil},
		{"risk below 0", map[string]string{"ACTION.md": action("a:b", "risk_level: -1")}, "ACTION.md", "/risk_level", "out_of_range", nil},
		{"risk not integer", map[string]string{"ACTION.md": action("a:b", "risk_level: 1.5")}, "ACTION.md", "/risk_level", "invalid_type", nil},
		{"approval", map[string]string{"ACTION.md": action("a:b", "approval: sometimes")}, "ACTION.md", "/approval", "invalid_value", []string{"policy:"}},
		{"mutates shape", map[string]string{"ACTION.md": action("a:b", `mutates: ["storage"]`)}, "ACTION.md", "/mutates/0", "invalid_format", nil},
		{"missing description", map[string]string{"ACTION.md": "---\nschema: action/v1\nid: a:b\n---\n"}, "ACTION.md", "/description", "missing_field", nil},
		{"unknown field", map[string]string{"ACTION.md": action("a:b", "colour: red")}, "ACTION.md", "/colour", "unknown_field", nil},
		{"description size", map[string]string{"ACTION.md": "---\nschema: action/v1\nid: a:b\ndescription: " + strings.Repeat("x", 2001) + "\n---\n"}, "ACTION.md", "/description", "invalid_length", nil},
		{"wrong schema marker", map[string]string{"ACTION.md": strings.Replace(action("a:b"), "action/v1", "action/v2", 1)}, "ACTION.md", "/schema", "invalid_value", nil},

		// Duplicates and ambiguity.
		{"duplicate id", map[string]string{"a/ACTION.md": action("a:b"), "b/ACTION.md": action("a:b")}, "b/ACTION.md", "/id", "duplicate_id", []string{"a/ACTION.md"}},
		{"duplicate slug", map[string]string{"a/ACTION.md": action("a:b"), "b/ACTION.md": action("a-b")}, "b/ACTION.md", "/id", "duplicate_action_slug", nil},
		{"alias clashes with a tool id", map[string]string{
			"a/TOOL.md": tool("tool.one"),
			"b/TOOL.md": tool("tool.two", "metadata: {gated: {aliases: [tool.one]}}"),
		}, "b/TOOL.md", "/metadata/gated/aliases", "ambiguous_tool_name", []string{"tool.one"}},
		// Plugin actions cannot override core actions, whichever file comes first.
		{"plugin takes a core tool alias", map[string]string{
			"a/action.json": `{"name": "send_email", "riskTier": "R1"}`,
			"t/TOOL.md":     tool("support.mail", "metadata: {gated: {aliases: [send_email]}}"),
		}, "a/action.json", "/name", "plugin_overrides_core_action", []string{"t/TOOL.md"}},
		{"plugin takes a core tool id", map[string]string{
			"a/action.json": `{"name": "support.mail", "riskTier": "R1"}`,
			"t/TOOL.md":     tool("support.mail"),
		}, "a/action.json", "/name", "plugin_overrides_core_action", nil},
		{"plugin takes a core action id", map[string]string{
			"a/action.json": `{"name": "a:b", "riskTier": "R0"}`,
			"z/ACTION.md":   action("a:b"),
		}, "a/action.json", "/name", "plugin_overrides_core_action", []string{"z/ACTION.md"}},
		{"plugin takes an ACTIONS.yaml name", map[string]string{
			"a/action.json":  `{"name": "search", "riskTier": "R0"}`,
			"z/ACTIONS.yaml": "actions:\n  - {name: search, description: d, command: x, inputSchema: {}}\n",
		}, "a/action.json", "/name", "plugin_overrides_core_action", nil},
		{"two plugins with one name", map[string]string{
			"a/action.json": `{"name": "p", "riskTier": "R0"}`,
			"b/action.json": `{"name": "p", "riskTier": "R0"}`,
		}, "b/action.json", "/name", "duplicate_id", nil},
		{"two tools with one id", map[string]string{"a/TOOL.md": tool("tool.one"), "b/TOOL.md": tool("tool.one")}, "b/TOOL.md", "/id", "ambiguous_tool_name", nil},
		{"two actions.yaml entries with one name", map[string]string{"ACTIONS.yaml": "actions:\n  - {name: a, description: d, command: x, inputSchema: {}}\n  - {name: a, description: d, command: y, inputSchema: {}}\n"}, "ACTIONS.yaml", "/actions/1/name", "duplicate_id", nil},

		// implements resolution.
		{"unknown bare id", map[string]string{"TOOL.md": tool("t.x", "implements: nope:nothing")}, "TOOL.md", "/implements", "action_ref_unresolvable", nil},
		{"unknown registry ref", map[string]string{"TOOL.md": tool("t.x", "implements: '@o/lib/nope-nothing'")}, "TOOL.md", "/implements", "action_ref_unresolvable", nil},
		{"malformed registry ref", map[string]string{"ACTION.md": action("a:b"), "TOOL.md": tool("t.x", "implements: '@a-b'")}, "TOOL.md", "/implements", "action_ref_unresolvable", nil},
		{"missing file ref", map[string]string{"TOOL.md": tool("t.x", "implements: ./actions/none")}, "TOOL.md", "/implements", "action_ref_unresolvable", nil},
		{"file ref escapes", map[string]string{"t/TOOL.md": tool("t.x", "implements: {file: ../../outside/ACTION.md}")}, "t/TOOL.md", "/implements/file", "action_ref_escapes_catalog", nil},
		{"file ref escapes via dots", map[string]string{"TOOL.md": tool("t.x", "implements: ./a/../../x")}, "TOOL.md", "/implements", "action_ref_escapes_catalog", nil},
		{"absolute file ref", map[string]string{"TOOL.md": tool("t.x", "implements: {file: /etc/passwd}")}, "TOOL.md", "/implements/file", "action_ref_escapes_catalog", nil},
		{"inline action breaks the ACTION.md schema", map[string]string{"TOOL.md": tool("t.x", "implements: {inline: {id: a:b, description: d, risk_level: 7}}")}, "TOOL.md", "/implements/inline/risk_level", "out_of_range", []string{"inline action"}},
		{"inline action without a description", map[string]string{"TOOL.md": tool("t.x", "implements: {inline: {id: a:b}}")}, "TOOL.md", "/implements/inline/description", "missing_field", nil},
		{"inline action with an unknown field", map[string]string{"TOOL.md": tool("t.x", "implements: {inline: {id: a:b, description: d, colour: red}}")}, "TOOL.md", "/implements/inline/colour", "unknown_field", nil},
		{"inline action with a wrong schema marker", map[string]string{"TOOL.md": tool("t.x", "implements: {inline: {schema: action/v2, id: a:b, description: d}}")}, "TOOL.md", "/implements/inline/schema", "invalid_value", nil},
		{"two tools inline one id differently", map[string]string{
			"a/TOOL.md": tool("t.one", "implements: {inline: {id: a:b, description: d, risk_level: 1}}"),
			"b/TOOL.md": tool("t.two", "implements: {inline: {id: a:b, description: d, risk_level: 2}}"),
		}, "b/TOOL.md", "/implements/inline/id", "inline_action_conflict", []string{"a/TOOL.md"}},
		{"inline id of an ACTION.md", map[string]string{"ACTION.md": action("a:b"), "TOOL.md": tool("t.x", "implements: {inline: {id: a:b, description: d}}")}, "TOOL.md", "/implements/inline/id", "duplicate_id", []string{"ACTION.md"}},
		{"inline id sharing an ACTION.md's slug", map[string]string{"ACTION.md": action("a:b"), "TOOL.md": tool("t.x", "implements: {inline: {id: a-b, description: d}}")}, "TOOL.md", "/implements/inline/id", "duplicate_action_slug", nil},
		{"inline id of an imported action", map[string]string{"p/action.json": `{"name": "diagnose", "riskTier": "R0"}`, "TOOL.md": tool("t.x", "implements: {inline: {id: diagnose, description: d}}")}, "TOOL.md", "/implements/inline/id", "duplicate_id", []string{"action.json"}},
		{"ref to another tool's inline action", map[string]string{
			"a/TOOL.md": tool("t.one", "implements: {inline: {id: a:b, description: d}}"),
			"b/TOOL.md": tool("t.two", "implements: a:b"),
		}, "b/TOOL.md", "/implements", "action_ref_unresolvable", []string{"inline", "a/TOOL.md"}},
		{"registry ref to an inline action", map[string]string{
			"a/TOOL.md": tool("t.one", "implements: {inline: {id: a:b, description: d}}"),
			"b/TOOL.md": tool("t.two", "implements: '@o/lib/a-b'"),
		}, "b/TOOL.md", "/implements", "action_ref_unresolvable", []string{"inline"}},
		{"tool widens its inline action", map[string]string{"TOOL.md": tool("t.x", "implements: {inline: {id: a:b, description: d, risk_level: 2}}", "risk_level: 1")}, "TOOL.md", "/risk_level", "widens_risk_level", nil},
		{"two ref forms", map[string]string{"TOOL.md": tool("t.x", "implements: {ref: a:b, file: ./x}")}, "TOOL.md", "/implements", "invalid_value", nil},
		// Version pins.
		{"malformed version range", map[string]string{"ACTION.md": action("a:b"), "TOOL.md": tool("t.x", "implements: {ref: a:b, version: '^^1'}")}, "TOOL.md", "/implements/version", "invalid_version_range", []string{"^^1"}},
		{"malformed @ suffix", map[string]string{"ACTION.md": action("a:b"), "TOOL.md": tool("t.x", "implements: 'a:b@latest'")}, "TOOL.md", "/implements", "invalid_version_range", []string{"latest"}},
		{"empty @ suffix", map[string]string{"ACTION.md": action("a:b"), "TOOL.md": tool("t.x", "implements: 'a:b@'")}, "TOOL.md", "/implements", "invalid_version_range", nil},
		{"malformed range of an unresolvable ref", map[string]string{"TOOL.md": tool("t.x", "implements: {ref: x:y, version: nope}")}, "TOOL.md", "/implements/version", "invalid_version_range", nil},
		{"pin refuses a newer major", map[string]string{"ACTION.md": action("a:b", "version: 2.0.0"), "TOOL.md": tool("t.x", "implements: {ref: a:b, version: '^1.2'}")}, "TOOL.md", "/implements/version", "action_version_mismatch", []string{"2.0.0", "^1.2"}},
		{"@ suffix refuses a newer major", map[string]string{"ACTION.md": action("a:b", "version: 2.0.0"), "TOOL.md": tool("t.x", "implements: '@o/lib/a-b@^1'")}, "TOOL.md", "/implements", "action_version_mismatch", []string{"2.0.0"}},
		{"exact @ suffix refuses another patch", map[string]string{"ACTION.md": action("a:b", "version: 1.0.1"), "TOOL.md": tool("t.x", "implements: 'a:b@1.0.0'")}, "TOOL.md", "/implements", "action_version_mismatch", nil},
		{"pin refuses an older minor", map[string]string{"ACTION.md": action("a:b", "version: 1.1.0"), "TOOL.md": tool("t.x", "implements: {ref: a:b, version: '^1.2'}")}, "TOOL.md", "/implements/version", "action_version_mismatch", nil},
		{"file pin refuses a newer minor", map[string]string{"a/ACTION.md": action("a:b", "version: 1.3.0"), "TOOL.md": tool("t.x", "implements: {file: ./a, version: '~1.2'}")}, "TOOL.md", "/implements/version", "action_version_mismatch", nil},
		{"pin on an action without a version", map[string]string{"p/action.json": `{"name": "diagnose", "riskTier": "R0"}`, "TOOL.md": tool("t.x", "implements: {ref: diagnose, version: '^1'}")}, "TOOL.md", "/implements/version", "action_version_mismatch", []string{"no semantic version"}},
		{"two pins", map[string]string{"ACTION.md": action("a:b"), "TOOL.md": tool("t.x", "implements: {ref: 'a:b@1.0.0', version: '^1'}")}, "TOOL.md", "/implements", "action_pin_ambiguous", nil},
		{"pin on an inline action", map[string]string{"TOOL.md": tool("t.x", "implements: {inline: {id: a:b, description: d}, version: '^1'}")}, "TOOL.md", "/implements", "invalid_value", nil},
		{"version without a ref", map[string]string{"TOOL.md": tool("t.x", "implements: {version: '^1'}")}, "TOOL.md", "/implements", "invalid_value", nil},
		{"invalid action is unresolvable", map[string]string{"a/ACTION.md": action("a:b", "risk_level: 7"), "TOOL.md": tool("t.x", "implements: a:b")}, "TOOL.md", "/implements", "action_ref_unresolvable", nil},

		// Narrowing, never widening.
		{"widens risk", map[string]string{"ACTION.md": base, "TOOL.md": tool("t.x", "implements: store:write", "risk_level: 1")}, "TOOL.md", "/risk_level", "widens_risk_level", nil},
		{"drops mutates", map[string]string{"ACTION.md": base, "TOOL.md": tool("t.x", "implements: store:write", "mutates: [storage:tmp]")}, "TOOL.md", "/mutates", "drops_mutates", []string{"storage:*"}},
		{"drops all mutates", map[string]string{"ACTION.md": base, "TOOL.md": tool("t.x", "implements: store:write", "mutates: []")}, "TOOL.md", "/mutates", "drops_mutates", nil},
		{"relaxes approval", map[string]string{"ACTION.md": base, "TOOL.md": tool("t.x", "implements: store:write", "approval: auto")}, "TOOL.md", "/approval", "relaxes_approval", nil},
		{"relaxes always to on-mutate", map[string]string{"ACTION.md": action("a:b", "approval: always"), "TOOL.md": tool("t.x", "implements: a:b", "approval: on-mutate")}, "TOOL.md", "/approval", "relaxes_approval", nil},
		{"policy relaxed to auto", map[string]string{"ACTION.md": policyBase, "TOOL.md": tool("t.x", "implements: store:deploy", "approval: auto")}, "TOOL.md", "/approval", "relaxes_approval", nil},
		{"policy swapped for another", map[string]string{"ACTION.md": policyBase, "TOOL.md": tool("t.x", "implements: store:deploy", "approval: 'policy:dev'")}, "TOOL.md", "/approval", "relaxes_approval", nil},
		{"on-mutate handed to a policy", map[string]string{"ACTION.md": base, "TOOL.md": tool("t.x", "implements: store:write", "approval: 'policy:x'")}, "TOOL.md", "/approval", "relaxes_approval", nil},
		{"drops requires", map[string]string{"ACTION.md": base, "TOOL.md": tool("t.x", "implements: store:write", "requires: {secrets: [other]}")}, "TOOL.md", "/requires/secrets", "drops_requires", []string{"key"}},
		{"drops fires_events", map[string]string{"ACTION.md": base, "TOOL.md": tool("t.x", "implements: store:write", "fires_events: [commit-completed]")}, "TOOL.md", "/fires_events", "drops_fires_events", []string{"write"}},

		// TOOL.md fields.
		{"tool field moved to DRIVER.md", map[string]string{"TOOL.md": tool("t.x", "code: ./main.ts")}, "TOOL.md", "/code", "unknown_field", nil},
		{"tool without outputs", map[string]string{"TOOL.md": "---\nname: n\nid: t.x\ndescription: d\nversion: 1.0.0\ninputs: {type: object}\n---\n"}, "TOOL.md", "/outputs", "missing_field", nil},
		{"tool id pattern", map[string]string{"TOOL.md": tool("T_X")}, "TOOL.md", "/id", "invalid_format", nil},
		{"alias with a space", map[string]string{"TOOL.md": tool("t.x", "metadata: {gated: {aliases: ['send email']}}")}, "TOOL.md", "/metadata/gated/aliases/0", "invalid_format", nil},
		{"approval_ttl not a duration", map[string]string{"TOOL.md": tool("t.x", "metadata: {gated: {approval_ttl: soon}}")}, "TOOL.md", "/metadata/gated/approval_ttl", "invalid_approval_ttl", []string{"soon"}},
		{"approval_ttl too short", map[string]string{"TOOL.md": tool("t.x", "metadata: {gated: {approval_ttl: 30s}}")}, "TOOL.md", "/metadata/gated/approval_ttl", "invalid_approval_ttl", []string{"1m", "24h"}},
		{"approval_ttl too long", map[string]string{"TOOL.md": tool("t.x", "metadata: {gated: {approval_ttl: 25h}}")}, "TOOL.md", "/metadata/gated/approval_ttl", "invalid_approval_ttl", nil},
		{"approval_ttl not a string", map[string]string{"TOOL.md": tool("t.x", "metadata: {gated: {approval_ttl: 15}}")}, "TOOL.md", "/metadata/gated/approval_ttl", "invalid_type", nil},
		{"approver with a space", map[string]string{"TOOL.md": tool("t.x", "metadata: {gated: {approvers: ['group://ops', 'operator bob']}}")}, "TOOL.md", "/metadata/gated/approvers/1", "invalid_format", nil},
		{"approver repeated", map[string]string{"TOOL.md": tool("t.x", "metadata: {gated: {approvers: ['group://ops', 'group://ops']}}")}, "TOOL.md", "/metadata/gated/approvers", "duplicate_items", nil},

		// Input schemas.
		{"remote $ref", map[string]string{"TOOL.md": strings.Replace(tool("t.x"), "inputs: {type: object}", "inputs: {$ref: 'https://example.com/s.json'}", 1)}, "TOOL.md", "/inputs", "input_schema_external_ref", nil},
		{"file $ref", map[string]string{"p/action.json": `{"name": "x", "riskTier": "R0", "inputSchema": {"$ref": "file:///etc/passwd"}}`}, "p/action.json", "/inputSchema", "input_schema_external_ref", nil},
		{"schema that does not compile", map[string]string{"TOOL.md": strings.Replace(tool("t.x"), "inputs: {type: object}", "inputs: {type: 5}", 1)}, "TOOL.md", "/inputs", "input_schema_invalid", nil},
		{"bad actions.yaml input schema", map[string]string{"ACTIONS.yaml": "actions:\n  - {name: a, description: d, command: [x], inputSchema: {minLength: -1}}\n"}, "ACTIONS.yaml", "/actions/0/inputSchema", "input_schema_invalid", nil},
		{"bad actions.yaml output schema", map[string]string{"ACTIONS.yaml": "actions:\n  - {name: a, description: d, command: [x], inputSchema: {}, outputSchema: {type: 5}}\n"}, "ACTIONS.yaml", "/actions/0/outputSchema", "output_schema_invalid", nil},
		{"remote $ref in an output schema", map[string]string{"p/action.json": `{"name": "x", "riskTier": "R0", "outputSchema": {"$ref": "https://example.com/s.json"}}`}, "p/action.json", "/outputSchema", "output_schema_external_ref", nil},

		// Importer schemas.
		{"actions.yaml without command", map[string]string{"ACTIONS.yaml": "actions:\n  - {name: a, description: d, inputSchema: {}}\n"}, "ACTIONS.yaml", "/actions/0/command", "missing_field", nil},
		{"actions.yaml empty", map[string]string{"ACTIONS.yaml": "actions: []\n"}, "ACTIONS.yaml", "/actions", "invalid_length", nil},
		{"actions.yaml hint type", map[string]string{"ACTIONS.yaml": "actions:\n  - {name: a, description: d, command: x, inputSchema: {}, annotations: {readOnlyHint: 'yes'}}\n"}, "ACTIONS.yaml", "/actions/0/annotations/readOnlyHint", "invalid_type", nil},
		{"action.json without name", map[string]string{"p/action.json": `{"riskTier": "R1"}`}, "p/action.json", "/name", "missing_field", nil},
		{"action.json array", map[string]string{"p/action.json": `[1]`}, "p/action.json", "", "json_invalid", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := testtree.Write(t, t.TempDir(), tt.files)
			ps := loadProblems(t, dir)
			want := filepath.Join(dir, filepath.FromSlash(tt.file))
			for _, p := range ps {
				if p.File == want && p.Field == tt.field && p.Code == tt.code {
					for _, frag := range tt.msgFragments {
						if !strings.Contains(p.Message, frag) {
							t.Errorf("message %q lacks %q", p.Message, frag)
						}
					}
					return
				}
			}
			t.Fatalf("want %s: %s: %s; got:\n%s", tt.file, tt.field, tt.code, (&LoadError{Problems: ps}).Error())
		})
	}
}

func TestEveryProblemIsListed(t *testing.T) {
	t.Parallel()
	dir := testtree.Write(t, t.TempDir(), map[string]string{
		"a/ACTION.md": action("a:b", "risk_level: 2", "mutates: [x:y]", "approval: always"),
		"b/TOOL.md":   tool("t.one", "implements: a:b", "risk_level: 1", "mutates: []", "approval: auto"),
		"c/TOOL.md":   tool("t.two", "implements: missing:action"),
		"d/ACTION.md": "no frontmatter",
	})
	ps := loadProblems(t, dir)
	var codes []string
	for _, p := range ps {
		codes = append(codes, p.Code)
	}
	want := []string{"widens_risk_level", "drops_mutates", "relaxes_approval", "action_ref_unresolvable", "frontmatter_missing"}
	for _, w := range want {
		if !strings.Contains(strings.Join(codes, " "), w) {
			t.Errorf("problems %v lack %s", codes, w)
		}
	}
	if len(ps) != len(want) {
		t.Errorf("got %d problems %v, want %d", len(ps), codes, len(want))
	}
}

func TestDirectoryProblems(t *testing.T) {
	t.Parallel()
	empty := t.TempDir()
	testtree.Write(t, empty, map[string]string{"README.md": "not a catalog file"})
	notDir := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(notDir, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	big := testtree.Write(t, t.TempDir(), map[string]string{"ACTION.md": action("a:b", "tags: ["+strings.Repeat("t,", int(limits.FileBytes/2))+"t]")})
	tests := []struct {
		dir, code string
	}{
		{empty, "catalog_empty"},
		{filepath.Join(t.TempDir(), "missing"), "catalog_dir_invalid"},
		{notDir, "catalog_dir_invalid"},
		{big, "file_too_large"},
	}
	for _, tt := range tests {
		ps := loadProblems(t, tt.dir)
		if len(ps) == 0 || ps[0].Code != tt.code {
			t.Errorf("%s: problems %v, want %s", tt.dir, ps, tt.code)
		}
	}
}

func TestApprovalNarrowing(t *testing.T) {
	t.Parallel()
	classes := []string{"auto", "on-mutate", "always", "policy:a", "policy:b"}
	// allowed[floor] lists what an implementor may declare over that floor.
	allowed := map[string][]string{
		"auto":      {"auto", "on-mutate", "always", "policy:a", "policy:b"},
		"on-mutate": {"on-mutate", "always"},
		"always":    {"always"},
		"policy:a":  {"policy:a", "always"},
		"policy:b":  {"policy:b", "always"},
	}
	for _, floor := range classes {
		for _, got := range classes {
			want := strings.Contains(" "+strings.Join(allowed[floor], " ")+" ", " "+got+" ")
			if approvalNarrows(floor, got) != want {
				t.Errorf("approvalNarrows(%s, %s) = %v, want %v", floor, got, !want, want)
			}
		}
	}
}

func TestNarrowingThatTightensIsAccepted(t *testing.T) {
	t.Parallel()
	dir := testtree.Write(t, t.TempDir(), map[string]string{
		"ACTION.md": action("store:write", "risk_level: 1", `mutates: ["storage:*"]`, "approval: on-mutate",
			"requires: {network: [api.example]}", "fires_events: [write]"),
		"TOOL.md": tool("t.x", "implements: store:write", "risk_level: 3", "approval: always",
			`mutates: ["storage:*", "network:api.example"]`, "requires: {network: [api.example, cdn.example], tools: [t.y]}",
			"fires_events: [write, commit-completed]"),
		"policy/ACTION.md": action("store:deploy", `approval: "policy:prod"`),
		"policy/TOOL.md":   tool("t.deploy", "implements: store:deploy", "approval: always"),
	})
	c := mustLoad(t, dir)
	v, _ := c.Lookup("t.x")
	got := fmt.Sprintf("%d %s %v %v %v", v.RiskLevel, v.Approval, v.Mutates, v.Requires, v.FiresEvents)
	want := "3 always [network:api.example storage:*] [network:api.example network:cdn.example tools:t.y] [commit-completed write]"
	if got != want {
		t.Fatalf("merged view %s, want %s", got, want)
	}
	if v, _ := c.Lookup("t.deploy"); v.Approval != "always" {
		t.Fatalf("policy tightened to always: %s", v.Approval)
	}
}

func TestSkillName(t *testing.T) {
	t.Parallel()
	yaml := "actions:\n  - {name: scrape, description: d, command: [x], inputSchema: {}}\n"
	tests := []struct {
		skill, want string
	}{
		{"---\nname: mendable/firecrawl\n---\n", "mendable/firecrawl/scrape"},
		{"---\nname: firecrawl\n---\n", "scrape"},      // not owner/skill: names stay bare
		{"---\nname: a/b/c\n---\n", "scrape"},          // too many segments
		{"---\ndescription: no name\n---\n", "scrape"}, // no name
	}
	for _, tt := range tests {
		c := mustLoad(t, testtree.Write(t, t.TempDir(), map[string]string{"s/ACTIONS.yaml": yaml, "s/SKILL.md": tt.skill}))
		if v, ok := c.Lookup("scrape"); !ok || v.ToolID != tt.want {
			t.Errorf("SKILL.md %q: view %+v, want tool id %s", tt.skill, v, tt.want)
		}
	}
	// A SKILL.md elsewhere does not qualify the names.
	c := mustLoad(t, testtree.Write(t, t.TempDir(), map[string]string{"s/ACTIONS.yaml": yaml, "SKILL.md": tests[0].skill}))
	if v, _ := c.Lookup("scrape"); v.ToolID != "scrape" {
		t.Errorf("a SKILL.md in another directory named the action %s", v.ToolID)
	}
	ps := loadProblems(t, testtree.Write(t, t.TempDir(), map[string]string{"s/ACTIONS.yaml": yaml, "s/SKILL.md": "---\nname: [\n---\n"}))
	if len(ps) != 1 || ps[0].Code != "skill_name_unreadable" || ps[0].Field != "/name" {
		t.Fatalf("unreadable SKILL.md: %v", ps)
	}
}
