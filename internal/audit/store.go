package audit

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/gatedhq/gated/internal/route"
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
	Since    time.Time // decided_at >= Since
	Until    time.Time // decided_at < Until
	Limit    int       // 0 means DefaultLimit; above MaxLimit is capped
	Cursor   string    // Page.NextCursor of the previous page
}

// Page is one page of decisions, newest first.
type Page struct {
	Records    []*Record `json:"records"`
	NextCursor string    `json:"next_cursor,omitempty"`
}

// Store reads stored decisions back.
type Store interface {
	Get(ctx context.Context, id string) (*Record, error)
	List(ctx context.Context, f Filter) (Page, error)
	Close()
}

type pgStore struct {
	pool *pgxpool.Pool
}

// OpenStore connects to the audit database for reading.
func OpenStore(ctx context.Context, databaseURL string) (Store, error) {
	pool, err := pgxpool.New(ctx, databaseURL)
	if err != nil {
		return nil, fmt.Errorf("audit store: %w", err)
	}
	return &pgStore{pool: pool}, nil
}

func (s *pgStore) Close() { s.pool.Close() }

var selectRecords = "SELECT " + columnList + " FROM audit_decisions"

func (s *pgStore) Get(ctx context.Context, id string) (*Record, error) {
	rec := new(Record)
	err := s.pool.QueryRow(ctx, selectRecords+" WHERE decision_id = $1 LIMIT 1", id).Scan(rec.scanTargets()...)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("get decision: %w", err)
	}
	return rec, nil
}

// cursor is the keyset position after the last record of a page.
type cursor struct {
	T  time.Time `json:"t"`
	ID string    `json:"id"`
}

func encodeCursor(r *Record) string {
	b, _ := json.Marshal(cursor{T: r.DecidedAt, ID: r.DecisionID}) // cannot fail: a time and a string
	return base64.RawURLEncoding.EncodeToString(b)
}

func decodeCursor(s string) (cursor, error) {
	var c cursor
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err == nil {
		err = json.Unmarshal(b, &c)
	}
	if err != nil || c.ID == "" || c.T.IsZero() {
		return c, fmt.Errorf("%w: cursor %q is not one this service issued", ErrBadFilter, s)
	}
	return c, nil
}

// List returns decisions newest first (decided_at, then decision_id, both
// descending), paging by keyset so a page costs the same however deep it is.
func (s *pgStore) List(ctx context.Context, f Filter) (Page, error) {
	var where []string
	var args []any
	add := func(cond string, v any) {
		args = append(args, v)
		where = append(where, fmt.Sprintf(cond, len(args)))
	}
	if f.Route != "" {
		if _, err := route.ParseRoute(f.Route); err != nil {
			return Page{}, fmt.Errorf("%w: %w", ErrBadFilter, err)
		}
		add("final_route = $%d", f.Route)
	}
	if f.ToolName != "" {
		add("tool_name = $%d", f.ToolName)
	}
	if !f.Since.IsZero() {
		add("decided_at >= $%d", f.Since)
	}
	if !f.Until.IsZero() {
		if !f.Since.IsZero() && !f.Until.After(f.Since) {
			return Page{}, fmt.Errorf("%w: until %s is not after since %s", ErrBadFilter,
				f.Until.Format(time.RFC3339), f.Since.Format(time.RFC3339))
		}
		add("decided_at < $%d", f.Until)
	}
	if f.Cursor != "" {
		c, err := decodeCursor(f.Cursor)
		if err != nil {
			return Page{}, err
		}
		args = append(args, c.T, c.ID)
		where = append(where, fmt.Sprintf("(decided_at, decision_id) < ($%d, $%d)", len(args)-1, len(args)))
	}
	limit := f.Limit
	switch {
	case limit < 0:
		return Page{}, fmt.Errorf("%w: limit %d is negative", ErrBadFilter, limit)
	case limit == 0:
		limit = DefaultLimit
	case limit > MaxLimit:
		limit = MaxLimit
	}
	q := selectRecords
	if len(where) > 0 {
		q += " WHERE " + strings.Join(where, " AND ")
	}
	args = append(args, limit+1) // one extra row says whether a next page exists
	q += fmt.Sprintf(" ORDER BY decided_at DESC, decision_id DESC LIMIT $%d", len(args))

	rows, err := s.pool.Query(ctx, q, args...)
	if err != nil {
		return Page{}, fmt.Errorf("list decisions: %w", err)
	}
	recs, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (*Record, error) {
		rec := new(Record)
		return rec, row.Scan(rec.scanTargets()...)
	})
	if err != nil {
		return Page{}, fmt.Errorf("list decisions: %w", err)
	}
	p := Page{Records: recs}
	if len(recs) > limit {
		p.Records = recs[:limit]
		p.NextCursor = encodeCursor(p.Records[limit-1])
	}
	if p.Records == nil {
		p.Records = []*Record{}
	}
	return p, nil
}
