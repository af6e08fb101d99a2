package policy

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/netip"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/topdown"

	"github.com/gatedhq/gated/internal/redact"
	"github.com/gatedhq/gated/internal/route"
)

// Input is what one decision asks of the policy.
type Input struct {
	Event             *route.Event
	Category          route.Category // effective category
	ActionID          string         // "" when the tool is not catalogued
	ApprovalPolicyRef string         // the <ref> of the action's `approval: policy:<ref>`, "" if none
	Action            any            // the resolved action view (JSON-able), exposed to custom Rego
	Principals        []string       // from Principals(...)
	ClientIP          netip.Addr     // invalid when unknown; ip-range conditions then fail
	// TokenName names the bearer token of the request, "" when gated runs
	// open. With ClientIP it keys rate limits: the caller cannot choose
	// either, unlike the event's agent_id.
	TokenName string
	// AuthZEN is input.authzen: the AuthZEN request the call came as, set
	// by that surface only; nil (absent from the input) for every other.
	AuthZEN map[string]any
	Now     time.Time
	Limiter *Limiter // rate-limit state kept across reloads; required when limits are configured
	// Counted: this call was counted against the rate limits already, by
	// the first pass of the same decision (a hook's retry, decided again
	// with the approval its digest found), so nothing is spent again.
	Counted bool
}

// Result is the policy's contribution to a decision.
type Result struct {
	Findings []route.Finding
	Block    *Block // nil when grants are not enforced (no POLICY.md loaded)
	// Counted: the call was counted against the rate limits.
	Counted bool
}

// Block is the decision envelope's `policy` block, shaped like AIP-38's
// PolicyDecisionRecord.
type Block struct {
	Decision    string       `json:"decision"` // allow | deny
	Reason      string       `json:"reason"`
	Principal   string       `json:"principal"`
	Action      string       `json:"action"`
	Grant       *GrantRef    `json:"grant,omitempty"`
	PolicyChain []ChainEntry `json:"policy_chain"`
	EvaluatedAt string       `json:"evaluated_at"`
}

// GrantRef names the grant a decision matched (or, on deny, the best
// candidate that failed).
type GrantRef struct {
	PolicyID string `json:"policy_id"`
	Index    int    `json:"index"`
}

// ChainEntry is one composed policy, in composition order.
type ChainEntry struct {
	Source ChainSource `json:"source"`
	ID     string      `json:"id"`
	Layer  int         `json:"layer"`
}

// ChainSource is where a composed policy came from.
type ChainSource struct {
	File string `json:"file"`
}

// Reasons of the policy block (AIP-38's set plus default-allow and the two
// approval-policy outcomes).
const (
	ReasonMatchedGrant      = "matched-grant"
	ReasonDefaultAllow      = "default-allow"
	ReasonNoGrant           = "no-grant"
	ReasonTTLExpired        = "ttl-expired"
	ReasonExplicitRevoke    = "explicit-revoke"
	ReasonConditionFailed   = "condition-failed"
	ReasonRequirementFailed = "requirement-failed"
	ReasonLimitExceeded     = "limit-exceeded"
	ReasonEvaluationError   = "evaluation-error"
)

// candidate is one grant that matched the action and a principal.
type candidate struct {
	Policy     string
	Layer      int
	Grant      int
	Principal  string
	Revoked    bool
	Expired    bool
	Conditions bool
}

// stage orders how far a candidate got: the best failing candidate explains
// a deny.
func (c candidate) stage() int {
	switch {
	case c.Revoked:
		return 0
	case c.Expired:
		return 1
	case !c.Conditions:
		return 2
	}
	return 3 // allows
}

type customFinding struct {
	Code     string `json:"code"`
	Route    string `json:"route"`
	Blocking *bool  `json:"blocking"`
	Message  string `json:"message"`
}

// evalOutput is the decision module's `out`, read by output.
type evalOutput struct {
	Candidates []candidate
	Findings   []map[string]any
	Malformed  int // findings of the wrong shape
	Total      int // findings of every shape
}

// Evaluate decides the policy part of one request. It never panics and never
// allows on error: any failure is a refuse finding policy_evaluation_error.
func (s *Set) Evaluate(ctx context.Context, in Input) Result {
	if s == nil {
		return s.failed(in, errors.New("no policy set"))
	}
	return s.evaluate(ctx, in, s.native)
}

// evaluate is Evaluate with the grants evaluated by native, or by the Rego
// query when native is nil.
func (s *Set) evaluate(ctx context.Context, in Input, native *nativeGrants) (res Result) {
	defer func() {
		if r := recover(); r != nil {
			res = s.failed(in, fmt.Errorf("panic: %v", r))
		}
	}()
	if in.Event == nil {
		return s.failed(in, errors.New("no event"))
	}
	if in.Limiter == nil && len(s.limits) > 0 {
		return s.failed(in, errors.New("rate limits are configured but no limiter was given"))
	}
	out, err := s.eval(ctx, in, native)
	if err != nil {
		return s.failed(in, err)
	}
	findings, err := customFindings(out)
	if err != nil {
		return s.failed(in, err)
	}
	res.Findings = findings
	principal := requestPrincipal(in.Principals)
	if s.Enforced() {
		res.Block = s.block(in, principal)
		if f := s.grantStage(in, out.Candidates, res.Block); f != nil {
			res.Findings = append(res.Findings, *f)
			return res
		}
		principal = res.Block.Principal // the principal the grant matched keys the limit
	}
	// Requirements before limits: a call held for MFA or approval does not
	// spend the caller's rate budget.
	reqs := s.requirementFindings(in, out.Candidates)
	res.Findings = append(res.Findings, reqs...)
	if len(reqs) > 0 {
		res.Block.deny(ReasonRequirementFailed)
		return res
	}
	if in.Counted {
		return res
	}
	why, err := s.exceededLimit(ctx, in, principal)
	res.Counted = true
	switch {
	case err != nil:
		// Not knowing whether the caller is within its limit is no reason
		// to let it through: refuse, and name the cause.
		res.Findings = append(res.Findings, finding(route.CodeRateLimitUnavailable, route.Refuse,
			"the shared rate-limit store cannot be reached, so a call under a rate-tool-calls limit is refused"))
		res.Block.deny(ReasonEvaluationError)
	case why != "":
		res.Findings = append(res.Findings, finding(route.CodePolicyLimitExceeded, route.Defer, why))
		res.Block.deny(ReasonLimitExceeded)
	}
	return res
}

// afterNative, for tests, sees every decision the native evaluator made,
// so they can hold it to the Rego evaluation's.
var afterNative func(ctx context.Context, s *Set, in Input, out *evalOutput, err error)

func (s *Set) eval(ctx context.Context, in Input, native *nativeGrants) (*evalOutput, error) {
	if native != nil {
		if out, decided, err := s.evalNative(ctx, in, native); decided {
			if afterNative != nil {
				afterNative(ctx, s, in, out, err)
			}
			return out, err
		}
	}
	return s.evalRego(ctx, in)
}

func (s *Set) evalRego(ctx context.Context, in Input) (*evalOutput, error) {
	action, err := s.actionValue(in.Action)
	if err != nil {
		return nil, fmt.Errorf("input: %w", err)
	}
	// Built here, outside the budget: its cost is the event's size, which
	// the body limit bounds, not the policy's.
	input, err := inputValue(in, action)
	if err != nil {
		return nil, err
	}
	rs, err := s.run(ctx, input)
	if err != nil {
		return nil, regoFailure(err)
	}
	if len(rs) != 1 || len(rs[0].Expressions) != 1 {
		return nil, fmt.Errorf("rego: %d results, want 1", len(rs))
	}
	return output(rs[0].Expressions[0].Value)
}

// actionValue is the action view as Rego reads it (input.action). A view
// is immutable and a catalog reload builds a new policy Set, so the
// conversion (a JSON round trip of the whole view) is done once per view
// and Set, not per request; a value that is not a pointer is converted
// each time.
func (s *Set) actionValue(a any) (ast.Value, error) {
	if a == nil {
		return ast.NullValue, nil
	}
	cacheable := reflect.TypeOf(a).Kind() == reflect.Pointer
	if cacheable {
		if v, ok := s.actions.Load(a); ok {
			return v.(ast.Value), nil
		}
	}
	v, err := jsonValue(a, 0)
	if err != nil {
		return nil, err
	}
	if cacheable {
		s.actions.Store(a, v)
	}
	return v, nil
}

// authEventTimes are the retrieved_at times (Unix ns) of the event's verified
// auth_event evidence refs; unparseable times are skipped, never an error.
func authEventTimes(ev *route.Event) []int64 {
	var ts []int64
	for _, r := range ev.EvidenceRefs {
		if r.Kind != "auth_event" || r.TrustTier != "verified" {
			continue
		}
		if t, err := time.Parse(time.RFC3339Nano, r.RetrievedAt); err == nil {
			ts = append(ts, unixNanos(t))
		}
	}
	return ts
}

// mfaRecent: some verified auth_event was retrieved in [now-window, now].
func mfaRecent(in Input, window int64) bool {
	now := unixNanos(in.Now)
	for _, t := range authEventTimes(in.Event) {
		if t <= now && now-t <= window {
			return true
		}
	}
	return false
}

// requestPrincipal names the requester in the block and keys rate limits:
// the first principal (token principals come first), or "*" for none.
func requestPrincipal(ps []string) string {
	if len(ps) == 0 {
		return "*"
	}
	return ps[0]
}

func (s *Set) block(in Input, principal string) *Block {
	chain := make([]ChainEntry, len(s.docs))
	for i, d := range s.docs {
		chain[i] = ChainEntry{Source: ChainSource{File: d.File}, ID: d.ID, Layer: i}
	}
	return &Block{
		Decision:    "deny",
		Principal:   principal,
		Action:      in.ActionID,
		PolicyChain: chain,
		EvaluatedAt: in.Now.UTC().Format(time.RFC3339Nano),
	}
}

func (b *Block) deny(reason string) {
	if b != nil {
		b.Decision, b.Reason = "deny", reason
	}
}

// grantStage applies the grants: allow on an allowing candidate (lowest
// layer, then index), else default allow, else a refuse finding with the
// reason of the best failing candidate. A nil finding means allowed.
func (s *Set) grantStage(in Input, cands []candidate, b *Block) *route.Finding {
	best := -1
	for i, c := range cands {
		if best < 0 || c.stage() > cands[best].stage() ||
			(c.stage() == cands[best].stage() && (c.Layer < cands[best].Layer || c.Layer == cands[best].Layer && c.Grant < cands[best].Grant)) {
			best = i
		}
	}
	if best >= 0 {
		c := cands[best]
		b.Grant = &GrantRef{PolicyID: c.Policy, Index: c.Grant}
		if c.stage() == 3 {
			b.Decision, b.Reason, b.Principal = "allow", ReasonMatchedGrant, c.Principal
			return nil
		}
	}
	if s.defaultAllow {
		b.Decision, b.Reason, b.Grant = "allow", ReasonDefaultAllow, nil
		return nil
	}
	action := in.ActionID
	if action == "" {
		action = "(uncatalogued tool " + in.Event.ToolName + ")"
	}
	if best < 0 {
		b.Reason = ReasonNoGrant
		f := finding(route.CodePolicyNoGrant, route.Refuse, fmt.Sprintf("no grant allows %s for the request's principals", action))
		return &f
	}
	var f route.Finding
	switch cands[best].stage() {
	case 0:
		b.Reason = ReasonExplicitRevoke
		f = finding(route.CodePolicyExplicitRevoke, route.Refuse, fmt.Sprintf("the grant for %s (%s #%d) is revoked", action, cands[best].Policy, cands[best].Grant))
	case 1:
		b.Reason = ReasonTTLExpired
		f = finding(route.CodePolicyTTLExpired, route.Refuse, fmt.Sprintf("the grant for %s (%s #%d) is outside its TTL", action, cands[best].Policy, cands[best].Grant))
	default:
		b.Reason = ReasonConditionFailed
		f = finding(route.CodePolicyConditionFailed, route.Refuse, fmt.Sprintf("a condition of the grant for %s (%s #%d) does not hold", action, cands[best].Policy, cands[best].Grant))
	}
	return &f
}

// requirementFindings checks every applying requirement and the action's
// approval policy.
func (s *Set) requirementFindings(in Input, cands []candidate) []route.Finding {
	var out []route.Finding
	for _, r := range s.requirements {
		if !applies(r.appliesTo, in.ActionID) {
			continue
		}
		code := route.CodePolicyRequirementFailed + ":" + r.kind
		switch r.kind {
		case kindMFARecent:
			if !mfaRecent(in, r.window) {
				out = append(out, finding(code, route.Ask, fmt.Sprintf("%s requires a verified auth_event within %s", r.policy, time.Duration(r.window))))
			}
		case kindApprovalFrom:
			if in.Event.VerifiedApprovals() < r.count {
				out = append(out, finding(code, route.Defer, fmt.Sprintf("%s requires %d verified approval(s)", r.policy, r.count)))
			}
		default:
			out = append(out, finding(code, route.Defer, fmt.Sprintf("%s requires %q, which gated cannot check", r.policy, r.kind)))
		}
	}
	if ref := strings.TrimPrefix(in.ApprovalPolicyRef, "policy:"); ref != "" {
		d, ok := s.approvalPolicy(ref)
		switch {
		case !ok:
			out = append(out, finding(route.CodeApprovalPolicyUnresolvable, route.Defer, fmt.Sprintf("the action's approval policy %q is not loaded (or its slug is ambiguous)", ref)))
		case d.Default != "allow" && !slices.ContainsFunc(cands, func(c candidate) bool { return c.Policy == d.ID && c.stage() == 3 }):
			out = append(out, finding(route.CodePolicyApprovalNotGranted, route.Defer, fmt.Sprintf("the action's approval policy %q does not allow this request", ref)))
		}
	}
	return out
}

// approvalPolicy finds the policy an `approval: policy:<ref>` names: by its
// full id, or, for a bare slug ("production-deploys"), the one policy whose
// id ends in that slug.
func (s *Set) approvalPolicy(ref string) (*Document, bool) {
	if d, ok := s.byID[ref]; ok {
		return d, true
	}
	if strings.Contains(ref, "/") {
		return nil, false
	}
	var found *Document
	for _, d := range s.docs {
		if strings.HasSuffix(d.ID, "/"+ref) {
			if found != nil {
				return nil, false
			}
			found = d
		}
	}
	return found, found != nil
}

// exceededLimit spends one call of every applying rate limit and returns
// why the first one refused ("" when none did), or an error when a limit
// could not be counted.
//
// Each limit spends from the caller's bucket — the token, or the client
// address when gated runs open — which the caller cannot choose, so
// rotating agent_id or the subject in the event gains nothing. It also
// spends from the matched principal's bucket, shared by every caller that
// holds the principal (a group in several tokens), unless the event itself
// claimed that principal (such buckets would be the caller's to multiply)
// or there is none ("*": one bucket for everyone unnamed would let one
// caller exhaust it for all).
func (s *Set) exceededLimit(ctx context.Context, in Input, principal string) (string, error) {
	caller := callerKey(in)
	perPrincipal := principal != "*" && !claimedByEvent(principal, in.Event)
	exceeded := ""
	for _, l := range s.limits {
		if !applies(l.appliesTo, in.ActionID) {
			continue
		}
		keys := []string{l.key + "|caller|" + caller + "|" + in.ActionID}
		if perPrincipal {
			keys = append(keys, l.key+"|principal|"+principal+"|"+in.ActionID)
		}
		ok, full, err := in.Limiter.allow(ctx, l.value, l.per, in.Now, keys...)
		switch {
		case err != nil:
			return "", err
		case ok || exceeded != "":
		case full:
			exceeded = fmt.Sprintf("rate-tool-calls limit of %v per %s: this replica tracks %d rate buckets already, so a new caller waits until idle ones expire", l.value, l.per, maxBuckets)
		default:
			exceeded = fmt.Sprintf("rate-tool-calls limit of %v per %s exceeded for this caller or principal and action", l.value, l.per)
		}
	}
	return exceeded, nil
}

// callerKey names who made the request as far as the caller cannot choose
// it: the token, else the client address. An IPv6 client counts by its /64,
// the block one host is usually given, so it cannot rotate addresses.
func callerKey(in Input) string {
	if in.TokenName != "" {
		return "token:" + in.TokenName
	}
	ip := in.ClientIP.Unmap().WithZone("")
	if !ip.IsValid() {
		return "client:unknown"
	}
	if ip.Is6() {
		if p, err := ip.Prefix(64); err == nil {
			return "client:" + p.String()
		}
	}
	return "client:" + ip.String()
}

// claimedByEvent reports whether p is one of the principals an event can
// claim for itself (see Principals).
func claimedByEvent(p string, ev *route.Event) bool {
	if ev.AgentID != "" && p == "bot://"+ev.AgentID {
		return true
	}
	sub := ev.AuthorizationSubject
	return sub != nil && sub.SubjectRef != "" && slices.Contains(subjectPrincipals(sub), p)
}

// applies: an empty applies_to means every action (uncatalogued included).
func applies(ps []pattern, actionID string) bool {
	if len(ps) == 0 {
		return true
	}
	return slices.ContainsFunc(ps, func(p pattern) bool { return p.match(actionID) })
}

// regoFailure describes an evaluation error by its code and location only:
// OPA's messages can quote input values (arguments, evidence), which must
// not reach findings, logs or the audit store. Budget errors are gated's
// own and pass unchanged.
func regoFailure(err error) error {
	var be *budgetError
	if errors.As(err, &be) || errors.Is(err, errRequestEnded) {
		return err
	}
	var te *topdown.Error
	if errors.As(err, &te) {
		if te.Location != nil {
			return fmt.Errorf("rego %s at %s:%d", te.Code, te.Location.File, te.Location.Row)
		}
		return fmt.Errorf("rego %s", te.Code)
	}
	return errors.New("rego evaluation error")
}

// customFindings validates what custom modules produced; a malformed
// finding is an evaluation error, so a broken module cannot silently pass.
func customFindings(out *evalOutput) ([]route.Finding, error) {
	switch {
	case out.Total > maxCustomFindings:
		return nil, fmt.Errorf("custom modules returned %d findings; at most %d are allowed", out.Total, maxCustomFindings)
	case out.Malformed > 0:
		return nil, fmt.Errorf("%d custom finding(s) are malformed: each needs exactly code (at most %d characters), route, blocking and message (at most %d characters)", out.Malformed, maxCodeChars, maxMessageChars)
	}
	res := make([]route.Finding, 0, len(out.Findings))
	for i, m := range out.Findings {
		b, _ := json.Marshal(m)
		var cf customFinding
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.DisallowUnknownFields()
		err := dec.Decode(&cf)
		r, rerr := route.ParseRoute(cf.Route)
		if err != nil || rerr != nil || cf.Code == "" || cf.Blocking == nil {
			// Not quoting the finding: a module may have put argument values in it.
			return nil, fmt.Errorf("custom finding #%d is malformed: it needs exactly code, route (accept|ask|defer|refuse), blocking and message", i)
		}
		if route.Reserved(cf.Code) {
			// gated matches its own codes by code alone (an approval's
			// pending, the kill switch): a module may not speak for it.
			return nil, fmt.Errorf("custom finding #%d takes gated's own code %q (docs/codes.md); a custom module must choose another", i, cf.Code)
		}
		msg := cf.Message
		if redact.HasSecret(msg) || redact.HasPII(msg) {
			msg = "(message withheld: it looked like a secret or personal data)"
		}
		res = append(res, route.Finding{Source: route.SourcePolicy, Code: cf.Code, Route: r, Blocking: *cf.Blocking, Message: msg})
	}
	return res, nil
}

func finding(code string, r route.Route, msg string) route.Finding {
	return route.Finding{Source: route.SourcePolicy, Code: code, Route: r, Blocking: true, Message: msg}
}

// failed is the fail-closed result: refuse, naming the failure;
// policy_budget_exceeded when the budget stopped the evaluation.
func (s *Set) failed(in Input, err error) Result {
	f := finding(route.CodePolicyEvaluationError, route.Refuse, "policy evaluation failed: "+err.Error())
	var be *budgetError
	if errors.As(err, &be) {
		f = finding(route.CodePolicyBudgetExceeded, route.Refuse, be.Error())
	}
	res := Result{Findings: []route.Finding{f}}
	if s.Enforced() {
		res.Block = s.block(in, requestPrincipal(in.Principals))
		res.Block.Reason = ReasonEvaluationError
	}
	return res
}
