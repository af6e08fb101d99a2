package console

import (
	"errors"
	"net/http"
	"time"

	"github.com/gatedhq/gated/internal/actionresult"
	"github.com/gatedhq/gated/internal/audit"
	"github.com/gatedhq/gated/internal/route"
)

const noDecisions = "Decisions are stored in PostgreSQL only: start gated with --database-url to search them here."

// decisionsView is the explorer's data: the filter as typed, and a page.
type decisionsView struct {
	Q       decisionQuery
	Records []*audit.Record
	// Outcomes is the outcome status of each listed decision that has one.
	Outcomes map[string]actionresult.Status
	Next     string
	// Approvals says whether linked approvals may be opened.
	Approvals bool
}

// decisionQuery is the explorer's form. Times are typed in UTC, as a
// datetime-local field gives them (or RFC 3339).
type decisionQuery struct {
	Since, Until, Route, Tool, Agent, Blocker string
}

var routes = route.Names()

// Routes are the route filter's choices.
func (decisionQuery) Routes() []string { return routes }

// timeLayouts are what a datetime-local field sends (with or without
// seconds), and RFC 3339 for a URL typed by hand.
var timeLayouts = []string{"2006-01-02T15:04", "2006-01-02T15:04:05", time.RFC3339Nano}

func parseTime(name, v string) (time.Time, error) {
	if v == "" {
		return time.Time{}, nil
	}
	for _, l := range timeLayouts {
		if t, err := time.ParseInLocation(l, v, time.UTC); err == nil {
			return t, nil
		}
	}
	return time.Time{}, errors.New(name + " must be a date and time, such as 2026-11-24T09:30 (UTC)")
}

// filter turns the form into the audit store's filter.
func (q decisionQuery) filter(cursor string) (audit.Filter, error) {
	f := audit.Filter{Route: q.Route, ToolName: q.Tool, AgentID: q.Agent, Blocker: q.Blocker, Limit: pageSize, Cursor: cursor}
	var err error
	if f.Since, err = parseTime("From", q.Since); err != nil {
		return f, err
	}
	if f.Until, err = parseTime("To", q.Until); err != nil {
		return f, err
	}
	return f, nil
}

// decisions is the explorer: stored decisions newest first, filtered by
// time, route, tool, agent and blocker, a page at a time.
func (c *Console) decisions(w http.ResponseWriter, r *http.Request, u *user) {
	qs := r.URL.Query()
	q := decisionQuery{Since: qs.Get("since"), Until: qs.Get("until"), Route: qs.Get("route"),
		Tool: qs.Get("tool"), Agent: qs.Get("agent"), Blocker: qs.Get("blocker")}
	v := &view{Title: "Decisions", Active: "decisions", User: u}
	d := decisionsView{Q: q, Approvals: canApprove(u.token)}
	v.Data = &d
	if c.opt.Decisions == nil {
		v.Error = noDecisions
		c.render(w, r, http.StatusOK, "decisions", v)
		return
	}
	f, err := q.filter(qs.Get("cursor"))
	if err != nil {
		v.Error = err.Error()
		c.render(w, r, http.StatusBadRequest, "decisions", v)
		return
	}
	page, err := c.opt.Decisions.List(r.Context(), f)
	switch {
	case errors.Is(err, audit.ErrBadFilter):
		v.Error = "That search cannot be made: " + err.Error()
		c.render(w, r, http.StatusBadRequest, "decisions", v)
		return
	case err != nil:
		c.storeFailed(w, r, u, "decision", err)
		return
	}
	d.Records, d.Outcomes, d.Next = page.Records, page.Outcomes, nextQuery(r, page.NextCursor)
	c.render(w, r, http.StatusOK, "decisions", v)
}

// decisionView is one decision's page.
type decisionView struct {
	R *audit.Record
	// Outcome is what its runtime reported after the call; nil: nothing.
	Outcome *audit.Outcome
	// Candidate is what the candidate policy decided for it; nil: none did.
	Candidate *audit.Candidate
	Approvals bool
}

// OutputCheck says what gated found checking the outcome's output against
// the tool's outputSchema.
func (v decisionView) OutputCheck() string {
	switch {
	case v.Outcome == nil || v.Outcome.OutputConforms == nil:
		return "not checked"
	case *v.Outcome.OutputConforms:
		return "met the outputSchema"
	}
	return "did not meet the outputSchema"
}

func (c *Console) decisionPage(w http.ResponseWriter, r *http.Request, u *user) {
	if c.opt.Decisions == nil {
		c.fail(w, r, u, http.StatusNotFound, noDecisions)
		return
	}
	rec, err := c.opt.Decisions.Get(r.Context(), r.PathValue("id"))
	var o *audit.Outcome
	if err == nil {
		o, err = c.opt.Decisions.Outcome(r.Context(), rec.DecisionID)
	}
	var cand map[string]*audit.Candidate
	if err == nil && c.opt.Disagreements != nil {
		cand, err = c.opt.Disagreements.CandidatesOf(r.Context(), []string{rec.DecisionID})
	}
	switch {
	case errors.Is(err, audit.ErrNotFound):
		c.fail(w, r, u, http.StatusNotFound, "There is no decision with that id.")
		return
	case err != nil:
		c.storeFailed(w, r, u, "decision", err)
		return
	}
	c.render(w, r, http.StatusOK, "decision", &view{Title: "Decision " + shortID(rec.DecisionID), Active: "decisions", User: u,
		Data: decisionView{R: rec, Outcome: o, Candidate: cand[rec.DecisionID], Approvals: canApprove(u.token)}})
}
