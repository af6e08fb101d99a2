// Package replay decides recorded decisions again with another catalog and
// policy, and reports what changes: `gated replay`, and the --replay of
// `gated policy diff`. A record keeps fingerprints, not argument values,
// so each changed decision names what replay could not see (Unseen); a
// record sealed to the operator's key (audit.Sealed) is decided again from
// the very event that was decided.
package replay

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"time"

	"github.com/gatedhq/gated/internal/audit"
	"github.com/gatedhq/gated/internal/contract"
	"github.com/gatedhq/gated/internal/gate"
	"github.com/gatedhq/gated/internal/route"
)

// Engine is what replay decides with: the catalog and policy (the gate
// options sources.Load makes; give it Unlimited for its limits) and, to
// read sealed records, the operator's identities. Replay adds the clock;
// the options must not record, approve or kill.
type Engine struct {
	Options []gate.Option
	// Blind are the options for a call whose argument values replay cannot
	// see: the same sources with argument validation off
	// (sources.ArgumentsOpts), or an empty object would fail every schema
	// that requires an argument. nil: Options.
	Blind    []gate.Option
	Unsealer *audit.Unsealer // nil: sealed records are replayed as unsealed ones
	// Redecide decides records of the same revisions again instead of
	// keeping their routes: set when the caller chose what the revisions do
	// not cover (--unknown-tools, --argument-validation), whose change is
	// then the one to judge.
	Redecide bool
}

// Run decides every decision src recorded in w again with eng, at the time
// it was recorded, and reports what changed.
func Run(ctx context.Context, src Source, eng Engine, w Window) (*Report, error) {
	if err := w.check(); err != nil {
		return nil, err
	}
	var at time.Time
	clock := gate.WithClock(func() time.Time { return at })
	seen := gate.New(append(slices.Clone(eng.Options), clock)...)
	blind := seen
	if eng.Blind != nil {
		blind = gate.New(append(slices.Clone(eng.Blind), clock)...)
	}
	r := newReport(w)
	err := src.Each(ctx, w, func(rec *audit.Record) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		at = rec.DecidedAt
		r.add(replayOne(ctx, seen, blind, eng, rec))
		return nil
	})
	if err != nil {
		return nil, err
	}
	r.finish()
	return r, nil
}

// noKey screens what the policy under test wrote: replay has no audit HMAC
// key, so a text that holds a secret or personal data is masked whole
// (audit.MaskedText) rather than fingerprinted.
var noKey *audit.Redactor

// outcome is one record decided again.
type outcome struct {
	rec      *audit.Record
	recorded route.Route
	now      route.Route
	blockers []string
	unseen   []Unseen
	sealed   bool // decided from the sealed event
	kept     keep // why the recorded route stands; "" when the new route is replay's
	revs     gate.Revisions
}

// keep is why replay keeps a recorded route rather than its own.
type keep string

const (
	// keptInvalid: the contract refused an event that was no event, and
	// what it was is not kept.
	keptInvalid keep = "invalid_event"
	// keptSameRevisions: the record was decided with the very catalog and
	// policy replay decides with.
	keptSameRevisions keep = "same_revisions"
)

func replayOne(ctx context.Context, seen, blind *gate.Engine, eng Engine, rec *audit.Record) outcome {
	u := eng.Unsealer
	o := outcome{rec: rec}
	recorded, err := route.ParseRoute(rec.FinalRoute)
	known := err == nil
	if !known {
		// A record of a future or foreign version: judged the strictest, so
		// nothing replayed against it reads as narrower than it was.
		recorded = route.Refuse
		o.unseen = append(o.unseen, UnseenRecordedRoute)
	}
	o.recorded = recorded
	req := gate.Request{
		RequestID: rec.RequestID, TokenName: rec.TokenName, Principals: rec.Principals,
		NoApproval: true,
	}
	var sealed *audit.Sealed
	if u != nil && rec.Sealed != "" {
		sealed, err = u.Unseal(rec)
		if err != nil {
			o.unseen = append(o.unseen, UnseenSealUnreadable)
		}
	}
	e := seen
	if sealed != nil {
		o.sealed = true
		req.Event, req.Workspace, req.AuthZEN = sealed.Event, sealed.Workspace, sealed.AuthZEN
		req.ClientIP, _ = netip.ParseAddr(sealed.ClientIP)
	} else {
		if invalidEvent(rec) {
			// The contract refused an event that was no event, whatever the
			// catalog and policy: what it was is not kept, so its route stands.
			o.now, o.kept = recorded, keptInvalid
			o.blockers = rec.HardBlockers
			return o
		}
		req.Event = rebuild(rec)
		if len(rec.ArgumentKeys) > 0 {
			// Without keys the arguments were the empty object the rebuilt
			// event holds: seen, so validated as they were.
			e = blind
		}
	}
	d := e.Decide(ctx, req)
	o.revs = gate.Revisions{Catalog: noKey.Screen(d.Revisions.Catalog), Policy: noKey.Screen(d.Revisions.Policy)}
	if known && !eng.Redecide && sameRevisions(rec, d.Revisions) {
		// Decided with the very rules the record was, at its time: no
		// change of rules can differ, so whatever does is what replay
		// cannot run again (a surface's rules, unsealed arguments, a kill
		// switch, an approval, a rate limit), which decided as recorded.
		o.now, o.kept, o.sealed = recorded, keptSameRevisions, false
		o.blockers = rec.HardBlockers
		return o
	}
	// The policy under test writes its codes and may write argument values
	// into them (sealed ones too): screened as a record's fields are, before
	// the report or a pull request comment shows them.
	o.now, o.blockers = d.Route, noKey.ScreenAll(d.HardBlockers)
	o.unseen = append(o.unseen, unseen(rec, d, sealed)...)
	slices.Sort(o.unseen)
	return o
}

// sameRevisions reports whether rec was decided with the catalog and
// policy revisions replay decided it with. Two empty pairs prove nothing:
// a decision stopped before any rule (an invalid event) names none.
func sameRevisions(rec *audit.Record, now gate.Revisions) bool {
	if now.Catalog == "" && now.Policy == "" {
		return false
	}
	return rec.CatalogRevision == now.Catalog && rec.PolicyRevision == now.Policy
}

// invalidEvent reports whether the contract refused the recorded event as
// no event (before any catalog or policy saw it).
func invalidEvent(rec *audit.Record) bool {
	for _, c := range rec.FindingCodes {
		switch c {
		case route.CodeContractNormalizationFailed, route.CodeSchemaValidationFailed, route.CodeArgumentNumberOutOfRange:
			return true
		}
	}
	return false
}

// replayProvenance labels the evidence refs rebuilt from a record: the
// record keeps no provenance, which the contract requires.
const replayProvenance = "audit_record"

// rebuild is the event a record describes, as far as it keeps it: no
// argument values (an empty object stands for them) and, of each evidence
// ref, its kind, tiers and freshness status, not its text or times.
func rebuild(rec *audit.Record) map[string]any {
	refs := make([]any, len(rec.Evidence))
	for i, m := range rec.Evidence {
		refs[i] = contract.RefDoc(route.EvidenceRef{
			SourceID: firstNonEmpty(m.SourceID, m.SourceFingerprint), Kind: m.Kind, TrustTier: m.TrustTier,
			RedactionStatus: m.RedactionStatus, Freshness: route.Freshness{Status: m.Freshness},
			Provenance: replayProvenance,
		})
	}
	doc := map[string]any{
		"tool_name": rec.ToolName, "tool_category": rec.DeclaredCategory, "authorization_state": rec.DeclaredAuth,
		"evidence_refs": refs, "risk_domain": rec.RiskDomain, "proposed_arguments": map[string]any{},
		"recommended_route": rec.RuntimeRoute,
	}
	if rec.RequestID != "" {
		doc["request_id"] = rec.RequestID
	}
	if rec.AgentID != "" {
		doc["agent_id"] = rec.AgentID
	}
	return doc
}

func firstNonEmpty(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// Unseen names something a decision may rest on that replay could not see
// or does not evaluate again.
type Unseen string

const (
	// UnseenArguments: the call had arguments, which an unsealed record
	// keeps only as keys and a fingerprint; argument schemas, argument and
	// path rules, shell rules and policy conditions on arguments judged
	// none. The workspace paths were judged against is sealed only too.
	UnseenArguments Unseen = "arguments"
	// UnseenEvidenceText: the call carried evidence, of which an unsealed
	// record keeps the kind, tiers and freshness status, not its summary,
	// supports, contradicts or times.
	UnseenEvidenceText Unseen = "evidence_text"
	// UnseenClientAddress: a policy condition failed in the record or the
	// replay, and ip-range conditions read the client address, which only
	// a sealed record keeps.
	UnseenClientAddress Unseen = "client_address"
	// UnseenPrincipal: a principal was stored as its fingerprint (it looked
	// like personal data or a secret), so grants naming it cannot match.
	UnseenPrincipal Unseen = "principal_fingerprinted"
	// UnseenRateLimit: the recorded decision met a rate limit; replay does
	// not count calls (every call is within its limits).
	UnseenRateLimit Unseen = "rate_limit"
	// UnseenKillSwitch: a kill switch decided the record; replay does not
	// consult kill switches.
	UnseenKillSwitch Unseen = "kill_switches"
	// UnseenApproval: the record asked for, used or was refused an
	// approval; replay creates and consults none.
	UnseenApproval Unseen = "approval"
	// UnseenGatedFailure: gated failed while deciding the record (its
	// store, an internal error); replay decides as if it had not.
	UnseenGatedFailure Unseen = "gated_failure"
	// UnseenSurfaceChecks: a surface's own rules (the Action API plan's)
	// judged the record; replay does not run them.
	UnseenSurfaceChecks Unseen = "surface_checks"
	// UnseenSealUnreadable: the record is sealed but the identities given
	// cannot open it, so it was replayed as an unsealed one.
	UnseenSealUnreadable Unseen = "seal_unreadable"
	// UnseenRecordedRoute: the record names no route this gated knows.
	UnseenRecordedRoute Unseen = "recorded_route_unknown"
)

// fingerprintPrefix starts a text the audit redactor replaced by its
// fingerprint.
const fingerprintPrefix = "hmac-sha256:"

// unseen is what the decision of rec, replayed as d, may rest on that
// replay could not see.
func unseen(rec *audit.Record, d *gate.Decision, sealed *audit.Sealed) []Unseen {
	var out []Unseen
	add := func(u Unseen) {
		if !slices.Contains(out, u) {
			out = append(out, u)
		}
	}
	if sealed == nil {
		if len(rec.ArgumentKeys) > 0 {
			add(UnseenArguments)
		}
		if len(rec.Evidence) > 0 {
			add(UnseenEvidenceText)
		}
	}
	if rec.ApprovalID != "" {
		add(UnseenApproval)
	}
	for _, p := range rec.Principals {
		if strings.HasPrefix(p, fingerprintPrefix) {
			add(UnseenPrincipal)
		}
	}
	codes := slices.Clone(rec.FindingCodes)
	for _, f := range d.Findings {
		codes = append(codes, f.Code)
	}
	for _, c := range codes {
		switch {
		case c == route.CodePolicyConditionFailed:
			if sealed == nil || sealed.ClientIP == "" {
				add(UnseenClientAddress)
			}
		case c == route.CodePolicyLimitExceeded || c == route.CodeRateLimitUnavailable:
			add(UnseenRateLimit)
		case c == route.CodePolicyApprovalNotGranted:
			add(UnseenApproval)
		}
		if !slices.Contains(rec.FindingCodes, c) {
			continue // the owners below are of what the record met
		}
		switch o, _ := route.OwnerOf(c); o {
		case route.OwnerKill:
			add(UnseenKillSwitch)
		case route.OwnerApproval:
			add(UnseenApproval)
		case route.OwnerAudit, route.OwnerGate:
			add(UnseenGatedFailure)
		case route.OwnerActionAPI:
			add(UnseenSurfaceChecks)
		}
	}
	return out
}

// ErrWidened is what a caller gating on a replay reports: a decision got
// less strict.
var ErrWidened = errors.New("a replayed decision is less strict than the one recorded")

// Gate reports ErrWidened when r has a widening the caller does not allow:
// any, or with allowUnseen only one that rests on nothing replay could not
// see.
func (r *Report) Gate(allowUnseen bool) error {
	n := r.Widened
	if allowUnseen {
		n -= r.WidenedUnseen
	}
	if n > 0 {
		return fmt.Errorf("%w: %d widened", ErrWidened, n)
	}
	return nil
}
