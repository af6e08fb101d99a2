package policy

import (
	"testing"

	"github.com/open-policy-agent/opa/v1/ast"
)

// FuzzParse: any input yields a Document or errors, never a panic; a
// Document always has an id and a known default, and its generated Rego
// parses.
func FuzzParse(f *testing.F) {
	f.Add([]byte(policyMD("schema: policy/v1\nid: \"@a/b\"\ngrants:\n  - {principal: x, actions: [{action: \"storage:*\"}], ttl_seconds: 5, granted_at: 2026-01-01T00:00:00Z}\n")))
	f.Add([]byte(policyMD("schema: policy/v1\nid: \"@a/b\"\ngrants:\n  - principal: {ref: \"@acme/g\"}\n    actions: [{action: a:b}]\n    conditions: [{kind: during-business-hours, timezone: UTC, days: [mon]}, {kind: ip-range, cidr: ::/0}, {kind: mfa-recent, within_seconds: 1}]\n")))
	f.Add([]byte(policyMD("schema: policy/v1\nid: \"@a/b\"\nlimits: [{kind: rate-tool-calls, value: 1, per: day}]\nrequirements: [{kind: approval-from, count: 2}]\n")))
	f.Add([]byte("---\n---\n"))
	f.Add([]byte("---\nschema: policy/v1\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		doc, errs, _ := Parse("POLICY.md", data)
		if doc == nil && len(errs) == 0 {
			t.Fatal("no document and no error")
		}
		if doc != nil && (doc.ID == "" || (doc.Default != "allow" && doc.Default != "deny")) {
			t.Fatalf("invalid document accepted: %+v", doc)
		}
		if doc != nil {
			src, _, _ := generateGrants([]*Document{doc}, nil)
			if _, err := ast.ParseModuleWithOpts("g.rego", src, ast.ParserOptions{RegoVersion: ast.RegoV1}); err != nil {
				t.Fatalf("generated Rego does not parse: %v\n%s", err, src)
			}
		}
	})
}
