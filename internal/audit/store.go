package audit

import (
	"context"
	"errors"
	"time"

	"github.com/gatedhq/gated/internal/actionresult"
)

// ErrNotFound is returned by Get for an unknown decision id.
var ErrNotFound = errors.New("decision not found")

// ErrBadFilter wraps every rejected List filter (bad route, cursor, range).
var ErrBadFilter = errors.New("bad decision filter")

// Listing limits: the default page size and the largest one served.
const (
	DefaultLimit = 50
	MaxLimit     = 500
)

// Filter selects decisions for List. Zero fields do not filter.
type Filter struct {
	Route    string    // final route: accept, ask, defer or refuse
	ToolName string    // exact tool name
	AgentID  string    // exact agent_id
	Blocker  string    // a code hard_blockers contains
	Since    time.Time // decided_at >= Since
	Until    time.Time // decided_at < Until
	Limit    int       // 0 means DefaultLimit; above MaxLimit is capped
	Cursor   string    // Page.NextCursor of the previous page
}

// Page is one page of decisions, newest first.
type Page struct {
	Records    []*Record `json:"records"`
	NextCursor string    `json:"next_cursor,omitempty"`
	// Outcomes is the outcome status of each decision on the page that has
	// one, by decision id; readers show it beside the record.
	Outcomes map[string]actionresult.Status `json:"-"`
	// Candidates is what the candidate policy decided for each decision on
	// the page it decided, by decision id.
	Candidates map[string]*Candidate `json:"-"`
}

// Store reads stored decisions back (GET /v1/decisions) and keeps their
// outcomes; internal/audit/postgres implements it. The file sink has none.
type Store interface {
	Get(ctx context.Context, id string) (*Record, error)
	List(ctx context.Context, f Filter) (Page, error)
	// AddOutcome stores o for its decision: ErrNotFound when the decision
	// is not stored, ErrNotYours when o's token is not the decision's,
	// ErrNotExecuted when the decision did not let the tool run, and
	// ErrOutcomeExists when it already has one.
	AddOutcome(ctx context.Context, o *Outcome) error
	// Outcome returns the outcome of decision id, nil when none is stored.
	Outcome(ctx context.Context, id string) (*Outcome, error)
	Close()
}
