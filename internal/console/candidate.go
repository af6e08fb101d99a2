package console

import (
	"context"
	"errors"
	"net/http"

	"github.com/gatedhq/gated/internal/audit"
	"github.com/gatedhq/gated/internal/candidate"
)

// Candidate is the candidate policy beside the live one
// (internal/candidate): what this process's candidate counted.
type Candidate interface {
	Status() candidate.Status
}

// Disagreements reads the candidate's stored rows back
// (internal/audit/postgres).
type Disagreements interface {
	Disagreements(ctx context.Context, f audit.CandidateFilter) (audit.CandidatePage, error)
	CandidatesOf(ctx context.Context, ids []string) (map[string]*audit.Candidate, error)
}

const noDisagreements = "The candidate's decisions are listed from PostgreSQL only: start gated with --database-url to see its disagreements here (they are written beside the audit file meanwhile)."

// candidateView is the disagreements page's data.
type candidateView struct {
	Status candidate.Status
	Q      candidateQuery
	Rows   []*audit.Candidate
	Next   string
}

// candidateQuery is the page's filter form.
type candidateQuery struct {
	Tool, Principal, Direction string
}

// Directions are the direction filter's choices.
func (candidateQuery) Directions() []string {
	return []string{audit.DirectionWider, audit.DirectionNarrower}
}

// candidatePage lists where the candidate's route differs from the live
// one, newest first, filtered by tool, principal and direction.
func (c *Console) candidatePage(w http.ResponseWriter, r *http.Request, u *user) {
	if c.opt.Candidate == nil {
		c.fail(w, r, u, http.StatusNotFound, "No candidate policy runs: start gated with --candidate to decide one beside the live policy.")
		return
	}
	qs := r.URL.Query()
	q := candidateQuery{Tool: qs.Get("tool"), Principal: qs.Get("principal"), Direction: qs.Get("direction")}
	d := candidateView{Status: c.opt.Candidate.Status(), Q: q}
	v := &view{Title: "Candidate", Active: "candidate", User: u, Data: &d}
	if c.opt.Disagreements == nil {
		v.Error = noDisagreements
		c.render(w, r, http.StatusOK, "candidate", v)
		return
	}
	page, err := c.opt.Disagreements.Disagreements(r.Context(), audit.CandidateFilter{
		ToolName: q.Tool, Principal: q.Principal, Direction: q.Direction, Limit: pageSize, Cursor: qs.Get("cursor"),
	})
	switch {
	case errors.Is(err, audit.ErrBadFilter):
		v.Error = "That search cannot be made: " + err.Error()
		c.render(w, r, http.StatusBadRequest, "candidate", v)
		return
	case err != nil:
		c.storeFailed(w, r, u, "candidate", err)
		return
	}
	d.Rows, d.Next = page.Candidates, nextQuery(r, page.NextCursor)
	c.render(w, r, http.StatusOK, "candidate", v)
}
