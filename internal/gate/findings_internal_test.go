package gate

import (
	"strings"
	"testing"

	"github.com/gatedhq/gated/internal/redact/redacttest"
	"github.com/gatedhq/gated/internal/route"
)

// An approval's findings are shown to approvers and sent to the webhook,
// and a message may quote what the caller named (the Action API's "action
// %s has risk tier R3" quotes the plan's actionType): the secrets in it are
// masked, as the approval's tool name is.
func TestApprovalFindingsMaskTheirMessages(t *testing.T) {
	t.Parallel()
	for _, c := range redacttest.Canaries {
		got := blockingFindings([]route.Finding{{Code: route.CodePlanRiskTierRequiresApproval, Route: route.Ask, Blocking: true,
			Message: "action " + c.Text + " has risk tier R3"}})
		if len(got) != 1 || strings.Contains(got[0].Message, c.Secret) || !strings.Contains(got[0].Message, "[secret:"+c.Kind) {
			t.Errorf("the %s canary: findings %+v", c.Kind, got)
		}
	}
}
