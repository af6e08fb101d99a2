package gate

import (
	"fmt"

	"github.com/gatedhq/gated/internal/catalog"
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
	t := killTarget(ev.AgentID, ev.ToolName, s.view())
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

// killTarget is what a kill may name of a call: its agent, its tool by
// every name view (the catalog's, nil for an uncatalogued tool) gives it,
// and its catalog action.
func killTarget(agentID, tool string, view *catalog.View) kill.Target {
	t := kill.Target{AgentID: agentID, ToolName: tool}
	if view != nil {
		t.ToolID, t.ToolAliases, t.ActionID = view.ToolID, view.Aliases, view.ActionID
	}
	return t
}
