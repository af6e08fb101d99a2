package gate

import (
	"context"
	"fmt"
	"time"

	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/gatedhq/gated/internal/approval"
	"github.com/gatedhq/gated/internal/audit"
	"github.com/gatedhq/gated/internal/catalog"
	"github.com/gatedhq/gated/internal/contract"
	"github.com/gatedhq/gated/internal/metrics"
	"github.com/gatedhq/gated/internal/policy"
	"github.com/gatedhq/gated/internal/redact"
	"github.com/gatedhq/gated/internal/route"
	"github.com/gatedhq/gated/internal/tracing"
)

// decision is one decision while it runs: what it was asked, when, and
// what each stage found for the next. Decide runs the stages in order;
// each fills in the answer d.
type decision struct {
	e     *Engine
	req   Request
	now   time.Time // the engine's clock: evidence freshness, time conditions, approval expiry
	start time.Time // the wall clock when it began: the latency
	d     *Decision

	p        *contract.Prepared // nil when a stage failed before it was known
	catalog  *catalog.Catalog   // the snapshot joined; nil without a catalog
	call     *catalog.Call      // the catalog's view applied to the call; nil for an uncatalogued tool
	category route.Category     // the category the contract rules run on
	findings []route.Finding    // every source's, in the order they ran
	use      *approvalUse       // a retry's approval ref, checked; nil without one
	recorded bool               // the record is stored already (with the approval it spent)
	// approved is the approved approval a hook's retry found by its digest
	// (RetryByDigest): the call is decided again with it.
	approved *approval.Approval
	counted  bool // the policy counted the call against its rate limits
	// followed is the live decision a candidate engine decides again; nil
	// on the live path.
	followed *Followed
}

// Decide routes one event, records it and counts it. It never panics and
// never fails open: any failure inside the path yields a refusal naming it.
func (e *Engine) Decide(ctx context.Context, req Request) *Decision {
	ctx, span := e.start(ctx, tracing.SpanDecision)
	defer span.End()
	s := e.decideOnce(ctx, req, time.Now(), e.now())
	if a := s.approved; a != nil {
		// A hook's retry found its approval by digest: decided again exactly
		// as a retry that carries the approval's evidence ref, and only this
		// second decision is recorded and counted.
		again := req
		again.Event, again.counted = withApprovalRef(req.Event, a.ID), s.counted
		s = e.decideOnce(ctx, again, s.start, s.now)
	}
	if e.recorder != nil && !s.recorded {
		s.record(ctx)
	}
	if s.d.Route == route.Refuse {
		// A refusal (the record failed, say) offers nothing to approve.
		s.d.Approval = nil
	}
	s.observe()
	s.follow()
	if span.IsRecording() {
		describe(span, s.d)
	}
	return s.d
}

// decideOnce decides req and settles its approval, recording nothing.
func (e *Engine) decideOnce(ctx context.Context, req Request, start, now time.Time) *decision {
	s := &decision{e: e, req: req, start: start, now: now, d: &Decision{
		DecisionID: newID(), Shadow: req.Shadow || e.shadow, ContractVersion: route.ContractVersion,
	}}
	if err := safely(func() { s.decide(ctx) }); err != nil {
		// What a failed stage left half done is not taken as known.
		s.p, s.use, s.approved = nil, nil, nil
		s.d.refuse(route.CodeInternalError, "the decision failed inside gated: "+err.Error())
	} else if e.approvals != nil && s.p.Event != nil {
		s.settleApproval(ctx)
	}
	return s
}

// decide runs the sources over the event and fills d.
func (s *decision) decide(ctx context.Context) {
	if !s.prepare(ctx) {
		return
	}
	s.joinCatalog(ctx)
	if s.e.approvals != nil || s.followed != nil && s.followed.approvals {
		s.checkApprovalRef(ctx)
	}
	s.evaluate(ctx)
	s.checkKill()
	s.checkCatalog()
	if s.req.Checks != nil {
		s.findings = append(s.findings, s.req.Checks(s.view(), s.p.Event)...)
	}
	s.evaluatePolicy(ctx)
	gateOutcome := route.Combine(s.findings)
	if f, ok := contract.RuntimeFinding(s.p.Event.RecommendedRoute, s.p.Lowered()); ok {
		s.findings = append(s.findings, f)
	}
	s.d.finish(s.findings, gateOutcome)
}

// prepare checks the event against the contract and normalises it. An
// event that is no event is decided here: it reports false.
func (s *decision) prepare(ctx context.Context) bool {
	_, span := s.e.start(ctx, tracing.SpanContractValidate)
	s.p = contract.Prepare(s.req.Event)
	span.End()
	d, p := s.d, s.p
	d.ValidationErrors, d.declaredAuth = p.ValidationErrors, p.Declared.AuthorizationState
	d.RequestID = eventRequestID(p.Declared.RequestID)
	d.ToolName, d.ToolCategory, d.RiskDomain = p.Declared.ToolName, route.Category(p.Declared.ToolCategory), p.Declared.RiskDomain
	if r, err := route.ParseRoute(p.RuntimeRoute); err == nil {
		d.RuntimeRecommendedRoute = &r
	}
	if p.Event == nil {
		d.EvidenceIntegrity, d.AuthorizationReport = emptyIntegrity(), emptyAuthReport()
		d.finish(p.Findings, route.Combine(p.Findings))
		return false
	}
	return true
}

// joinCatalog resolves the event's tool to its catalog view, applied to
// the event's arguments, and sets the category the contract rules run on.
// It joins the snapshot the surface picked the category from, when it
// picked one.
func (s *decision) joinCatalog(ctx context.Context) {
	ev := s.p.Event
	s.category = ev.ToolCategory
	if s.e.catalog == nil {
		return
	}
	_, span := s.e.start(ctx, tracing.SpanCatalog)
	defer span.End()
	pick := s.req.Pick
	if pick != nil && pick.catalog != nil {
		s.catalog = pick.catalog
	} else {
		s.catalog = s.e.catalog()
	}
	s.d.Revisions.Catalog = s.catalog.Revision()
	s.d.Revisions.Commits = appendCommits(s.d.Revisions.Commits, "catalog:", s.catalog.Origin())
	view, ok := s.catalog.Lookup(ev.ToolName)
	if !ok {
		if s.req.CategoryVouched && ev.ToolCategory != route.Unknown {
			return
		}
		switch s.e.unknownTools {
		case UnknownRefuse:
			s.findings = append(s.findings, notInCatalog(route.Refuse))
		case UnknownDefer:
			s.findings = append(s.findings, notInCatalog(route.Defer))
		}
		return
	}
	s.d.Action = view
	if pick != nil && pick.call != nil && pick.tool == ev.ToolName {
		s.call = pick.call
	} else {
		s.call = view.Call(ev.ProposedArguments, s.req.Workspace)
	}
	var fs []route.Finding
	s.category, fs = catalog.EffectiveCategory(s.call.Floor(), ev.ToolCategory)
	s.findings = append(s.findings, fs...)
}

// view is the catalog's view of the tool, nil for an uncatalogued one.
func (s *decision) view() *catalog.View {
	if s.call == nil {
		return nil
	}
	return s.call.View
}

// evaluate runs the contract's rules over the event. Their findings come
// first, before the catalog's.
func (s *decision) evaluate(ctx context.Context) {
	_, span := s.e.start(ctx, tracing.SpanContractEvaluate)
	ev := s.p.Event
	eval := contract.Evaluate(ev, s.category, s.now)
	span.End()
	if s.p.Lifted || s.use != nil && s.use.ok {
		// The report names what the runtime declared, not the state the
		// evidence or the approval lifted it to (that is the effective one).
		if declared, err := route.ParseAuthState(s.p.Declared.AuthorizationState); err == nil {
			eval.Auth.DeclaredState = declared
		}
	}
	d := s.d
	d.ToolCategory, d.AuthorizationState, d.evaluated = eval.Category, eval.Auth.EffectiveState, true
	d.EvidenceRefCount = len(ev.EvidenceRefs)
	d.EvidenceIntegrity, d.AuthorizationReport = &eval.Integrity, &eval.Auth
	d.Reasons = eval.Reasons
	s.findings = append(eval.Findings, s.findings...)
}

// checkCatalog adds the catalog's floors for the call, with where its
// arguments fail the tool's schema, and refuses an approval policy nothing
// can resolve without a policy.
func (s *decision) checkCatalog() {
	if s.call == nil {
		return
	}
	floors, argErrs := catalog.Floors(s.call, s.p.Event, s.d.AuthorizationState, s.e.argMode)
	s.d.ArgumentErrors = argErrs
	s.findings = append(s.findings, floors...)
	if f, ok := catalog.UnresolvedApprovalPolicy(s.call.View); ok && s.e.policy == nil {
		s.findings = append(s.findings, f)
	}
}

// evaluatePolicy asks the policy who may do this, for the catalog's action.
func (s *decision) evaluatePolicy(ctx context.Context) {
	e := s.e
	if e.policy == nil {
		return
	}
	ctx, span := e.start(ctx, tracing.SpanPolicy)
	defer span.End()
	ps := e.policy()
	d, ev, req := s.d, s.p.Event, s.req
	d.Revisions.Policy = ps.Revision()
	d.Revisions.Commits = appendCommits(d.Revisions.Commits, "policy:", ps.Origin())
	in := policy.Input{
		Event: ev, Category: d.ToolCategory, Now: s.now, ClientIP: req.ClientIP, TokenName: req.TokenName, Limiter: e.limiter,
		Principals: policy.Principals(req.Principals, req.TrustEventPrincipals, ev), Counted: req.counted,
		AuthZEN: req.AuthZEN,
	}
	if view := s.view(); view != nil {
		in.ActionID, in.Action = view.ActionID, view
		in.ApprovalPolicyRef, _ = view.PolicyRef()
	}
	res := ps.Evaluate(ctx, in)
	d.Policy, s.counted = res.Block, res.Counted
	s.findings = append(s.findings, res.Findings...)
}

// settleApproval is the approval step after deciding: a retry's approval
// is refused or spent, an ask gets one.
func (s *decision) settleApproval(ctx context.Context) {
	ctx, span := s.e.start(ctx, tracing.SpanApproval)
	defer span.End()
	err := safely(func() {
		switch {
		case s.use == nil:
			s.offerApproval(ctx)
		case s.use.refusal != nil:
			s.d.refuse(s.use.refusal.Code, s.use.refusal.Message)
		case s.use.ok:
			s.spendApproval(ctx)
		}
	})
	if err != nil {
		s.d.refuse(route.CodeInternalError, "the approval step failed inside gated: "+err.Error())
	}
}

// record hands the redacted decision to the audit recorder. When the record
// can be neither stored nor spooled the call is refused: an unrecorded
// decision must not let a tool run.
func (s *decision) record(ctx context.Context) {
	ctx, span := s.e.start(ctx, tracing.SpanAudit)
	defer span.End()
	err := safely(func() {
		res, err := s.e.recorder.Record(ctx, s.auditRecord(s.d.ApprovalID))
		if err != nil {
			s.d.refuse(route.CodeAuditUnavailable, "the decision could not be recorded: "+err.Error())
			return
		}
		s.d.Audit = &res
	})
	if err != nil {
		s.d.refuse(route.CodeAuditUnavailable, "recording the decision failed: "+err.Error())
	}
}

// auditRecord is the decision's audit record, redacted, naming approvalID
// as the approval it created or spent.
func (s *decision) auditRecord(approvalID string) *audit.Record {
	d := s.d
	rec := &audit.Record{
		DecisionID: d.DecisionID, DecidedAt: s.now, RequestID: s.req.RequestID, ToolName: d.ToolName,
		EffectiveCategory: string(d.ToolCategory), EffectiveAuth: d.AuthorizationName(), RiskDomain: d.RiskDomain,
		FinalRoute: d.Route.String(), GateDecision: d.Outcome().GateDecision(), Execute: d.Execute, Shadow: d.Shadow,
		HardBlockers: d.HardBlockers, Reasons: d.Reasons, FindingCodes: findingCodes(d.Findings),
		CatalogRevision: d.Revisions.Catalog, PolicyRevision: d.Revisions.Policy, BundleCommits: d.Revisions.Commits,
		TokenName: s.req.TokenName, GatedVersion: s.e.version, LatencyMS: audit.Milliseconds(time.Since(s.start)),
		ApprovalID: approvalID,
	}
	raw := audit.Raw{Event: s.req.Event, Workspace: s.req.Workspace, ClientIP: s.req.ClientIP, AuthZEN: s.req.AuthZEN}
	var ev *route.Event
	if p := s.p; p != nil {
		ev = p.Event
		// The runtime's own request_id (as the reference's clients send it)
		// is the one to correlate with its logs; the HTTP request id stays
		// in gated's log lines.
		rec.RequestID = firstNonEmpty(d.RequestID, s.req.RequestID)
		rec.AgentID, raw.Arguments = p.Declared.AgentID, p.Declared.Arguments
		rec.DeclaredCategory, rec.DeclaredAuth = p.Declared.ToolCategory, p.Declared.AuthorizationState
		rec.RuntimeRoute = p.RuntimeRoute
		if p.Event != nil {
			raw.Evidence = p.Event.EvidenceRefs
		}
	}
	if d.Action != nil {
		rec.ActionID, rec.ActionVersion = d.Action.ActionID, d.Action.ActionVersion
	}
	rec.Principals = policy.Principals(s.req.Principals, s.req.TrustEventPrincipals, ev)
	s.e.redactor.Redact(rec, raw)
	return rec
}

// observe counts the decision.
func (s *decision) observe() {
	if s.e.metrics == nil {
		return
	}
	d, tool := s.d, ""
	if d.Action != nil {
		tool = d.Action.ToolID
	}
	s.e.metrics.ObserveDecision(metrics.DecisionLabels{
		Route: d.Route, ToolCategory: d.ToolCategory, RiskDomain: d.RiskDomain,
		Execute: d.Outcome().Pass(), Shadow: d.Shadow, HardBlockers: d.HardBlockers, Tool: tool,
	}, time.Since(s.start))
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
