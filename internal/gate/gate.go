// Package gate makes decisions: it runs every decision source over an event
// (contract, then catalog and policy), combines their findings into the
// strictest route, and builds the answer. The same path serves HTTP, the
// check command and every other surface.
package gate

import (
	"context"
	"fmt"
	"net/netip"
	"time"

	"github.com/google/uuid"

	"github.com/gatedhq/gated/internal/contract"
	"github.com/gatedhq/gated/internal/route"
)

// CodeInternalError marks a decision that failed inside gated; it refuses.
const CodeInternalError = "internal_error"

// Request is one pre-tool-check as the decision path sees it.
type Request struct {
	Event      map[string]any // the decoded JSON object
	Shadow     bool           // observe only: report the route, let the tool run
	RequestID  string
	TokenName  string
	Principals []string
	// TrustEventPrincipals lets the event's agent_id and subject count as
	// principals (tokens that vouch for their runtime, or open mode).
	TrustEventPrincipals bool
	ClientIP             netip.Addr
}

// Engine is the decision path. It is safe for concurrent use.
type Engine struct {
	now    func() time.Time
	shadow bool
}

// Option configures an Engine.
type Option func(*Engine)

// WithClock sets the clock used for evidence freshness and time conditions.
func WithClock(now func() time.Time) Option { return func(e *Engine) { e.now = now } }

// WithShadow puts every decision in shadow mode.
func WithShadow(on bool) Option { return func(e *Engine) { e.shadow = on } }

// New returns an engine.
func New(opts ...Option) *Engine {
	e := &Engine{now: time.Now}
	for _, o := range opts {
		o(e)
	}
	return e
}

// Decide routes one event. It never panics and never fails open: any
// failure inside the path yields a refusal naming it.
func (e *Engine) Decide(ctx context.Context, req Request) (d *Decision) {
	d = &Decision{
		DecisionID: newID(), Shadow: req.Shadow || e.shadow, ContractVersion: route.ContractVersion,
	}
	defer func() {
		if r := recover(); r != nil {
			d.refuse(CodeInternalError, fmt.Sprintf("the decision failed inside gated: %v", r))
		}
	}()
	now := e.now()
	p := contract.Prepare(req.Event)
	d.ValidationErrors = p.ValidationErrors
	d.ToolName, d.ToolCategory = p.Declared.ToolName, p.Declared.ToolCategory
	d.AuthorizationState, d.RiskDomain = p.Declared.AuthorizationState, p.Declared.RiskDomain
	if r, err := route.ParseRoute(p.RuntimeRoute); err == nil {
		d.RuntimeRecommendedRoute = &r
	}
	if p.Event == nil {
		d.EvidenceIntegrity, d.AuthorizationReport = emptyIntegrity(), emptyAuthReport()
		d.finish(p.Findings, route.Combine(p.Findings))
		return d
	}

	ev := p.Event
	eval := contract.Evaluate(ev, ev.ToolCategory, now)
	d.ToolCategory = string(eval.Category)
	d.AuthorizationState = eval.Auth.EffectiveState.String()
	d.EvidenceRefCount = len(ev.EvidenceRefs)
	d.EvidenceIntegrity, d.AuthorizationReport = &eval.Integrity, &eval.Auth
	d.Reasons = eval.Reasons

	findings := eval.Findings
	gateOutcome := route.Combine(findings)
	if f, ok := contract.RuntimeFinding(ev.RecommendedRoute); ok {
		findings = append(findings, f)
	}
	d.finish(findings, gateOutcome)
	return d
}

// finish sets the final route from all findings and fills the envelope;
// gateOutcome is the gate's own verdict before the runtime's route.
func (d *Decision) finish(findings []route.Finding, gateOutcome route.Outcome) {
	out := route.Combine(findings)
	if findings == nil {
		findings = []route.Finding{}
	}
	if d.Reasons == nil {
		d.Reasons = []string{}
	}
	d.Findings = findings
	d.Route, d.RecommendedAction, d.HardBlockers = out.Route, out.Route, out.HardBlockers
	d.GateDecision = passFail(out.Pass())
	d.fillEnvelope(gateOutcome)
}

// refuse replaces whatever the decision held by a refusal for code.
func (d *Decision) refuse(code, msg string) {
	f := []route.Finding{{Source: route.SourceGated, Code: code, Route: route.Refuse, Blocking: true, Message: msg}}
	if d.EvidenceIntegrity == nil {
		d.EvidenceIntegrity = emptyIntegrity()
	}
	if d.AuthorizationReport == nil {
		d.AuthorizationReport = emptyAuthReport()
	}
	d.Reasons = nil
	d.finish(f, route.Combine(f))
}

func emptyIntegrity() *contract.Integrity {
	return &contract.Integrity{
		EvidenceSafetyVersion: "0.1", UsedSourceIDs: []string{}, MissingEvidenceSourceIDs: []string{},
		ContradictoryEvidenceSourceIDs: []string{}, CitationSourceIDs: []string{}, ProvenanceSourceIDs: []string{},
		Issues: []contract.Issue{}, ErrorCodes: []string{}, WarningCodes: []string{},
	}
}

func emptyAuthReport() *contract.AuthReport {
	return &contract.AuthReport{Support: []contract.Support{}}
}

// newID returns a UUIDv7: time-ordered, so audit records index well. Its
// only failure is the system's random source, which Go treats as fatal.
func newID() string { return uuid.Must(uuid.NewV7()).String() }
