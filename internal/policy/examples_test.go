package policy

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/gatedhq/gated/internal/policy/policytest"
	"github.com/gatedhq/gated/internal/route"
)

// exampleCatalog stands in for examples/catalog (this package does not
// import the catalog): tool_name -> action id and approval policy ref.
var exampleCatalog = map[string][2]string{
	"lookup_customer": {"crm:read-customer", ""},
	"update_ticket":   {"tickets:update", ""},
	"send_email":      {"messaging:send-email", ""},
	"issue_refund":    {"billing:refund", ""},
	"git_commit":      {"storage:commit", ""},
	"rotate_api_key":  {"secrets:rotate", ""},
	"deploy_service":  {"deploy:production", "production-deploys"},
}

// The example policies and their *_test.yaml, run through the policy alone.
// The cases are built so the contract and catalog add nothing; `gated policy
// test` runs the same file through the whole gate.
func TestExamples(t *testing.T) {
	s, err := Load([]string{"../../examples/policy"}, fakeResolver{"@agentproto/actions/standard/storage-commit": "storage:commit"})
	if err != nil {
		t.Fatal(err)
	}
	decide := func(raw map[string]any, principals []string, now time.Time) (string, []string) {
		var ev route.Event
		b, _ := json.Marshal(raw)
		if err := json.Unmarshal(b, &ev); err != nil {
			t.Fatalf("event: %v", err)
		}
		tool := exampleCatalog[ev.ToolName]
		res := s.Evaluate(context.Background(), Input{
			Event: &ev, Category: ev.ToolCategory, ActionID: tool[0], ApprovalPolicyRef: tool[1],
			Principals: Principals(principals, false, &ev), Now: now, Limiter: NewLimiter(),
		})
		o := route.Combine(res.Findings)
		return o.Route.String(), o.HardBlockers
	}
	var out bytes.Buffer
	passed, failed, err := policytest.Run([]string{"../../examples/policy"}, decide, &out)
	if err != nil || failed > 0 || passed == 0 {
		t.Fatalf("passed %d, failed %d, err %v\n%s", passed, failed, err, out.String())
	}
}
