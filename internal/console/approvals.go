package console

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"time"

	"go.uber.org/zap"

	"github.com/gatedhq/gated/internal/approval"
	"github.com/gatedhq/gated/internal/route"
)

const noApprovals = "Approvals are not configured: they need PostgreSQL (--database-url) and a tokens file (--tokens)."

// pageSize is how many approvals or decisions a page lists.
const pageSize = 50

// approvalsView is the queue's and the history's data.
type approvalsView struct {
	Approvals []approval.Approval
	// Me is the signed-in approver, so a row the person asked for
	// themselves can say so before they try.
	Me approval.Identity
	// Status is the history's filter ("" for all); Statuses its choices.
	Status   string
	Statuses []approval.Status
	// Next is the query of the next page, "" on the last.
	Next string
}

// Mine reports whether the signed-in approver is a's requester (the
// approval rules' own test: approval.CanDecide refusing self-approval).
func (v approvalsView) Mine(a approval.Approval) bool { return isSelf(&a, v.Me) }

// isSelf asks approval.CanDecide about a pending, unexpired approval with
// a's requester and no required approvers, so the only refusal left to it
// is self-approval: the console tells a person before they try by the
// same rule that refuses them.
func isSelf(a *approval.Approval, me approval.Identity) bool {
	err := approval.CanDecide(&approval.Approval{Requester: a.Requester, Status: approval.StatusPending,
		ExpiresAt: time.Unix(1<<40, 0)}, me, time.Unix(0, 0))
	var ae *approval.Error
	return errors.As(err, &ae) && ae.Code == route.CodeApprovalSelfApproval
}

func identity(u *user) approval.Identity {
	return approval.Identity{TokenName: u.token.Name, Principals: u.token.Principals}
}

// queue is the pending approvals: the page the console opens on.
func (c *Console) queue(w http.ResponseWriter, r *http.Request, u *user) {
	v := &view{Title: "Approvals", Active: "approvals", User: u, Notice: notice(r)}
	if c.opt.Approvals == nil {
		v.Error = noApprovals
		c.render(w, r, http.StatusOK, "queue", v)
		return
	}
	list, next, err := c.opt.Approvals.List(r.Context(), approval.StatusPending, pageSize, r.URL.Query().Get("cursor"))
	if err != nil {
		c.storeFailed(w, r, u, "approvals", err)
		return
	}
	v.Data = approvalsView{Approvals: list, Me: identity(u), Next: nextQuery(r, next)}
	c.render(w, r, http.StatusOK, "queue", v)
}

var historyStatuses = []approval.Status{approval.StatusApproved, approval.StatusDenied, approval.StatusUsed, approval.StatusExpired, approval.StatusPending}

// history lists every approval, or those with one status, newest first.
func (c *Console) history(w http.ResponseWriter, r *http.Request, u *user) {
	v := &view{Title: "Approval history", Active: "history", User: u}
	if c.opt.Approvals == nil {
		v.Error = noApprovals
		c.render(w, r, http.StatusOK, "history", v)
		return
	}
	status := r.URL.Query().Get("status")
	if status != "" {
		if _, err := approval.ParseStatus(status); err != nil {
			c.fail(w, r, u, http.StatusBadRequest, "There is no approval status "+status+".")
			return
		}
	}
	list, next, err := c.opt.Approvals.List(r.Context(), approval.Status(status), pageSize, r.URL.Query().Get("cursor"))
	if err != nil {
		c.storeFailed(w, r, u, "approvals", err)
		return
	}
	v.Data = approvalsView{Approvals: list, Me: identity(u), Status: status, Statuses: historyStatuses, Next: nextQuery(r, next)}
	c.render(w, r, http.StatusOK, "history", v)
}

// approvalView is one approval's page.
type approvalView struct {
	A approval.Approval
	// Mine: the signed-in approver asked for it (and may not decide it).
	Mine bool
	// Decidable: it is pending and not past its expiry.
	Decidable bool
	// Reason is what was typed, kept when a decision was refused.
	Reason string
	// Decisions says whether the decisions it links to may be opened.
	Decisions bool
}

func (c *Console) approvalPage(w http.ResponseWriter, r *http.Request, u *user) {
	c.showApproval(w, r, u, http.StatusOK, "", "")
}

// showApproval renders approval {id}, with problem and the reason typed
// when a decision was just refused.
func (c *Console) showApproval(w http.ResponseWriter, r *http.Request, u *user, status int, problem, reason string) {
	if c.opt.Approvals == nil {
		c.fail(w, r, u, http.StatusNotFound, noApprovals)
		return
	}
	a, err := c.opt.Approvals.Get(r.Context(), r.PathValue("id"))
	if err != nil {
		if code, ok := refusal(err); ok && code == route.CodeApprovalUnknown {
			c.fail(w, r, u, http.StatusNotFound, "There is no approval with that id.")
			return
		}
		c.storeFailed(w, r, u, "approvals", err)
		return
	}
	now := c.opt.Now()
	v := &view{Title: "Approval " + shortID(a.ID), Active: "approvals", User: u, Error: problem, Notice: notice(r),
		Data: approvalView{A: *a, Mine: isSelf(a, identity(u)), Reason: reason, Decisions: canDecisions(u.token),
			Decidable: a.Status == approval.StatusPending && now.Before(a.ExpiresAt)}}
	c.render(w, r, status, "approval", v)
}

// decide approves or denies approval {id} as the signed-in token. A
// refusal (the requester deciding, an approver not among those required,
// decided already, expired) shows the approval again with the reason in a
// sentence, and what was typed kept.
func (c *Console) decide(approve bool) func(http.ResponseWriter, *http.Request, *user) {
	return func(w http.ResponseWriter, r *http.Request, u *user) {
		if c.opt.Approvals == nil {
			c.fail(w, r, u, http.StatusNotFound, noApprovals)
			return
		}
		id, reason := r.PathValue("id"), r.PostForm.Get("reason")
		a, err := c.opt.Approvals.Decide(r.Context(), id, identity(u), approve, reason, c.opt.Now())
		if err != nil {
			code, refused := refusal(err)
			if !refused {
				c.storeFailed(w, r, u, "approvals", err)
				return
			}
			status := http.StatusConflict
			switch code {
			case route.CodeApprovalUnknown:
				c.fail(w, r, u, http.StatusNotFound, "There is no approval with that id.")
				return
			case route.CodeApprovalSelfApproval, route.CodeApprovalApproverNotAllowed, route.CodeApprovalApproverAnonymous:
				status = http.StatusForbidden
			}
			c.showApproval(w, r, u, status, refusalSentence(code, err), reason)
			return
		}
		verdict := "denied"
		if approve {
			verdict = "approved"
		}
		c.opt.Logger.Info("console approval decided", zap.String("approval_id", a.ID), zap.String("status", string(a.Status)),
			zap.String("approver", u.token.Name))
		// Back to where the decision was made: the queue, or the approval.
		to := "/ui/approvals/" + url.PathEscape(a.ID) + "?done=" + verdict
		if r.PostForm.Get("from") == "queue" {
			to = "/ui/approvals?done=" + verdict
		}
		http.Redirect(w, r, to, http.StatusSeeOther)
	}
}

// refusal returns the code of an *approval.Error.
func refusal(err error) (string, bool) {
	var ae *approval.Error
	if errors.As(err, &ae) {
		return ae.Code, true
	}
	return "", false
}

// refusalSentence says why a decision was refused, for the person who
// tried: the rule's own message, with what to do about it.
func refusalSentence(code string, err error) string {
	switch code {
	case route.CodeApprovalSelfApproval:
		return "You cannot decide your own request: you share the requester's token or a principal that names it, so another approver has to."
	case route.CodeApprovalApproverNotAllowed:
		return "You are not among the approvers this action requires: " + err.Error()
	case route.CodeApprovalDecided:
		return "Someone decided this approval already: " + err.Error()
	case route.CodeApprovalExpired:
		return "This approval expired before it was decided; the agent has to ask again."
	}
	return err.Error()
}

// notice is the sentence for ?done=, set after a decision redirected.
func notice(r *http.Request) string {
	switch r.URL.Query().Get("done") {
	case "approved":
		return "Approved. The waiting call may now run, once."
	case "denied":
		return "Denied. The waiting call will not run."
	}
	return ""
}

// nextQuery is the current query with cursor set to next, or "".
func nextQuery(r *http.Request, next string) string {
	if next == "" {
		return ""
	}
	q := r.URL.Query()
	q.Set("cursor", next)
	q.Del("done")
	return "?" + q.Encode()
}

// storeFailed answers 503 when a store cannot be read or written.
func (c *Console) storeFailed(w http.ResponseWriter, r *http.Request, u *user, what string, err error) {
	if errors.Is(err, context.Canceled) {
		return // the browser went away
	}
	c.opt.Logger.Warn("console: the "+what+" store failed", zap.Error(err))
	c.fail(w, r, u, http.StatusServiceUnavailable, "The "+what+" store cannot be reached right now. Try again in a moment.")
}

// eventHeartbeat is how often the stream sends a comment when nothing
// changes, so proxies do not close it as idle.
const eventHeartbeat = 15 * time.Second

// events streams approval changes as Server-Sent Events for the queue's
// script: "event: approval" with {"id"}, or "event: resync" when changes
// may have been missed (the listener reconnected, the reader fell behind). It
// needs the session cookie, which EventSource sends, where the API's
// stream needs a bearer token it cannot.
func (c *Console) events(w http.ResponseWriter, r *http.Request, u *user) {
	if c.opt.Approvals == nil {
		c.fail(w, r, u, http.StatusNotFound, noApprovals)
		return
	}
	rc := http.NewResponseController(w)
	// The server's write timeout is for requests, not streams.
	_ = rc.SetWriteDeadline(time.Time{})
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	ids := c.opt.Approvals.Subscribe(ctx)
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	// Ask the browser to wait a little before reconnecting after the
	// stream ends (a restart, a session that expired).
	if _, err := w.Write([]byte("retry: 3000\n\n")); err != nil || rc.Flush() != nil {
		return
	}
	tick := time.NewTicker(eventHeartbeat)
	defer tick.Stop()
	for {
		var msg []byte
		select {
		case <-ctx.Done():
			return
		case <-c.opt.Stopping:
			return
		case <-tick.C:
			msg = []byte(": keep-alive\n\n")
		case id, ok := <-ids:
			if !ok {
				return
			}
			// As the API's stream says it: resync when changes may have
			// been missed.
			msg = []byte("event: resync\ndata: {}\n\n")
			if id != "" {
				data, _ := json.Marshal(map[string]string{"id": id})
				msg = append(append([]byte("event: approval\ndata: "), data...), "\n\n"...)
			}
		}
		// The session may end while the stream is open.
		if c.sessions.user(r, c.opt.Tokens, c.opt.Now()) == nil {
			return
		}
		if _, err := w.Write(msg); err != nil || rc.Flush() != nil {
			return
		}
	}
}
