package server

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/gatedhq/gated/internal/approval"
	"github.com/gatedhq/gated/internal/auth"
	"github.com/gatedhq/gated/internal/route"
)

// Approvals is the approval store the HTTP API reads, decides and follows
// approvals with: internal/approval/postgres.Store, as cmd/gated wires it
// (wrapped to notify the webhook and count metrics).
type Approvals interface {
	Get(ctx context.Context, id string) (*approval.Approval, error)
	// List returns approvals newest first, those with status ("" for all),
	// a page of limit after the cursor before, and the next cursor ("" on
	// the last page); bad arguments wrap approval.ErrBadFilter.
	List(ctx context.Context, status approval.Status, limit int, before string) ([]approval.Approval, string, error)
	// Decide approves or denies; a refusal is an *approval.Error.
	Decide(ctx context.Context, id string, approver approval.Identity, approve bool, reason string, now time.Time) (*approval.Approval, error)
	// Wait returns the approval once its status is not seen, or as last
	// read when ctx ends.
	Wait(ctx context.Context, id string, seen approval.Status) (*approval.Approval, error)
	// Subscribe returns the ids of approvals as they change ("" means
	// re-read everything), closed when ctx ends.
	Subscribe(ctx context.Context) <-chan string
	// Listening returns once changes reach Subscribe as their ids (the
	// store listens for them), or with ctx's error.
	Listening(ctx context.Context) error
}

// Error codes of the approvals API, besides the route.CodeApproval* refusals.
const (
	codeApprovalsNeedTokens = "approvals_need_tokens"
	codeApprovalsOff        = "approvals_off"
	codeApprovalsStore      = "approvals_unavailable"
	codeBadRequest          = "bad_request"
)

// Bounds of the approvals API.
const (
	// MaxApprovalWait is the longest a GET /v1/approvals/{id}?wait= holds
	// its answer.
	MaxApprovalWait = 60 * time.Second
	// approvalKeepAlive is how often the event stream sends a comment, so
	// proxies keep it open and a client that went away is noticed.
	approvalKeepAlive = 15 * time.Second
	// approvalListenWait bounds how long a new event stream waits for the
	// store's listener (it connects at start and after a drop).
	approvalListenWait = 5 * time.Second
)

// needTokens answers every approvals route 403 when gated runs without
// tokens: the approver and the requester are tokens.
func needTokens(d *Deps) func(http.Handler) http.Handler {
	return answerUnless(func() bool { return d.Tokens != nil }, http.StatusForbidden, codeApprovalsNeedTokens,
		"approvals need tokens: the approver and the requester are each a token, so start gated with --tokens (and --database-url)")
}

// approvalsOn answers 404 when gated runs without approvals.
func approvalsOn(d *Deps) func(http.Handler) http.Handler {
	return answerUnless(func() bool { return d.Approvals != nil }, http.StatusNotFound, codeApprovalsOff,
		"approvals are off: they need --database-url and --tokens (and --approvals auto, the default)")
}

// answerUnless answers every route it wraps with status, code and msg while
// on reports false; on is asked per request.
func answerUnless(on func() bool, status int, code, msg string) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if !on() {
				writeCodedError(w, status, code, msg)
				return
			}
			next.ServeHTTP(w, r)
		})
	}
}

// writeApprovalError answers a failed call of the approval store.
func writeApprovalError(w http.ResponseWriter, err error) {
	writeStoreError(w, err, codeApprovalsStore, "the approval store is unavailable")
}

// approvalPage is GET /v1/approvals's answer.
type approvalPage struct {
	Approvals  []approval.Approval `json:"approvals"`
	NextCursor string              `json:"next_cursor,omitempty"`
}

// handleListApprovals lists approvals newest first:
// ?status=&limit=&cursor=.
func handleListApprovals(d *Deps) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		status, err := statusParam(q.Get("status"))
		if err != nil {
			writeCodedError(w, http.StatusBadRequest, codeBadRequest, err.Error())
			return
		}
		limit := 0
		if v := q.Get("limit"); v != "" {
			if limit, err = strconv.Atoi(v); err != nil || limit < 1 {
				writeCodedError(w, http.StatusBadRequest, codeBadRequest, "limit must be a positive integer")
				return
			}
		}
		page, next, err := d.Approvals.List(r.Context(), status, limit, q.Get("cursor"))
		if err != nil {
			writeApprovalError(w, err)
			return
		}
		if page == nil {
			page = []approval.Approval{}
		}
		writeJSON(w, http.StatusOK, approvalPage{Approvals: page, NextCursor: next})
	}
}

func statusParam(v string) (approval.Status, error) {
	if v == "" {
		return "", nil
	}
	return approval.ParseStatus(v)
}

// requesterView is an approval as its requester reads it: without the
// preview of the arguments and the findings, which are for approvers.
type requesterView struct {
	*approval.Approval
	// Findings shadows the approval's own (a shallower field wins in
	// encoding/json) and is never set: the view leaves them out.
	Findings *struct{} `json:"findings,omitempty"`
}

// handleGetApproval answers one approval, to a token with scope approve or
// to the token that asked for it (without preview and findings). With
// ?wait= (a Go duration such as 30s, or seconds; at most 60s) it holds the
// answer while the status is the one at the start of the call, or the one
// ?status= names, and can still change: denied, expired and used are
// final, and answer at once.
func handleGetApproval(d *Deps) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		t := tokenFrom(r.Context())
		q := r.URL.Query()
		wait, err := waitParam(q.Get("wait"))
		if err != nil {
			writeCodedError(w, http.StatusBadRequest, codeBadRequest, err.Error())
			return
		}
		seen, err := statusParam(q.Get("status"))
		if err != nil {
			writeCodedError(w, http.StatusBadRequest, codeBadRequest, err.Error())
			return
		}
		id := chi.URLParam(r, "id")
		a, err := d.Approvals.Get(r.Context(), id)
		if err != nil {
			writeApprovalError(w, err)
			return
		}
		approver := t.Has(auth.ScopeApprove)
		if !approver && a.Requester.TokenName != t.Name {
			// Someone else's approval reads as none at all.
			writeApprovalError(w, &approval.Error{Code: route.CodeApprovalUnknown, Message: "there is no such approval"})
			return
		}
		if seen == "" {
			seen = a.Status
		}
		if wait > 0 && a.Status == seen && !final(a.Status) {
			if a, err = d.longPoll(w, r, a, wait); err != nil {
				writeApprovalError(w, err)
				return
			}
		}
		if approver {
			writeJSON(w, http.StatusOK, a)
			return
		}
		a.Preview = nil
		writeJSON(w, http.StatusOK, requesterView{Approval: a})
	}
}

// approvalArguments is the answer of GET /v1/approvals/{id}/arguments.
type approvalArguments struct {
	ID string `json:"id"`
	// MaskedArguments is null when they were too large to keep.
	MaskedArguments json.RawMessage `json:"masked_arguments"`
}

// handleApprovalArguments answers an approval's arguments masked but not
// cut (approval.MaskedArguments), to a token with scope approve only: the
// preview cuts long values and long lists, and an approver must be able to
// read everything the call would do.
func handleApprovalArguments(d *Deps) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		a, err := d.Approvals.Get(r.Context(), chi.URLParam(r, "id"))
		if err != nil {
			writeApprovalError(w, err)
			return
		}
		writeJSON(w, http.StatusOK, approvalArguments{ID: a.ID, MaskedArguments: a.MaskedArguments})
	}
}

// final reports whether an approval in status s can change no more.
func final(s approval.Status) bool {
	return s == approval.StatusDenied || s == approval.StatusExpired || s == approval.StatusUsed
}

// longPoll waits up to wait for approval a's status to change, and ends
// early, answering a as read, when the client goes or gated shuts down.
func (d *Deps) longPoll(w http.ResponseWriter, r *http.Request, a *approval.Approval, wait time.Duration) (*approval.Approval, error) {
	// The server's read and write timeouts are shorter than a long poll.
	rc := http.NewResponseController(w)
	_ = rc.SetReadDeadline(time.Time{})
	_ = rc.SetWriteDeadline(time.Now().Add(wait + 15*time.Second))
	ctx, cancel := d.untilStopping(r.Context())
	defer cancel()
	ctx, cancelWait := context.WithTimeout(ctx, wait)
	defer cancelWait()
	got, err := d.Approvals.Wait(ctx, a.ID, a.Status)
	if err != nil && ctx.Err() != nil {
		return a, nil // ended before the store answered: a is the latest read
	}
	return got, err
}

// untilStopping returns ctx, also ended when gated starts shutting down.
func (d *Deps) untilStopping(ctx context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(ctx)
	if d.Stopping != nil {
		go func() {
			select {
			case <-d.Stopping:
				cancel()
			case <-ctx.Done():
			}
		}()
	}
	return ctx, cancel
}

// waitParam reads ?wait=: a Go duration, or whole seconds; at most
// MaxApprovalWait.
func waitParam(v string) (time.Duration, error) {
	if v == "" {
		return 0, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		n, nerr := strconv.Atoi(v)
		if nerr != nil {
			return 0, fmt.Errorf("wait must be a duration such as 30s (at most %s)", MaxApprovalWait)
		}
		d = time.Duration(n) * time.Second
	}
	if d < 0 || d > MaxApprovalWait {
		return 0, fmt.Errorf("wait must be between 0 and %s", MaxApprovalWait)
	}
	return d, nil
}

// decisionBody is the body of POST …/approve and …/deny. The approver is
// the token, never the body: a body naming one is an unknown field.
type decisionBody struct {
	Reason string `json:"reason"`
}

// handleDecideApproval approves (approve true) or denies an approval for
// the token that calls.
func handleDecideApproval(d *Deps, approve bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		body, berr := decodeDecision(w, r, d.MaxBodyBytes)
		if berr != nil {
			writeCodedError(w, berr.status, codeBadRequest, berr.msg)
			return
		}
		t := tokenFrom(r.Context())
		approver := approval.Identity{TokenName: t.Name, Principals: t.Principals}
		a, err := d.Approvals.Decide(r.Context(), chi.URLParam(r, "id"), approver, approve, body.Reason, time.Now())
		if err != nil {
			writeApprovalError(w, err)
			return
		}
		writeJSON(w, http.StatusOK, a)
	}
}

// decodeDecision reads {"reason": "…"}: JSON only (as every state change
// is, so a cross-site form cannot post one), bounded, no other field.
func decodeDecision(w http.ResponseWriter, r *http.Request, maxBytes int64) (decisionBody, *bodyError) {
	var b decisionBody
	raw, berr := readJSON(w, r, maxBytes)
	if berr != nil {
		return b, berr
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&b); err != nil {
		return b, &bodyError{http.StatusBadRequest, `the body must be a JSON object {"reason": "…"} and nothing else (the approver is the token): ` + err.Error()}
	}
	if _, err := dec.Token(); err != io.EOF {
		return b, &bodyError{http.StatusBadRequest, "malformed JSON: unexpected data after the object"}
	}
	return b, nil
}

// handleApprovalEvents streams approval changes as Server-Sent Events:
// "event: approval" with data {"id", "status"} for each change made by any
// replica, "event: resync" when changes may have been missed (re-read
// what you show), and a comment every 15 s. It ends when the client goes
// or gated shuts down.
func handleApprovalEvents(d *Deps) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		rc := http.NewResponseController(w)
		_ = rc.SetReadDeadline(time.Time{})
		_ = rc.SetWriteDeadline(time.Time{})
		ctx, cancel := d.untilStopping(r.Context())
		defer cancel()
		ids := d.Approvals.Subscribe(ctx)
		h := w.Header()
		h.Set("Content-Type", "text/event-stream")
		h.Set("Cache-Control", "no-store")
		h.Set("X-Accel-Buffering", "no") // nginx: do not buffer the stream
		w.WriteHeader(http.StatusOK)
		send := func(s string) bool {
			if _, err := io.WriteString(w, s); err != nil {
				return false
			}
			return rc.Flush() == nil
		}
		// Subscribed, and (but for a store still connecting after
		// approvalListenWait, which then sends a resync) listening before
		// this first line: a change made once the client has read it is
		// delivered as its id.
		lctx, lcancel := context.WithTimeout(ctx, approvalListenWait)
		_ = d.Approvals.Listening(lctx)
		lcancel()
		if !send(": gated approval events\nretry: 3000\n\n") {
			return
		}
		tick := time.NewTicker(approvalKeepAlive)
		defer tick.Stop()
		for {
			var msg string
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
				msg = ": keep-alive\n\n"
			case id, ok := <-ids:
				switch {
				case !ok:
					return
				case id == "":
					msg = "event: resync\ndata: {}\n\n"
				default:
					a, err := d.Approvals.Get(ctx, id)
					if err != nil {
						continue // purged, or unreadable now: the next change re-reads it
					}
					data, _ := json.Marshal(struct {
						ID     string          `json:"id"`
						Status approval.Status `json:"status"`
					}{a.ID, a.Status})
					msg = "event: approval\ndata: " + string(data) + "\n\n"
				}
			}
			if !send(msg) {
				return
			}
		}
	}
}
