package server

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/go-chi/chi/v5/middleware"
	"go.uber.org/zap"

	"github.com/gatedhq/gated/internal/actionresult"
	"github.com/gatedhq/gated/internal/audit"
	"github.com/gatedhq/gated/internal/auth"
	"github.com/gatedhq/gated/internal/envelope"
	"github.com/gatedhq/gated/internal/gate"
)

const noDecisionStore = "decision records are stored in PostgreSQL only (start gated with --database-url)"

// handlePreToolCheck decides one Agent Action Contract v1 event.
func handlePreToolCheck(d *Deps) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		doc, berr := decodeEvent(w, r, d.MaxBodyBytes, d.MaxDepth)
		if berr != nil {
			writeError(w, berr.status, berr.msg)
			return
		}
		c := callerOf(d, r)
		dec := c.decide(r.Context(), d.Engine, doc)
		if ce := d.Logger.Check(zap.DebugLevel, "decision"); ce != nil {
			// Names and codes only: never arguments or evidence text.
			ce.Write(zap.String("decision_id", dec.DecisionID), zap.String("request_id", c.req.RequestID),
				zap.String("token", c.req.TokenName), zap.String("tool_category", string(dec.ToolCategory)),
				zap.Stringer("route", dec.Route), zap.Bool("execute", dec.Execute), zap.Bool("shadow", dec.Shadow), zap.Bool("shadow_ignored", dec.ShadowIgnored),
				zap.Strings("hard_blockers", dec.HardBlockers), zap.String("approval_id", dec.ApprovalID), zap.Duration("took", time.Since(start)))
		}
		a := envelope.From(dec)
		writeAnswer(w, &a)
	}
}

// handleValidate answers whether the body is a valid event, as the AANA
// reference's /validate-tool-precheck does: no decision, no record.
func handleValidate(d *Deps) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		doc, berr := decodeEvent(w, r, d.MaxBodyBytes, d.MaxDepth)
		if berr != nil {
			writeError(w, berr.status, berr.msg)
			return
		}
		writeJSON(w, http.StatusOK, gate.Validate(doc))
	}
}

// caller is who asks for decisions in one HTTP request: the decision
// request without its event, and whether a shadow request was refused.
type caller struct {
	req           gate.Request
	shadowIgnored bool
}

// callerOf builds the caller of r: its token and principals, client
// address, request id and shadow flag. Every surface (events, hooks, MCP)
// builds it here, so they decide alike.
func callerOf(d *Deps, r *http.Request) caller {
	req := gate.Request{
		RequestID: middleware.GetReqID(r.Context()),
		ClientIP:  clientIP(r, d.TrustedProxies),
		// Open mode has no token to vouch for anyone, so the event's own
		// principals (agent_id, subject) are all there is (see docs/policy.md);
		// with tokens, only one that vouches for its runtime lets them count.
		TrustEventPrincipals: d.Tokens == nil,
	}
	t := tokenFrom(r.Context())
	if t != nil {
		req.TokenName, req.Principals, req.TrustEventPrincipals = t.Name, t.Principals, t.TrustEventPrincipals
	}
	// Shadow lets the tool run whatever the route, so asking for it is not
	// enough: the token must hold scope shadow, or the operator must allow
	// it for an open gated. Otherwise the request is enforced.
	asked := r.URL.Query().Get("shadow_mode") == "true"
	may := d.AllowRequestShadow && d.Tokens == nil
	if t != nil {
		may = t.Has(auth.ScopeShadow)
	}
	req.Shadow = asked && may
	return caller{req: req, shadowIgnored: asked && !may}
}

// decide decides event for c. A refused shadow request is reported only
// when the decision is enforced (serve --shadow shadows it anyway).
func (c caller) decide(ctx context.Context, e *gate.Engine, event map[string]any) *gate.Decision {
	req := c.req
	req.Event = event
	dec := e.Decide(ctx, req)
	dec.ShadowIgnored = c.shadowIgnored && !dec.Shadow
	return dec
}

// handleDocument serves what doc returns, or 404 with missing when gated
// runs without that part.
func handleDocument(doc func() any, missing string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if doc == nil {
			writeError(w, http.StatusNotFound, missing)
			return
		}
		writeJSON(w, http.StatusOK, doc())
	}
}

func handleHealthz() http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
	}
}

// handleReadyz answers 200 only when gated can decide now.
func handleReadyz(d *Deps) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if err := d.Ready(r.Context()); err != nil {
			writeJSON(w, http.StatusServiceUnavailable, map[string]string{"status": "not_ready", "error": err.Error()})
			return
		}
		writeJSON(w, http.StatusOK, map[string]string{"status": "ready"})
	}
}

func handleOpenAPI(doc []byte) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/yaml")
		_, _ = w.Write(doc)
	}
}

func handleNotFound() http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, "not found")
	}
}

// handleMethodNotAllowed answers 405 with the Allow header RFC 9110
// requires: the methods routes has for the path. chi knows them but hands
// them only to its own 405 handler, so they are asked for again.
func handleMethodNotAllowed(routes chi.Routes) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		// chi routes on the raw path when the request has one.
		path := r.URL.RawPath
		if path == "" {
			path = r.URL.Path
		}
		var allow []string
		for _, m := range []string{http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete, http.MethodOptions} {
			if routes.Match(chi.NewRouteContext(), m, path) {
				allow = append(allow, m)
			}
		}
		w.Header().Set("Allow", strings.Join(allow, ", "))
		writeError(w, http.StatusMethodNotAllowed, fmt.Sprintf("method not allowed: this path takes %s", strings.Join(allow, " or ")))
	}
}

// decisionView is one stored record with the outcome its runtime reported,
// if any.
type decisionView struct {
	*audit.Record
	Outcome *audit.Outcome `json:"outcome,omitempty"`
	// Candidate is what the candidate policy decided for it, when one did.
	Candidate *audit.Candidate `json:"candidate,omitempty"`
}

// decisionListItem is one listed record with its outcome's status, if any:
// the list links each decision's outcome, GET /v1/decisions/{id} shows it.
type decisionListItem struct {
	*audit.Record
	OutcomeStatus actionresult.Status `json:"outcome_status,omitempty"`
	Candidate     *audit.Candidate    `json:"candidate,omitempty"`
}

type decisionList struct {
	Records    []decisionListItem `json:"records"`
	NextCursor string             `json:"next_cursor,omitempty"`
}

func listView(p audit.Page) decisionList {
	items := make([]decisionListItem, len(p.Records))
	for i, r := range p.Records {
		items[i] = decisionListItem{Record: r, OutcomeStatus: p.Outcomes[r.DecisionID], Candidate: p.Candidates[r.DecisionID]}
	}
	return decisionList{Records: items, NextCursor: p.NextCursor}
}

// handleGetDecision returns one stored record, its outcome and what the
// candidate policy decided for it.
func handleGetDecision(store audit.Store, candidates audit.CandidateStore) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if store == nil {
			writeError(w, http.StatusNotFound, noDecisionStore)
			return
		}
		id := chi.URLParam(r, "id")
		rec, err := store.Get(r.Context(), id)
		var o *audit.Outcome
		if err == nil {
			o, err = store.Outcome(r.Context(), id)
		}
		var cs map[string]*audit.Candidate
		if err == nil && candidates != nil {
			cs, err = candidates.CandidatesOf(r.Context(), []string{id})
		}
		if err != nil {
			writeDecisionsError(w, err, "no decision with that id")
			return
		}
		writeJSON(w, http.StatusOK, decisionView{Record: rec, Outcome: o, Candidate: cs[id]})
	}
}

// handleListDecisions lists stored records newest first, a page at a time.
func handleListDecisions(store audit.Store) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if store == nil {
			writeError(w, http.StatusNotFound, noDecisionStore)
			return
		}
		f, err := decisionFilter(r)
		if err != nil {
			writeError(w, http.StatusBadRequest, err.Error())
			return
		}
		page, err := store.List(r.Context(), f)
		if err != nil {
			writeDecisionsError(w, err, err.Error())
			return
		}
		writeJSON(w, http.StatusOK, listView(page))
	}
}

// writeDecisionsError answers a failed read of the decision store, as the
// decisions API always has: without a code, a refusal in words of its own.
func writeDecisionsError(w http.ResponseWriter, err error, refusal string) {
	if status := storeStatus(err); status != http.StatusServiceUnavailable {
		writeError(w, status, refusal)
		return
	}
	writeError(w, http.StatusServiceUnavailable, "the decision store is unavailable")
}

// decisionFilter reads ?route=&tool_name=&since=&until=&limit=&cursor=;
// times are RFC 3339.
func decisionFilter(r *http.Request) (audit.Filter, error) {
	q := r.URL.Query()
	f := audit.Filter{Route: q.Get("route"), ToolName: q.Get("tool_name"), AgentID: q.Get("agent_id"),
		Blocker: q.Get("blocker"), Cursor: q.Get("cursor")}
	for _, p := range []struct {
		name string
		dst  *time.Time
	}{{"since", &f.Since}, {"until", &f.Until}} {
		if v := q.Get(p.name); v != "" {
			t, err := time.Parse(time.RFC3339Nano, v)
			if err != nil {
				return f, errors.New(p.name + " must be an RFC 3339 time")
			}
			*p.dst = t
		}
	}
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return f, errors.New("limit must be a positive integer")
		}
		f.Limit = n
	}
	return f, nil
}
