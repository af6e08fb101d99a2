// Package gate makes decisions: it runs every decision source over an event
// (contract, then catalog and policy), combines their findings into the
// strictest route, and records the decision. The same path serves HTTP, the
// check command and every other surface; internal/envelope presents its
// Decision as the answer.
package gate

import (
	"context"
	"fmt"
	"net/netip"
	"time"

	"github.com/google/uuid"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/gatedhq/gated/internal/audit"
	"github.com/gatedhq/gated/internal/bundle"
	"github.com/gatedhq/gated/internal/catalog"
	"github.com/gatedhq/gated/internal/contract"
	"github.com/gatedhq/gated/internal/kill"
	"github.com/gatedhq/gated/internal/metrics"
	"github.com/gatedhq/gated/internal/policy"
	"github.com/gatedhq/gated/internal/redact"
	"github.com/gatedhq/gated/internal/route"
	"github.com/gatedhq/gated/internal/tracing"
)

// UnknownTools is what happens to a tool that no loaded catalog describes.
type UnknownTools int

const (
	UnknownDefer  UnknownTools = iota // defer, blocker tool_not_in_catalog (the default)
	UnknownRefuse                     // refuse, blocker tool_not_in_catalog
	UnknownAllow                      // the contract rules alone decide
)

// ParseUnknownTools maps defer, refuse or allow to a mode.
func ParseUnknownTools(s string) (UnknownTools, error) {
	switch s {
	case route.Defer.String(), "":
		return UnknownDefer, nil
	case route.Refuse.String():
		return UnknownRefuse, nil
	case "allow":
		return UnknownAllow, nil
	}
	return UnknownDefer, fmt.Errorf("unknown --unknown-tools mode %q (want defer, refuse or allow)", s)
}

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
	// NoApproval: the surface can neither show an approval nor retry with
	// one (hooks), so an ask creates none.
	NoApproval bool
	// AsksItself: the surface puts an ask to the person itself (an MCP
	// client's elicitation), so an ask creates no approval that nobody
	// would answer; a defer an approval resolves still creates one.
	AsksItself bool
	// CategoryVouched: the surface vouches for the declared category of a
	// tool no catalog describes (an MCP upstream's annotations the operator
	// trusts), so the unknown-tools rule gives way to the contract rules
	// on that category. An unknown category is not vouched for.
	CategoryVouched bool
	// Workspace is the directory the agent works in (a hook's cwd), which
	// a command line's paths are judged against; empty, no path is inside
	// it.
	Workspace string
	// Call is the event's call as the surface classified it (CallCategory)
	// from the same arguments and workspace, so the decision does not
	// parse its command line again; it is used only if the catalog still
	// has the same view.
	Call *catalog.Call
	// Checks adds a surface's own findings after the catalog join (the
	// Action API's plan rules); view is nil for an uncatalogued tool.
	Checks func(view *catalog.View, ev *route.Event) []route.Finding
	// Binds is what else an approval of the call binds besides the event:
	// the parts of an Action API plan outside its input that decide what
	// runs. nil for every other surface.
	Binds any
}

// Engine is the decision path. It is safe for concurrent use.
type Engine struct {
	now    func() time.Time
	shadow bool

	catalog      func() *catalog.Catalog // nil: no catalog configured
	unknownTools UnknownTools
	argMode      catalog.ArgumentMode

	policy  func() *policy.Set // nil: no policy configured
	limiter *policy.Limiter

	recorder audit.Recorder // nil: decisions are not recorded (check)
	redactor *audit.Redactor
	version  string
	metrics  *metrics.Metrics
	tracer   trace.Tracer // nil: untraced

	approvals Approvals // nil: approvals are off
	publicURL string

	kills *kill.Board // nil: no kill switch
}

// Option configures an Engine.
type Option func(*Engine)

// WithClock sets the clock used for evidence freshness and time conditions.
func WithClock(now func() time.Time) Option { return func(e *Engine) { e.now = now } }

// WithShadow puts every decision in shadow mode.
func WithShadow(on bool) Option { return func(e *Engine) { e.shadow = on } }

// WithCatalog joins events to the catalog current() returns (read once per
// decision, so a reload never splits one), with the given handling of
// uncatalogued tools and of argument validation.
func WithCatalog(current func() *catalog.Catalog, unknown UnknownTools, args catalog.ArgumentMode) Option {
	return func(e *Engine) { e.catalog, e.unknownTools, e.argMode = current, unknown, args }
}

// WithPolicy evaluates the policy current() returns (read once per
// decision). lim keeps rate-limit counts across policy reloads.
func WithPolicy(current func() *policy.Set, lim *policy.Limiter) Option {
	return func(e *Engine) { e.policy, e.limiter = current, lim }
}

// WithAudit records every decision, redacted, with rec. A record that can
// be neither stored nor spooled refuses the call (unless the recorder runs
// fail-open, when it reports the record dropped).
func WithAudit(rec audit.Recorder, red *audit.Redactor, version string) Option {
	return func(e *Engine) { e.recorder, e.redactor, e.version = rec, red, version }
}

// WithMetrics counts every decision.
func WithMetrics(m *metrics.Metrics) Option { return func(e *Engine) { e.metrics = m } }

// WithTracing traces every decision, and each of its stages, with tp. The
// no-op provider leaves the engine untraced.
func WithTracing(tp trace.TracerProvider) Option {
	return func(e *Engine) {
		if _, off := tp.(noop.TracerProvider); !off {
			e.tracer = tp.Tracer(tracing.Scope)
		}
	}
}

// noSpan is the span of an untraced engine's stages: it records nothing.
var noSpan = trace.SpanFromContext(context.Background())

// start starts the span of a stage. Untraced, it returns ctx as it is, so
// the decision path allocates nothing for traces.
func (e *Engine) start(ctx context.Context, name string) (context.Context, trace.Span) {
	if e.tracer == nil {
		return ctx, noSpan
	}
	return e.tracer.Start(ctx, name)
}

// New returns an engine.
func New(opts ...Option) *Engine {
	e := &Engine{now: time.Now}
	for _, o := range opts {
		o(e)
	}
	return e
}

// Decide routes one event, records it and counts it. It never panics and
// never fails open: any failure inside the path yields a refusal naming it.
func (e *Engine) Decide(ctx context.Context, req Request) *Decision {
	start := time.Now()
	ctx, span := e.start(ctx, tracing.SpanDecision)
	defer span.End()
	d := &Decision{
		DecisionID: newID(), Shadow: req.Shadow || e.shadow, ContractVersion: route.ContractVersion,
	}
	now := e.now()
	var p *contract.Prepared
	var use *approvalUse
	err := safely(func() { p, use = e.decide(ctx, d, req, now) })
	if err != nil {
		d.refuse(route.CodeInternalError, "the decision failed inside gated: "+err.Error())
	}
	recorded := false
	if err == nil && e.approvals != nil && p != nil && p.Event != nil {
		actx, aspan := e.start(ctx, tracing.SpanApproval)
		if err := safely(func() { recorded = e.settleApproval(actx, d, p, use, req, now, start) }); err != nil {
			d.refuse(route.CodeInternalError, "the approval step failed inside gated: "+err.Error())
		}
		aspan.End()
	}
	if e.recorder != nil && !recorded {
		actx, aspan := e.start(ctx, tracing.SpanAudit)
		if err := safely(func() { e.record(actx, d, p, req, now, start) }); err != nil {
			d.refuse(route.CodeAuditUnavailable, "recording the decision failed: "+err.Error())
		}
		aspan.End()
	}
	if d.Route == route.Refuse {
		// A refusal (the record failed, say) offers nothing to approve.
		d.Approval = nil
	}
	if e.metrics != nil {
		tool := ""
		if d.Action != nil {
			tool = d.Action.ToolID
		}
		e.metrics.ObserveDecision(metrics.DecisionLabels{
			Route: d.Route, ToolCategory: route.Category(d.ToolCategory), RiskDomain: d.RiskDomain,
			Execute: d.Outcome().Pass(), Shadow: d.Shadow, HardBlockers: d.HardBlockers, Tool: tool,
		}, time.Since(start))
	}
	if span.IsRecording() {
		describe(span, d)
	}
	return d
}

// describe puts what the decision was on its span: names, codes and
// revisions only, never arguments or evidence; the tool name is the
// caller's, so a secret in it is masked. A refusal because gated
// itself failed (an internal error, an audit outage) marks the span failed.
func describe(span trace.Span, d *Decision) {
	span.SetAttributes(
		tracing.DecisionID.String(d.DecisionID), tracing.ToolName.String(redact.Mask(d.ToolName)),
		tracing.Route.String(d.Route.String()), tracing.Blockers.StringSlice(d.HardBlockers),
		tracing.Execute.Bool(d.Execute), tracing.Shadow.Bool(d.Shadow),
		tracing.CatalogRevision.String(d.Revisions.Catalog), tracing.PolicyRevision.String(d.Revisions.Policy),
	)
	for _, f := range d.Findings {
		if f.Source == route.SourceGated && (f.Code == route.CodeInternalError || f.Code == route.CodeAuditUnavailable) {
			span.SetStatus(codes.Error, "gated could not decide: "+f.Code)
			return
		}
	}
}

// settleApproval is the approval step after deciding: a retry's approval
// is refused or spent, an ask gets one. It reports whether the decision's
// record was stored already (with the approval it spent).
func (e *Engine) settleApproval(ctx context.Context, d *Decision, p *contract.Prepared, use *approvalUse, req Request, now, start time.Time) bool {
	switch {
	case use == nil:
		e.offerApproval(ctx, d, p.Event, req, now)
	case use.refusal != nil:
		d.refuse(use.refusal.Code, use.refusal.Message)
	case use.ok:
		return e.spendApproval(ctx, d, p, use, req, now, start)
	}
	return false
}

// decide runs the sources over the event and fills d. With approvals on,
// an event carrying a gated approval ref has it checked (use); when the
// approval is good for this call the event is decided with it.
func (e *Engine) decide(ctx context.Context, d *Decision, req Request, now time.Time) (*contract.Prepared, *approvalUse) {
	p := e.prepare(ctx, req.Event)
	d.ValidationErrors = p.ValidationErrors
	d.RequestID = eventRequestID(p.Declared.RequestID)
	d.ToolName, d.ToolCategory = p.Declared.ToolName, p.Declared.ToolCategory
	d.AuthorizationState, d.RiskDomain = p.Declared.AuthorizationState, p.Declared.RiskDomain
	if r, err := route.ParseRoute(p.RuntimeRoute); err == nil {
		d.RuntimeRecommendedRoute = &r
	}
	if p.Event == nil {
		d.EvidenceIntegrity, d.AuthorizationReport = emptyIntegrity(), emptyAuthReport()
		d.finish(p.Findings, route.Combine(p.Findings))
		return p, nil
	}

	ev := p.Event
	call, category, catalogFindings := e.joinCatalog(ctx, d, ev, req)
	var view *catalog.View
	if call != nil {
		view = call.View
	}
	var use *approvalUse
	if e.approvals != nil {
		if use = e.checkApprovalRef(ctx, req, ev, category, now); use != nil && use.ok {
			if q := withApproval(req.Event, p, use.index); q != nil {
				p, ev = q, q.Event
			} else {
				use.ok = false
				use.refuse(route.CodeApprovalUnavailable, "the event cannot be decided with its approval")
			}
		}
	}

	eval := e.evaluate(ctx, ev, category, now)
	if declared, err := route.ParseAuthState(p.Declared.AuthorizationState); err == nil && (p.Lifted || use != nil && use.ok) {
		// The report names what the runtime declared, not the state the
		// evidence lifted it to (that is the effective state).
		eval.Auth.DeclaredState = declared
	}
	d.ToolCategory = string(eval.Category)
	d.AuthorizationState = eval.Auth.EffectiveState.String()
	d.EvidenceRefCount = len(ev.EvidenceRefs)
	d.EvidenceIntegrity, d.AuthorizationReport = &eval.Integrity, &eval.Auth
	d.Reasons = eval.Reasons

	findings := append(eval.Findings, catalogFindings...)
	findings = append(findings, e.killFindings(req, ev, view)...)
	if view != nil {
		floors, argErrs := catalog.Floors(call, ev, eval.Auth.EffectiveState, e.argMode)
		d.ArgumentErrors = argErrs
		findings = append(findings, floors...)
		if f, ok := catalog.UnresolvedApprovalPolicy(view); ok && e.policy == nil {
			findings = append(findings, f)
		}
	}
	if req.Checks != nil {
		findings = append(findings, req.Checks(view, ev)...)
	}
	findings = append(findings, e.evaluatePolicy(ctx, d, req, ev, view, eval.Category, now)...)
	gateOutcome := route.Combine(findings)
	if f, ok := contract.RuntimeFinding(ev.RecommendedRoute); ok {
		findings = append(findings, f)
	}
	d.finish(findings, gateOutcome)
	return p, use
}

// prepare checks the event against the contract and normalises it.
func (e *Engine) prepare(ctx context.Context, event map[string]any) *contract.Prepared {
	_, span := e.start(ctx, tracing.SpanContractValidate)
	defer span.End()
	return contract.Prepare(event)
}

// evaluate runs the contract's rules over the event.
func (e *Engine) evaluate(ctx context.Context, ev *route.Event, category route.Category, now time.Time) *contract.Evaluation {
	_, span := e.start(ctx, tracing.SpanContractEvaluate)
	defer span.End()
	return contract.Evaluate(ev, category, now)
}

// evaluatePolicy asks the policy who may do this, for the catalog's action.
func (e *Engine) evaluatePolicy(ctx context.Context, d *Decision, req Request, ev *route.Event, view *catalog.View, category route.Category, now time.Time) []route.Finding {
	if e.policy == nil {
		return nil
	}
	ctx, span := e.start(ctx, tracing.SpanPolicy)
	defer span.End()
	ps := e.policy()
	d.Revisions.Policy = ps.Revision()
	d.Revisions.Commits = appendCommits(d.Revisions.Commits, "policy:", ps.Origin())
	in := policy.Input{
		Event: ev, Category: category, Now: now, ClientIP: req.ClientIP, TokenName: req.TokenName, Limiter: e.limiter,
		Principals: policy.Principals(req.Principals, req.TrustEventPrincipals, ev),
	}
	if view != nil {
		in.ActionID, in.Action = view.ActionID, view
		in.ApprovalPolicyRef, _ = view.PolicyRef()
	}
	res := ps.Evaluate(ctx, in)
	d.Policy = res.Block
	return res.Findings
}

// record hands the redacted decision to the audit recorder. When the record
// can be neither stored nor spooled the call is refused: an unrecorded
// decision must not let a tool run.
func (e *Engine) record(ctx context.Context, d *Decision, p *contract.Prepared, req Request, now, start time.Time) {
	res, err := e.recorder.Record(ctx, e.redactor.Build(e.auditInput(d, p, req, now, start)))
	if err != nil {
		d.refuse(route.CodeAuditUnavailable, "the decision could not be recorded: "+err.Error())
		return
	}
	d.Audit = &res
}

// auditInput is what the audit record of d is built from.
func (e *Engine) auditInput(d *Decision, p *contract.Prepared, req Request, now, start time.Time) audit.Input {
	in := audit.Input{
		DecisionID: d.DecisionID, Time: now, RequestID: req.RequestID, ToolName: d.ToolName,
		EffectiveCategory: d.ToolCategory, EffectiveAuth: d.AuthorizationState, RiskDomain: d.RiskDomain,
		FinalRoute: d.Route.String(), GateDecision: d.Outcome().GateDecision(), Execute: d.Execute, Shadow: d.Shadow,
		HardBlockers: d.HardBlockers, Reasons: d.Reasons, FindingCodes: findingCodes(d.Findings),
		CatalogRevision: d.Revisions.Catalog, PolicyRevision: d.Revisions.Policy, BundleCommits: d.Revisions.Commits,
		TokenName: req.TokenName, Version: e.version, Latency: time.Since(start), ApprovalID: d.ApprovalID,
	}
	if p != nil {
		// The runtime's own request_id (as the reference's clients send it)
		// is the one to correlate with its logs; the HTTP request id stays
		// in gated's log lines.
		in.RequestID = firstNonEmpty(d.RequestID, req.RequestID)
		in.AgentID, in.Arguments = p.Declared.AgentID, p.Declared.Arguments
		in.DeclaredCategory, in.DeclaredAuth = p.Declared.ToolCategory, p.Declared.AuthorizationState
		in.RuntimeRoute = p.RuntimeRoute
		if p.Event != nil {
			in.Evidence = p.Event.EvidenceRefs
		}
	}
	if d.Action != nil {
		in.ActionID, in.ActionVersion = d.Action.ActionID, d.Action.ActionVersion
	}
	return in
}

// safely runs f and turns a panic into an error.
func safely(f func()) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic: %v", r)
		}
	}()
	f()
	return nil
}

func findingCodes(fs []route.Finding) []string {
	out := make([]string, len(fs))
	for i, f := range fs {
		out[i] = f.Code
	}
	return out
}

// maxRequestIDBytes bounds the event's request_id that is echoed and
// stored; a longer one is dropped rather than cut into a false id.
const maxRequestIDBytes = 128

// eventRequestID is the event's request_id when it is short enough to echo
// and store (the contract already refused control characters in it).
func eventRequestID(id string) string {
	if len(id) > maxRequestIDBytes {
		return ""
	}
	return id
}

func firstNonEmpty(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// joinCatalog resolves the event's tool to its catalog view, applied to
// the event's arguments (nil for an uncatalogued tool), and the category
// the contract rules run on.
func (e *Engine) joinCatalog(ctx context.Context, d *Decision, ev *route.Event, req Request) (*catalog.Call, route.Category, []route.Finding) {
	if e.catalog == nil {
		return nil, ev.ToolCategory, nil
	}
	_, span := e.start(ctx, tracing.SpanCatalog)
	defer span.End()
	c := e.catalog()
	d.Revisions.Catalog = c.Revision()
	d.Revisions.Commits = appendCommits(d.Revisions.Commits, "catalog:", c.Origin())
	view, ok := c.Lookup(ev.ToolName)
	if !ok {
		if req.CategoryVouched && ev.ToolCategory != route.Unknown {
			return nil, ev.ToolCategory, nil
		}
		switch e.unknownTools {
		case UnknownRefuse:
			return nil, ev.ToolCategory, []route.Finding{notInCatalog(route.Refuse)}
		case UnknownDefer:
			return nil, ev.ToolCategory, []route.Finding{notInCatalog(route.Defer)}
		}
		return nil, ev.ToolCategory, nil
	}
	d.Action = view
	call := req.Call
	if call == nil || call.View != view {
		call = view.Call(ev.ProposedArguments, req.Workspace)
	}
	category, fs := catalog.EffectiveCategory(call.Floor(), ev.ToolCategory)
	return call, category, fs
}

// Category is the category the current catalog gives tool, or unknown
// when no loaded catalog describes it. Adapters that cannot know a tool's
// category themselves (hooks) declare this one.
func (e *Engine) Category(tool string) route.Category {
	if e.catalog == nil {
		return route.Unknown
	}
	if v, ok := e.catalog().Lookup(tool); ok {
		return v.Category()
	}
	return route.Unknown
}

// CallCategory is the category the current catalog gives a call of tool
// with args, made in workspace, or unknown when no loaded catalog
// describes it: a tool's category, or a read's for a command line the
// catalog proves only reads in the workspace. Hooks declare it, and pass
// the call on in Request.Call.
func (e *Engine) CallCategory(tool string, args map[string]any, workspace string) (route.Category, *catalog.Call) {
	if e.catalog == nil {
		return route.Unknown, nil
	}
	v, ok := e.catalog().Lookup(tool)
	if !ok {
		return route.Unknown, nil
	}
	c := v.Call(args, workspace)
	return c.Floor().Category(), c
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

func notInCatalog(r route.Route) route.Finding {
	return route.Finding{Source: route.SourceCatalog, Code: route.CodeToolNotInCatalog, Route: r, Blocking: true,
		Message: "the tool is not described by any loaded catalog"}
}

// finish sets the final outcome from all findings, and whether the tool may
// execute; gateOutcome is the gate's own verdict before the runtime's route.
func (d *Decision) finish(findings []route.Finding, gateOutcome route.Outcome) {
	out := route.Combine(findings)
	if findings == nil {
		findings = []route.Finding{}
	}
	if d.Reasons == nil {
		d.Reasons = []string{}
	}
	d.Findings, d.Gate = findings, gateOutcome
	d.Route, d.HardBlockers = out.Route, out.HardBlockers
	d.Execute = d.Shadow || out.Pass()
}

// refuse adds a refusal for code to whatever the decision already found.
func (d *Decision) refuse(code, msg string) {
	f := route.Finding{Source: route.SourceGated, Code: code, Route: route.Refuse, Blocking: true, Message: msg}
	if d.EvidenceIntegrity == nil {
		d.EvidenceIntegrity = emptyIntegrity()
	}
	if d.AuthorizationReport == nil {
		d.AuthorizationReport = emptyAuthReport()
	}
	findings := append(d.Findings, f)
	d.finish(findings, route.Combine(findings))
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

// appendCommits adds the commits of a bundle-composed source, each with
// the prefix naming the source.
func appendCommits(to []string, prefix string, o *bundle.Origin) []string {
	if o == nil {
		return to
	}
	for _, c := range o.Commits {
		to = append(to, prefix+c.String())
	}
	return to
}
