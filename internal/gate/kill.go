package gate

import (
	"fmt"

	"github.com/gatedhq/gated/internal/kill"
	"github.com/gatedhq/gated/internal/policy"
	"github.com/gatedhq/gated/internal/route"
)

// WithKillSwitch refuses the calls a kill on board stops, and every call
// while board cannot confirm its list (any call could match a kill it has
// not seen).
func WithKillSwitch(board *kill.Board) Option { return func(e *Engine) { e.kills = board } }

// checkKill checks the call against the kill switch: its agent, tool (by
// every name the catalog gives it), catalog action, and principals — the
// token's and the event's own, vouched for or not, since naming a
// principal can only get a call stopped.
func (s *decision) checkKill() {
	if s.e.kills == nil {
		return
	}
	ev := s.p.Event
	t := kill.Target{AgentID: ev.AgentID, ToolName: ev.ToolName}
	if view := s.view(); view != nil {
		t.ToolID, t.ToolAliases, t.ActionID = view.ToolID, view.Aliases, view.ActionID
	}
	k, err := s.e.kills.Check(t, func() []string { return policy.Principals(s.req.Principals, true, ev) })
	switch {
	case err != nil:
		s.findings = append(s.findings, route.Finding{Source: route.SourceGated, Code: route.CodeKillSwitchUnavailable, Route: route.Refuse, Blocking: true,
			Message: "the kill switch list could not be confirmed recently, so no call can be ruled out"})
	case k != nil:
		// The id and scope only: the value names what the caller already
		// knows, and the reason is the operator's own text.
		s.findings = append(s.findings, route.Finding{Source: route.SourceGated, Code: route.CodeKillSwitch, Route: route.Refuse, Blocking: true,
			Message: fmt.Sprintf("kill switch %s (scope %s) stops this call", k.ID, k.Scope)})
	}
}
