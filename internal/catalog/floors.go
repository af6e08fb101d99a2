package catalog

import (
	"fmt"
	"strings"

	"github.com/gatedhq/gated/internal/route"
)

// ArgumentMode is what a failed argument validation does
// (--argument-validation).
type ArgumentMode int

const (
	ArgumentsEnforce ArgumentMode = iota // refuse, blocker arguments_invalid (the default)
	ArgumentsWarn                        // a non-blocking finding at accept
	ArgumentsOff                         // no validation
)

var argumentModeNames = [...]string{"enforce", "warn", "off"}

func (m ArgumentMode) String() string {
	if int(m) >= 0 && int(m) < len(argumentModeNames) {
		return argumentModeNames[m]
	}
	return "enforce"
}

// ParseArgumentMode maps "enforce", "warn" or "off" ("" is enforce) to a
// mode; anything else is an error.
func ParseArgumentMode(s string) (ArgumentMode, error) {
	if s == "" {
		return ArgumentsEnforce, nil
	}
	for i, n := range argumentModeNames {
		if n == s {
			return ArgumentMode(i), nil
		}
	}
	return ArgumentsEnforce, fmt.Errorf("unknown argument validation mode %q (want enforce, warn or off)", s)
}

func finding(code string, r route.Route, blocking bool, format string, args ...any) route.Finding {
	return route.Finding{Source: route.SourceCatalog, Code: code, Route: r, Blocking: blocking, Message: fmt.Sprintf(format, args...)}
}

// EffectiveCategory applies the catalog to the category the event declares.
// A catalogued write declared as a read is routed as a write and blocked
// (tool_category_understated, at ask: a runtime that misdescribes its tools
// needs a human to look). A declared unknown takes the catalog's category.
// Otherwise the declared category stands: a write declared for a catalogued
// read only tightens.
func EffectiveCategory(v *View, declared route.Category) (route.Category, []route.Finding) {
	if v == nil {
		return declared, nil
	}
	implied := v.Category()
	switch {
	case declared == route.Unknown:
		return implied, nil
	case implied == route.Write && (declared == route.PublicRead || declared == route.PrivateRead):
		return route.Write, []route.Finding{finding(route.CodeToolCategoryUnderstated, route.Ask, true,
			"tool %s is catalogued as a write (risk_level %d, mutates %s) but the event declares %s", v.ToolID, v.RiskLevel, listOrNone(v.Mutates), declared)}
	}
	return declared, nil
}

// Floors returns the catalog's findings for an event whose call c is (the
// view the event matched, applied to its arguments); auth is the event's
// effective authorization state after the contract's evidence rules. Each
// finding only tightens the route. When the arguments fail the input schema
// it also returns where, so that nobody validates them again.
func Floors(c *Call, ev *route.Event, auth route.AuthState, mode ArgumentMode) ([]route.Finding, []ArgumentError) {
	if ev == nil {
		ev = &route.Event{}
	}
	// Argument rules first: they name the specific reason, and a person
	// reading a hook's answer sees the first few findings only.
	out := c.ruleFindings(ev.ProposedArguments)
	v := c.Floor()
	if v.NeverExecute {
		out = append(out, finding(route.CodeRiskTierNeverAuto, route.Refuse, true,
			"tool %s has risk tier %s, which never executes automatically", v.ToolID, v.RiskTier))
	}
	confirmed := auth >= route.AuthConfirmed
	switch {
	case v.RiskLevel == 2 && !confirmed:
		r := route.Ask
		if auth == route.AuthNone {
			r = route.Defer
		}
		out = append(out, finding(route.CodeRiskLevelRequiresConfirmation, r, true,
			"tool %s has risk_level 2 (external side effects) and needs authorization_state confirmed, not %s", v.ToolID, auth))
	case v.RiskLevel >= 3 && (!confirmed || ev.VerifiedApprovals() == 0):
		out = append(out, finding(route.CodeIrreversibleActionRequiresVerifiedApproval, route.Defer, true,
			"tool %s has risk_level 3 (irreversible) and needs authorization_state confirmed (is %s) and a verified approval evidence ref (has %d)", v.ToolID, auth, ev.VerifiedApprovals()))
	}
	// approval: policy:<ref> is the policy's to decide (or, without a policy,
	// UnresolvedApprovalPolicy's).
	if _, byPolicy := v.PolicyRef(); !byPolicy && needsApproval(v) && !confirmed {
		out = append(out, finding(route.CodeApprovalRequired, route.Ask, true,
			"tool %s has approval %s and needs authorization_state confirmed, not %s", v.ToolID, v.Approval, auth))
	}
	var errs []ArgumentError
	if mode != ArgumentsOff {
		if errs = v.ValidateArguments(ev.ProposedArguments); len(errs) > 0 {
			r, blocking := route.Refuse, true
			if mode == ArgumentsWarn {
				r, blocking = route.Accept, false
			}
			out = append(out, finding(route.CodeArgumentsInvalid, r, blocking,
				"proposed_arguments do not match the input schema of tool %s: %s", v.ToolID, joinArgumentErrors(errs)))
		}
	}
	return out, errs
}

// FloorCodes are the codes of the risk and approval floors Floors can add
// for a call to v, which depend on the view alone: the never-execute tier,
// the risk level, and the approval gated asks for itself. Coverage reports
// list them; TestFloorCodesNameWhatFloorsAdds keeps the two in step.
func (v *View) FloorCodes() []string {
	var out []string
	if v.NeverExecute {
		out = append(out, route.CodeRiskTierNeverAuto)
	}
	switch {
	case v.RiskLevel == 2:
		out = append(out, route.CodeRiskLevelRequiresConfirmation)
	case v.RiskLevel >= 3:
		out = append(out, route.CodeIrreversibleActionRequiresVerifiedApproval)
	}
	if _, byPolicy := v.PolicyRef(); !byPolicy && needsApproval(v) {
		out = append(out, route.CodeApprovalRequired)
	}
	return out
}

// UnresolvedApprovalPolicy is the floor of a tool whose approval is
// policy:<ref> when gated runs without a policy: nothing can grant the
// approval, so the call defers.
func UnresolvedApprovalPolicy(v *View) (route.Finding, bool) {
	ref, ok := v.PolicyRef()
	if !ok {
		return route.Finding{}, false
	}
	return finding(route.CodeApprovalPolicyUnresolvable, route.Defer, true,
		"tool %s defers approval to policy %q, and no policy is loaded", v.ToolID, ref), true
}

// needsApproval: always asks every time, on-mutate when the tool mutates.
func needsApproval(v *View) bool {
	return v.Approval == approvalAlways || (v.Approval == approvalOnMutate && len(v.Mutates) > 0)
}

func joinArgumentErrors(errs []ArgumentError) string {
	parts := make([]string, len(errs))
	for i, e := range errs {
		parts[i] = e.String()
	}
	return strings.Join(parts, "; ")
}

func listOrNone(items []string) string {
	if len(items) == 0 {
		return "nothing"
	}
	return strings.Join(items, ", ")
}
