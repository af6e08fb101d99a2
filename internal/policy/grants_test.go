package policy

import (
	"testing"

	"github.com/gatedhq/gated/internal/route"
)

func TestSmoke(t *testing.T) {
	s := mustLoad(t, nil, map[string]string{"POLICY.md": policyMD(`schema: policy/v1
id: "@acme/team"
grants:
  - principal: "operator://bob"
    actions: [{action: "storage:commit"}, {action: "secrets:*"}]
  - principal: "*"
    actions: [{action: "storage:read"}]
    conditions:
      - {kind: during-business-hours, timezone: "America/New_York"}
      - {kind: ip-range, cidr: "10.0.0.0/8"}
      - {kind: mfa-recent, within_seconds: 600}
    ttl_seconds: 3600
    granted_at: 2026-05-04T14:30:00Z
`)})
	t.Log(s.GrantsRego())
	assertOutcome(t, s, input("storage:commit", "operator://bob"), route.Accept)
	assertOutcome(t, s, input("secrets:reveal", "operator://bob"), route.Accept)
	assertOutcome(t, s, input("storage:commit", "operator://eve"), route.Refuse, "policy_no_grant")
	assertOutcome(t, s, input("storage:read", "operator://eve"), route.Refuse, "policy_condition_failed")
}
