package gate

import (
	"errors"
	"fmt"

	"github.com/gatedhq/gated/internal/catalog"
	"github.com/gatedhq/gated/internal/contract"
	"github.com/gatedhq/gated/internal/policy"
	"github.com/gatedhq/gated/internal/route"
)

// Pick is the category a surface declares for a tool, as one catalog
// snapshot gives it. Passed on in Request.Pick, it makes the decision join
// that same snapshot (and take the call it classified), so a reload in
// between cannot split a decision and no command line is parsed twice.
type Pick struct {
	Category route.Category // unknown when no loaded catalog describes the tool
	tool     string
	catalog  *catalog.Catalog // nil: no catalog configured
	call     *catalog.Call    // nil: only the tool was looked up
}

// Category picks the category the current catalog gives tool. Adapters
// that cannot know a tool's category themselves (hooks) declare this one.
func (e *Engine) Category(tool string) Pick {
	p := Pick{Category: route.Unknown, tool: tool}
	if e.catalog == nil {
		return p
	}
	p.catalog = e.catalog()
	if v, ok := p.catalog.Lookup(tool); ok {
		p.Category = v.Category()
	}
	return p
}

// CallCategory picks the category the current catalog gives a call of tool
// with args, made in workspace: a tool's category, or a read's for a
// command line the catalog proves only reads in the workspace. Hooks
// declare it, and pass the pick on in Request.Pick.
func (e *Engine) CallCategory(tool string, args map[string]any, workspace string) Pick {
	p := Pick{Category: route.Unknown, tool: tool}
	if e.catalog == nil {
		return p
	}
	p.catalog = e.catalog()
	if v, ok := p.catalog.Lookup(tool); ok {
		p.call = v.Call(args, workspace)
		p.Category = p.call.Floor().Category()
	}
	return p
}

// AlwaysRefused reports whether the current catalog refuses every call of
// tool, whatever it carries: a tool that never executes, or, unless the
// surface vouches for its category, a tool no catalog describes under
// --unknown-tools refuse. Policy is not asked: its rules may turn on the
// call. A surface may hide such tools (gated mcp-proxy --hide-refused).
func (e *Engine) AlwaysRefused(tool string, vouched bool) bool {
	if e.catalog == nil || e.shadow {
		return false
	}
	v, ok := e.catalog().Lookup(tool)
	if !ok {
		return !vouched && e.unknownTools == UnknownRefuse
	}
	return v.NeverExecute
}

// OutputConforms checks an output reported for a call to tool against the
// current catalog's outputSchema for it (the catalog current now, which a
// reload may have changed since the decision). It returns nil when nothing
// is checked: no catalog, a tool it does not describe, or no outputSchema.
// An output holding a number the contract would refuse in arguments does
// not conform: the validator is not given it.
func (e *Engine) OutputConforms(tool string, output any) *bool {
	if e.catalog == nil {
		return nil
	}
	v, ok := e.catalog().Lookup(tool)
	if !ok || !v.OutputSchema {
		return nil
	}
	if !contract.NumbersInRange(output) {
		return new(false)
	}
	return v.OutputConforms(output)
}

// Stopped reports, as an error that says why, whether a kill switch stops
// a request a surface passes on for agentID without deciding it: a kill of
// scope all or of the agent, or a kill list too old to rule one out (fail
// closed). A surface checks it before what it passes on undecided (gated
// mcp-proxy's resources/read, prompts/get and completion/complete), so that
// a kill stops those too. tool names the tool when the request runs one (a
// tools/call retry carrying the upstream's continuation state, decided when
// the upstream first asked): a kill of that tool, by any of its names,
// stops it too. nil without a kill switch, in shadow mode, and when no
// kill stops the request.
func (e *Engine) Stopped(agentID, tool string) error {
	if e.kills == nil || e.shadow {
		return nil
	}
	var view *catalog.View
	if tool != "" && e.catalog != nil {
		view, _ = e.catalog().Lookup(tool)
	}
	t := killTarget(agentID, tool, view)
	ev := &route.Event{AgentID: agentID, ToolName: tool}
	k, err := e.kills.Check(t, func() []string { return policy.Principals(nil, true, ev) })
	switch {
	case err != nil:
		return errors.New("the kill switch list could not be confirmed recently, so gated passes nothing on (fail closed)")
	case k != nil:
		return fmt.Errorf("kill switch %s (scope %s) stops this request", k.ID, k.Scope)
	}
	return nil
}
