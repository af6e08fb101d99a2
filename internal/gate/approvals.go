package gate

import (
	"context"
	"encoding/json"
	"errors"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/gatedhq/gated/internal/approval"
	"github.com/gatedhq/gated/internal/audit"
	"github.com/gatedhq/gated/internal/contract"
	"github.com/gatedhq/gated/internal/redact"
	"github.com/gatedhq/gated/internal/route"
)

// Approvals is the approval store the decision path uses:
// internal/approval/postgres.Store, as cmd/gated wires it.
type Approvals interface {
	// Create stores a new pending approval (normalising a in place).
	Create(ctx context.Context, a *approval.Approval) error
	// Get returns an approval, or an *approval.Error (approval_unknown).
	Get(ctx context.Context, id string) (*approval.Approval, error)
	// Consume spends an approval for the call with digest and stores rec,
	// the spending decision's audit record, in one transaction; a refusal
	// (used, expired, …) is an *approval.Error and stores nothing.
	Consume(ctx context.Context, id, digest string, requester approval.Identity, now time.Time, rec *audit.Record) (*approval.Approval, error)
	// FindOpen returns the newest approval of the call with digest asked
	// for by requester that is still open at now, an approved one before a
	// pending one; nil when there is none.
	FindOpen(ctx context.Context, digest string, requester approval.Identity, now time.Time) (*approval.Approval, error)
}

// WithApprovals lets ask (and some defer) decisions create an approval a
// person can answer, and lets the retried call that carries it be decided
// as approved. publicURL, when set, is the base of the approval's url.
// Approvals need the audit recorder too: a spending decision's record is
// stored with the approval it spends.
func WithApprovals(store Approvals, publicURL string) Option {
	return func(e *Engine) { e.approvals, e.publicURL = store, strings.TrimRight(publicURL, "/") }
}

// WithApprovers lets the engine judge an approval's approver as their
// token stands when the approval is used: now gives the principals of the
// token called name, and whether it exists and may still approve. Without
// it the approver is judged by the principals it held when it approved.
func WithApprovers(now func(name string) (principals []string, ok bool)) Option {
	return func(e *Engine) { e.approverNow = now }
}

// PendingApproval is the approval an ask or defer decision created, as the
// answer carries it: what a runtime needs to wait for it and to retry.
type PendingApproval struct {
	ID        string          `json:"id"`
	Status    approval.Status `json:"status"`
	ExpiresAt time.Time       `json:"expires_at"`
	Digest    string          `json:"digest"`
	// URL is where a person decides it: --public-url + /ui/approvals/<id>,
	// or the path alone.
	URL string `json:"url"`
	// EvidenceRef is what the runtime appends to evidence_refs when it
	// sends the same event again.
	EvidenceRef route.EvidenceRef `json:"evidence_ref"`
}

// storeTimeout bounds each approval store call on the decision path that
// a call's outcome depends on: checking and spending a retry's approval.
const storeTimeout = 10 * time.Second

// Offering an approval is optional (the ask stands without one), so it
// waits less, and after a failure asks skip the store for offerPause: a
// database that hangs must not make every ask wait out a timeout.
const (
	offerTimeout = 2 * time.Second
	offerPause   = 10 * time.Second
)

// approvalUse is a retry's gated approval ref, checked.
type approvalUse struct {
	index     int // of the ref in evidence_refs
	id        string
	digest    string
	requester approval.Identity
	// approver is who approved it, as the store read it: a candidate checks
	// them against its own catalog's approvers.
	approver approval.Identity
	// ok: the approval is approved for this very call, and the event was
	// decided with it.
	ok bool
	// refusal, when set, refuses the call.
	refusal *approval.Error
}

func (u *approvalUse) refuse(code, msg string) *approvalUse {
	u.refusal = &approval.Error{Code: code, Message: msg}
	return u
}

// resolvableDefers are the defer findings an approval resolves: it makes
// the call confirmed and brings the verified approval the catalog's floors
// ask for. So it resolves the catalog's approval floors and the contract's
// findings about too little authorization (a write, or a private read, at
// authorization_state none defers). A defer for anything else (missing or
// stale evidence, an unknown tool or category, an approval policy nothing
// could grant) gets no approval.
var resolvableDefers = map[string]bool{
	route.CodeIrreversibleActionRequiresVerifiedApproval: true,
	route.CodeRiskLevelRequiresConfirmation:              true,
	route.CodeWriteMissingAuthorization:                  true,
	route.CodeHighRiskWriteMissingExplicitConfirmation:   true,
	route.CodeWriteMissingExplicitConfirmation:           true,
	route.CodeWriteMissingValidationOrConfirmation:       true,
	route.CodePrivateReadNotAuthenticated:                true,
}

// offersApproval reports whether d is a decision an approval can resolve:
// route ask, or route defer where every defer finding is resolvable.
func offersApproval(d *Decision) bool {
	switch d.Route {
	case route.Ask:
		return true
	case route.Defer:
		for _, f := range d.Findings {
			if f.Route == route.Defer && !resolvableDefers[f.Code] {
				return false
			}
		}
		return true
	}
	return false
}

func requesterOf(req Request) approval.Identity {
	return approval.Identity{TokenName: req.TokenName, Principals: req.Principals}
}

// digestOf binds an approval to ev as decided on category, asked for by
// req; it returns the encoded arguments too, for the preview.
func digestOf(ev *route.Event, category route.Category, req Request) (digest string, args []byte, err error) {
	if args, err = json.Marshal(ev.ProposedArguments); err != nil {
		return "", nil, err
	}
	var plan []byte
	if req.Binds != nil {
		if plan, err = json.Marshal(req.Binds); err != nil {
			return "", nil, err
		}
	}
	digest, err = approval.Digest(approval.Subject{
		ToolName: ev.ToolName, ToolCategory: string(category), RiskDomain: ev.RiskDomain,
		ProposedArguments: args, Requester: requesterOf(req), AgentID: ev.AgentID, AuthorizationSubject: ev.AuthorizationSubject, Plan: plan,
	})
	return digest, args, err
}

// checkApprovalRef finds the event's gated approval ref and checks it
// against the store. When the approval is good for this very call, the
// event is decided with it: as declaring authorization_state confirmed,
// its ref verified by gated (what an approval resolves is exactly
// confirmation and the catalog's approval floors; the policy and every
// other rule are checked again). The declared state stays what the
// runtime sent.
func (s *decision) checkApprovalRef(ctx context.Context) {
	ev := s.p.Event
	u, n := &approvalUse{index: -1}, 0
	for i := range ev.EvidenceRefs {
		if id, ok := ev.EvidenceRefs[i].GatedApproval(); ok {
			u.index, u.id = i, id
			n++
		}
	}
	switch n {
	case 0:
		return
	case 1:
	default:
		s.use = u.refuse(route.CodeApprovalRefAmbiguous, "the event carries more than one gated approval ref; a retry appends exactly one")
		return
	}
	var approvers []string
	if s.d.Action != nil {
		approvers = s.d.Action.Approvers
	}
	if s.followed != nil {
		s.use = s.followedApproval(u, approvers)
	} else {
		s.use = s.e.checkApproval(ctx, u, ev, contract.RuleCategory(ev, s.category), s.req, s.now, approvers)
	}
	if !s.use.ok {
		return
	}
	s.p = s.p.Confirmed()
	ref := &s.p.Event.EvidenceRefs[u.index]
	ref.TrustTier, ref.GatedVerified = "verified", true
}

// checkApproval checks the approval u names against the store, for ev
// routed on category (the category the rules run on, as the asking
// decision had it: the contract's identity-bound rule can turn a public
// read private), and its approver against approvers, the tool's approvers
// in this decision's catalog.
func (e *Engine) checkApproval(ctx context.Context, u *approvalUse, ev *route.Event, category route.Category, req Request, now time.Time, approvers []string) *approvalUse {
	u.requester = requesterOf(req)
	digest, _, err := digestOf(ev, category, req)
	if err != nil {
		return u.refuse(route.CodeApprovalDigestMismatch, "the call cannot be bound to an approval: its arguments cannot be canonicalised")
	}
	u.digest = digest
	sctx, cancel := context.WithTimeout(ctx, storeTimeout)
	defer cancel()
	a, err := e.approvals.Get(sctx, u.id)
	if err != nil {
		if aerr, ok := errors.AsType[*approval.Error](err); ok {
			return u.refuse(aerr.Code, aerr.Message)
		}
		return u.refuse(route.CodeApprovalUnavailable, "the approval cannot be read from the approval store, so it cannot allow the call (fail closed)")
	}
	u.approver = a.Approver
	err = approval.CheckUse(a, digest, u.requester, now)
	if err == nil && e.approverNow != nil {
		// Whoever approved is judged as their token stands now: a token
		// gone, or no longer allowed to approve, takes back what it gave.
		principals, ok := e.approverNow(a.Approver.TokenName)
		if !ok {
			return u.refuse(route.CodeApprovalApproverNotAllowed, "whoever approved this call ("+a.Approver.TokenName+") no longer has a token that may approve: ask for a new approval")
		}
		u.approver.Principals = principals
	}
	if err == nil {
		err = approval.CheckApprover(u.approver, approvers)
	}
	if err != nil {
		if aerr, ok := errors.AsType[*approval.Error](err); ok {
			return u.refuse(aerr.Code, aerr.Message)
		}
		return u.refuse(route.CodeApprovalUnavailable, err.Error())
	}
	u.ok = true
	return u
}

// offerApproval creates a pending approval for an ask or defer and puts it
// on the answer. A failure leaves the answer without one: the call does
// not run either way (the store wrapper logs and counts it). For a surface
// that retries by digest it first looks for the call's open approval: an
// approved one is left for Decide to decide the call again with, a
// pending one is offered again.
func (s *decision) offerApproval(ctx context.Context) {
	d, ev, req, now := s.d, s.p.Event, s.req, s.now
	if d.Shadow || req.NoApproval || req.TokenName == "" || !offersApproval(d) || (req.AsksItself && d.Route == route.Ask) {
		return
	}
	if now.UnixNano() < s.e.offersPausedUntil.Load() {
		return
	}
	requester := requesterOf(req)
	digest, args, err := digestOf(ev, d.ToolCategory, req)
	if err != nil || req.RetryByDigest && s.foundOpen(ctx, digest, requester) {
		return
	}
	preview, err := approval.Preview(args, d.Action.SensitiveArguments())
	if err != nil {
		return
	}
	// Arguments an approver could not read whole (too large or too deep to
	// show) get no approval: the preview alone would have them approve
	// what they could not see. The ask stands without one.
	masked, err := approval.MaskedArguments(args, d.Action.SensitiveArguments())
	if err != nil {
		return
	}
	a := &approval.Approval{
		ID: newID(), Status: approval.StatusPending, Digest: digest,
		CreatedAt: now, ExpiresAt: approval.ExpiresAt(now, d.Action.ApprovalExpiry()),
		// The agent id and tool name are the caller's: shown to approvers and
		// sent to the webhook, so a secret in them is masked.
		Requester: requester, AgentID: redact.Mask(ev.AgentID), ToolName: redact.Mask(ev.ToolName),
		ToolCategory: string(d.ToolCategory), RiskDomain: ev.RiskDomain, Route: d.Route.String(),
		Findings:   blockingFindings(d.Findings),
		Revisions:  approval.Revisions{Catalog: d.Revisions.Catalog, Policy: d.Revisions.Policy},
		DecisionID: d.DecisionID, Preview: preview, MaskedArguments: masked,
	}
	if d.Action != nil {
		a.ActionID, a.RequiredApprovers = d.Action.ActionID, d.Action.Approvers
	}
	sctx, cancel := context.WithTimeout(ctx, offerTimeout)
	defer cancel()
	if err := s.e.approvals.Create(sctx, a); err != nil {
		s.e.offersPausedUntil.Store(now.Add(offerPause).UnixNano())
		return
	}
	s.offer(a)
}

// foundOpen looks for the open approval of a call retried by digest, and
// reports whether the search settled the offer: an approved one is left
// for Decide to decide the call again with, a pending one is offered again
// (a runtime retrying while the person has not answered yet opens no
// second approval), and a store failure leaves the answer without one.
func (s *decision) foundOpen(ctx context.Context, digest string, requester approval.Identity) bool {
	sctx, cancel := context.WithTimeout(ctx, offerTimeout)
	defer cancel()
	open, err := s.e.approvals.FindOpen(sctx, digest, requester, s.now)
	switch {
	case err != nil:
		s.e.offersPausedUntil.Store(s.now.Add(offerPause).UnixNano())
	case open == nil:
		return false
	case open.Status == approval.StatusApproved:
		s.approved = open
	default:
		s.offer(open)
	}
	return true
}

// offer puts approval a on the answer, and names it in the audit record.
func (s *decision) offer(a *approval.Approval) {
	s.d.ApprovalID = a.ID
	s.d.Approval = &PendingApproval{
		ID: a.ID, Status: a.Status, ExpiresAt: a.ExpiresAt, Digest: a.Digest, URL: s.e.publicURL + "/ui/approvals/" + a.ID,
		EvidenceRef: approvalRef(a.ID),
	}
}

// approvalRef is the evidence ref a retry appends to use approval id.
func approvalRef(id string) route.EvidenceRef {
	return route.EvidenceRef{
		SourceID: route.ApprovalRefPrefix + id, Kind: "approval", TrustTier: "runtime",
		RedactionStatus: "public", Freshness: route.Freshness{Status: "fresh"}, Provenance: "gated",
	}
}

// withApprovalRef is event with approval id's evidence ref appended, as a
// runtime that can carry it would send its retry. The event is copied, not
// changed. An event whose evidence_refs is no array is not one an approval
// was offered for; it keeps it, and the contract refuses it again.
func withApprovalRef(event map[string]any, id string) map[string]any {
	out := maps.Clone(event)
	if refs, ok := event["evidence_refs"].([]any); ok || event["evidence_refs"] == nil {
		out["evidence_refs"] = append(slices.Clone(refs), contract.RefDoc(approvalRef(id)))
	}
	return out
}

func blockingFindings(fs []route.Finding) []approval.Finding {
	out := []approval.Finding{}
	for _, f := range fs {
		if f.Blocking {
			// A message may quote the caller's names (an Action API plan's
			// actionType), shown to approvers and sent to the webhook.
			out = append(out, approval.Finding{Code: f.Code, Route: f.Route.String(), Message: redact.Mask(f.Message)})
		}
	}
	return out
}

// spendApproval spends the verified approval of an accepted retry, storing
// the decision's audit record in the same transaction, whatever the
// recorder's durability: the record is written when it succeeds, and must
// not be recorded again. Any other route leaves the approval unspent. A
// lost race refuses the call approval_used; a store failure refuses it
// approval_unavailable (fail closed); the refusal is then recorded as
// usual.
func (s *decision) spendApproval(ctx context.Context) {
	d, u, e := s.d, s.use, s.e
	if d.Route != route.Accept || d.Shadow {
		return
	}
	if e.recorder == nil {
		d.refuse(route.CodeApprovalUnavailable, "the approval cannot be spent: decisions are not recorded")
		return
	}
	rec := s.auditRecord(u.id)
	sctx, cancel := context.WithTimeout(ctx, storeTimeout)
	defer cancel()
	_, err := e.approvals.Consume(sctx, u.id, u.digest, u.requester, s.now, rec)
	if aerr, ok := errors.AsType[*approval.Error](err); ok {
		d.refuse(aerr.Code, aerr.Message)
		return
	}
	if err != nil {
		d.refuse(route.CodeApprovalUnavailable, "the approval could not be spent in the approval store, so it cannot allow the call (fail closed)")
		return
	}
	d.ApprovalID = u.id
	res := e.recorder.Stored(rec)
	d.Audit, s.recorded = &res, true
}
