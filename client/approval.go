package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"time"
)

// Approval is a person's answer to an ask, as gated holds it. An ask or
// defer answer carries a pending one (Decision.Approval) when gated runs
// with approvals; (*Client).Approval reads it again.
type Approval struct {
	ID string `json:"id"`
	// Status is pending, approved, denied, expired or used.
	Status    string    `json:"status"`
	ExpiresAt time.Time `json:"expires_at"`
	// Digest binds the approval to one call: tool, arguments, requester
	// and agent.
	Digest string `json:"digest,omitempty"`
	// URL is where a person approves or denies it.
	URL string `json:"url,omitempty"`
	// EvidenceRef is what the retried event appends to its evidence_refs
	// (set on the approval a decision carries).
	EvidenceRef json.RawMessage `json:"evidence_ref,omitempty"`

	Raw json.RawMessage `json:"-"`
}

// The statuses of an approval.
const (
	ApprovalPending  = "pending"
	ApprovalApproved = "approved"
	ApprovalDenied   = "denied"
	ApprovalExpired  = "expired"
	ApprovalUsed     = "used"
)

// The reasons of a BlockedError when waiting for an approval ended the
// call (besides the blocker of a failure while waiting).
const (
	ReasonApprovalDenied  = "approval_denied"
	ReasonApprovalExpired = "approval_expired"
	ReasonApprovalUsed    = "approval_used"
	ReasonApprovalTimeout = "approval_timeout"
)

// approvalPoll bounds one long-poll of Guard's wait, well under gated's cap
// of 60s per call, so that proxies with idle timeouts see traffic.
const approvalPoll = 30 * time.Second

// maxApprovalWait is the longest gated holds one GET of an approval; it
// refuses a longer wait.
const maxApprovalWait = 60 * time.Second

// approvalPollMin is the least time between two polls: a pending answer
// that comes back sooner (a gated or proxy that does not hold it) is
// followed by a pause, so that it is not asked again in a tight loop.
const approvalPollMin = time.Second

// Approval reads approval id with the client's token (the requester may
// read its own approval). With wait > 0 gated holds the answer while the
// approval is pending, up to wait (at most 60s, gated's limit: a longer wait
// is taken as 60s); the request's timeout is wait plus the client's timeout. On a failure it returns an
// *Error naming it, as Check would: gated_unreachable, gated_timeout,
// gated_http_<status> (404 for an approval gated does not know) or
// gated_bad_answer (not an approval, another id, an unknown status).
func (c *Client) Approval(ctx context.Context, id string, wait time.Duration) (*Approval, error) {
	a, err := c.approval(ctx, id, wait)
	if err != nil {
		return nil, err
	}
	return a, nil
}

func (c *Client) approval(ctx context.Context, id string, wait time.Duration) (*Approval, *Error) {
	if id == "" {
		return nil, &Error{BlockerBadAnswer, errors.New("an approval needs an id")}
	}
	path := "/v1/approvals/" + url.PathEscape(id)
	timeout := c.timeout
	if wait > 0 {
		wait = min(wait, maxApprovalWait)
		// status=pending: hold the answer only while the approval is
		// pending, so one decided before the call answers at once.
		ms := (wait + time.Millisecond - 1) / time.Millisecond
		path += fmt.Sprintf("?status=pending&wait=%dms", ms)
		if timeout > 0 {
			timeout += wait
		}
	}
	raw, err := c.do(ctx, http.MethodGet, path, nil, timeout)
	if err != nil {
		return nil, err
	}
	a, perr := parseApproval(raw, id)
	if perr != nil {
		return nil, &Error{BlockerBadAnswer, perr}
	}
	return a, nil
}

// parseApproval accepts only a JSON object naming approval id with a known
// status: anything else could be read as permission by mistake.
func parseApproval(raw []byte, id string) (*Approval, error) {
	a := &Approval{}
	if err := json.Unmarshal(raw, a); err != nil {
		return nil, fmt.Errorf("gated's answer is not an approval: %w", err)
	}
	if a.ID != id {
		return nil, fmt.Errorf("gated's answer is not approval %q (got %.60q)", id, a.ID)
	}
	switch a.Status {
	case ApprovalPending, ApprovalApproved, ApprovalDenied, ApprovalExpired, ApprovalUsed:
	default:
		return nil, fmt.Errorf("gated's answer has no known approval status (got %.40q)", a.Status)
	}
	a.Raw = raw
	return a, nil
}

// GuardOption configures one Guard call.
type GuardOption func(*guardConfig)

type guardConfig struct {
	wait          time.Duration
	reportOutcome bool
	onReportError func(error)
}

// WaitForApproval makes Guard wait up to d for a person to decide when
// gated's answer is ask or defer and carries an approval (gated runs with a
// database and tokens). Guard long-polls the approval with the client's
// token, at most 30s per call; each call's timeout is its wait plus the
// client's timeout. Then:
//   - approved: Guard sends the same event once more, with the approval's
//     evidence_ref appended to evidence_refs, and runs the tool only if
//     that answer is accept with execute true; otherwise the BlockedError
//     carries that answer. It never retries more than once.
//   - denied, expired or used: a BlockedError with the asking decision and
//     Reason approval_denied, approval_expired or approval_used.
//   - no decision within d: a BlockedError with the asking decision and
//     Reason approval_timeout.
//   - a failure while waiting (gated down, slow, a non-2xx status, an
//     answer that is not an approval): a BlockedError with the client's
//     refusal naming the failure, as Check makes it, and Reason its
//     blocker.
//
// OnDecision sees every decision in turn: the asking one (with the
// approval's URL to show the person) before the wait, then the retried
// one or the refusal of a failed wait. Without an approval, or with d not
// positive, Guard behaves as without the option. Cancelling ctx ends the
// wait as a failure.
func WaitForApproval(d time.Duration) GuardOption {
	return func(g *guardConfig) { g.wait = d }
}

// awaitsApproval reports whether d is an answer Guard may wait on: ask or
// defer with an approval that has an id and an evidence ref to retry with.
func (d *Decision) awaitsApproval() bool {
	return d != nil && (d.Route == "ask" || d.Route == "defer") && d.Approval != nil &&
		d.Approval.ID != "" && isJSONObject(d.Approval.EvidenceRef)
}

func isJSONObject(raw json.RawMessage) bool {
	var m map[string]json.RawMessage
	return json.Unmarshal(raw, &m) == nil && m != nil
}

// awaitApproval waits up to wait for asked's approval and retries event
// once when it is approved. It returns the retried decision when the tool
// may run on it, and otherwise the BlockedError to return.
func (c *Client) awaitApproval(ctx context.Context, event Event, asked *Decision, wait time.Duration) (*Decision, *BlockedError) {
	deadline := time.Now().Add(wait)
	for {
		left := time.Until(deadline)
		if left <= 0 {
			return nil, &BlockedError{Decision: asked, Reason: ReasonApprovalTimeout}
		}
		polled := time.Now()
		a, err := c.approval(ctx, asked.Approval.ID, min(left, approvalPoll))
		if err != nil {
			d, _ := refusal(err)
			c.report(d)
			return nil, &BlockedError{Decision: d, Err: err, Reason: err.Blocker}
		}
		switch a.Status {
		case ApprovalPending:
			pause(ctx, min(approvalPollMin-time.Since(polled), time.Until(deadline)))
			continue
		case ApprovalApproved:
		default:
			return nil, &BlockedError{Decision: asked, Reason: "approval_" + a.Status}
		}
		retry, rerr := withEvidence(event, asked.Approval.EvidenceRef)
		if rerr != nil {
			return nil, &BlockedError{Decision: asked, Err: rerr}
		}
		d, cerr := c.Check(ctx, retry)
		c.report(d)
		if d.Route != "accept" || !d.Execute {
			return nil, &BlockedError{Decision: d, Err: cerr}
		}
		return d, nil
	}
}

// withEvidence returns a copy of event whose evidence_refs has ref
// appended; event itself is not changed.
func withEvidence(event Event, ref json.RawMessage) (Event, error) {
	var refs []json.RawMessage
	if v, ok := event["evidence_refs"]; ok && v != nil {
		raw, err := json.Marshal(v)
		if err == nil {
			err = json.Unmarshal(raw, &refs)
		}
		if err != nil {
			return nil, fmt.Errorf("the event's evidence_refs is not a list the approval can be added to: %w", err)
		}
	}
	out := maps.Clone(event)
	out["evidence_refs"] = append(refs, ref)
	return out, nil
}

// pause waits d, or less when ctx ends first (the next request then fails
// on ctx).
func pause(ctx context.Context, d time.Duration) {
	if d <= 0 {
		return
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}
