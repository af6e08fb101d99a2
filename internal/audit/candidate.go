package audit

import (
	"context"
	"time"

	"github.com/gatedhq/gated/internal/route"
)

// Directions of a candidate's route against the live one, on the
// strictness order accept < ask < defer < refuse.
const (
	DirectionSame     = "same"
	DirectionWider    = "wider"    // the candidate is less strict: it would let more through
	DirectionNarrower = "narrower" // the candidate is stricter
)

// Direction compares the candidate's route with the live one.
func Direction(live, candidate route.Route) string {
	switch {
	case candidate < live:
		return DirectionWider
	case candidate > live:
		return DirectionNarrower
	}
	return DirectionSame
}

// Candidate is what the candidate policy (gated serve --candidate) decided
// for one live decision: a row of its own, keyed by the decision id and
// written after the live answer, best effort, joined to the decision's
// record when read. Like a Record it holds no argument values: the tool
// name is masked as approvals mask it, and principals are the token's.
type Candidate struct {
	DecisionID      string    `json:"decision_id"`
	DecidedAt       time.Time `json:"decided_at"` // the live decision's time, which the candidate decided at
	ToolName        string    `json:"tool_name"`
	TokenName       string    `json:"token_name"`
	Principals      []string  `json:"principals"`
	LiveRoute       string    `json:"live_route"`
	Route           string    `json:"route"`
	HardBlockers    []string  `json:"hard_blockers"`
	CatalogRevision string    `json:"catalog_revision"`
	PolicyRevision  string    `json:"policy_revision"`
	Direction       string    `json:"direction"`
	RecordedAt      time.Time `json:"recorded_at"`
}

// CandidateWriter keeps candidate rows: the PostgreSQL store, or the file
// beside the JSON-lines audit file.
type CandidateWriter interface {
	WriteCandidates(ctx context.Context, cs []*Candidate) error
}

// CandidateFilter selects candidate rows for CandidateStore.Disagreements:
// only those whose route differs from the live one. Zero fields do not
// filter.
type CandidateFilter struct {
	ToolName  string // exact tool name, as stored (masked)
	Principal string // a principal the token carried
	Direction string // wider or narrower
	Limit     int    // 0 means DefaultLimit; above MaxLimit is capped
	Cursor    string // CandidatePage.NextCursor of the previous page
}

// CandidatePage is one page of disagreements, newest first.
type CandidatePage struct {
	Candidates []*Candidate `json:"candidates"`
	NextCursor string       `json:"next_cursor,omitempty"`
}

// CandidateCount is how many decisions of one live route the candidate
// routed one way.
type CandidateCount struct {
	Live      string `json:"live"`
	Candidate string `json:"candidate"`
	Direction string `json:"direction"`
	Count     int64  `json:"count"`
}

// CandidateStore reads candidate rows back (the console's disagreements,
// GET /v1/candidate) and joins them to decisions (GET /v1/decisions).
type CandidateStore interface {
	CandidateWriter
	Disagreements(ctx context.Context, f CandidateFilter) (CandidatePage, error)
	// CandidateCounts sums the rows of a candidate revision decided at or
	// after since (zero: all kept), by live and candidate route.
	CandidateCounts(ctx context.Context, catalogRevision, policyRevision string, since time.Time) ([]CandidateCount, error)
	// CandidatesOf returns the rows of the decisions ids, by decision id.
	CandidatesOf(ctx context.Context, ids []string) (map[string]*Candidate, error)
}
