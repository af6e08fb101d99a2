package contract

import (
	"time"

	"github.com/gatedhq/gated/internal/route"
)

// Evaluation is the contract's verdict on a valid event.
type Evaluation struct {
	// Category is the category the rules ran on: the caller's effective
	// category, or private_read when a public_read is identity-bound.
	Category  route.Category
	Auth      AuthReport
	Findings  []route.Finding
	Reasons   []string
	Integrity Integrity
	// SourceIDs are the evidence source ids safe to echo, by ref index.
	SourceIDs []string
}

// Evaluate applies sections 2–4 of the reference to a prepared event. cat is
// the category to route on: the declared one, or the catalog's effective
// one when the tool is catalogued.
func Evaluate(ev *route.Event, cat route.Category, now time.Time) *Evaluation {
	e := &Evaluation{Category: cat, SourceIDs: displayIDs(ev.EvidenceRefs)}
	var fs []route.Finding
	e.Auth, fs = authorize(ev, e.SourceIDs)
	e.Findings = append(e.Findings, fs...)

	if e.Category = RuleCategory(ev, cat); e.Category != cat {
		e.Findings = append(e.Findings, route.Finding{
			Source: route.SourceContract, Code: route.CodePublicReadIdentityBoundMisclassified, Route: route.Ask, Blocking: true,
			Message: "a read declared public is identity-bound and is routed as a private read",
		})
	}
	fs, e.Reasons = routeCategory(ev, e.Category, e.Auth.EffectiveState)
	e.Findings = append(e.Findings, fs...)

	fs, e.Integrity = checkEvidence(ev, e.Category, e.SourceIDs, now)
	e.Findings = append(e.Findings, fs...)
	for _, w := range e.Integrity.WarningCodes {
		e.Reasons = append(e.Reasons, "evidence_warning:"+w)
	}
	return e
}

// RuleCategory is the category Evaluate runs the rules on for cat: cat, or
// private_read when a public_read is identity-bound. It does not depend on
// the authorization state, so an approval binds to it before the event is
// evaluated with the approval.
func RuleCategory(ev *route.Event, cat route.Category) route.Category {
	if cat == route.PublicRead && identityBound(ev) {
		return route.PrivateRead
	}
	return cat
}

// RuntimeFinding turns the runtime's (normalised) recommended route into a
// finding, so the final route is never looser than the runtime's. It
// reports false for accept, which adds nothing. lowered says the event
// recommended accept and the contract lowered it (an unversioned event's
// forbidden accept): then the route is the contract's, not the runtime's,
// and the finding says so. An adapter that builds the event (the Action
// API, a hook) recommends accept, so this is what its answers carry.
func RuntimeFinding(r route.Route, lowered bool) (route.Finding, bool) {
	switch r {
	case route.Accept:
		return route.Finding{}, false
	case route.Refuse:
		return route.Finding{Source: route.SourceRuntime, Code: route.CodeRuntimeRefusal, Route: route.Refuse, Blocking: true,
			Message: "the runtime itself recommended refuse"}, true
	}
	code := route.CodeRuntimeRecommendedAsk
	if r == route.Defer {
		code = route.CodeRuntimeRecommendedDefer
	}
	if lowered {
		return route.Finding{Source: route.SourceContract, Code: code, Route: r,
			Message: "the event recommended accept, which the contract does not allow for its category and authorization state, so it was lowered to " + r.String()}, true
	}
	return route.Finding{Source: route.SourceRuntime, Code: code, Route: r,
		Message: "the runtime recommended " + r.String()}, true
}
