package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/gatedhq/gated/internal/audit"
	"github.com/gatedhq/gated/internal/keyset"
	"github.com/gatedhq/gated/internal/postgres"
	"github.com/gatedhq/gated/internal/route"
)

// pgStore is the audit.Store of the PostgreSQL sink's table.
type pgStore struct {
	pool *pgxpool.Pool
}

// NewStore reads the decisions stored in db.
func NewStore(db *postgres.DB) audit.Store { return &pgStore{pool: db.Pool()} }

// Close does nothing: the pool is the DB's, closed by whoever opened it.
func (s *pgStore) Close() {}

var selectRecords = "SELECT " + columnList + " FROM audit_decisions"

func (s *pgStore) Get(ctx context.Context, id string) (*audit.Record, error) {
	rec := new(audit.Record)
	err := s.pool.QueryRow(ctx, selectRecords+" WHERE decision_id = $1 LIMIT 1", id).Scan(scanTargets(rec)...)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, audit.ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("get decision: %w", err)
	}
	return rec, nil
}

// List returns decisions newest first (decided_at, then decision_id, both
// descending), paging by keyset so a page costs the same however deep it is.
func (s *pgStore) List(ctx context.Context, f audit.Filter) (audit.Page, error) {
	q := keyset.Query{TimeColumn: "decided_at", IDColumn: "decision_id"}
	if f.Route != "" {
		if _, err := route.ParseRoute(f.Route); err != nil {
			return audit.Page{}, fmt.Errorf("%w: %w", audit.ErrBadFilter, err)
		}
		q.Where("final_route = $%d", f.Route)
	}
	if f.ToolName != "" {
		q.Where("tool_name = $%d", f.ToolName)
	}
	// Neither has an index of its own (each costs write throughput): they
	// narrow a scan the time range, route or tool bounds.
	if f.AgentID != "" {
		q.Where("agent_id = $%d", f.AgentID)
	}
	if f.Blocker != "" {
		q.Where("hard_blockers @> ARRAY[$%d::text]", f.Blocker)
	}
	if !f.Since.IsZero() {
		q.Where("decided_at >= $%d", f.Since)
	}
	if !f.Until.IsZero() {
		if !f.Since.IsZero() && !f.Until.After(f.Since) {
			return audit.Page{}, fmt.Errorf("%w: until %s is not after since %s", audit.ErrBadFilter,
				f.Until.Format(time.RFC3339), f.Since.Format(time.RFC3339))
		}
		q.Where("decided_at < $%d", f.Until)
	}
	if f.Cursor != "" {
		c, err := keyset.Decode(f.Cursor, nil)
		if err != nil {
			return audit.Page{}, fmt.Errorf("%w: %w", audit.ErrBadFilter, err)
		}
		q.Before(c)
	}
	limit, ok := keyset.Limit(f.Limit, audit.DefaultLimit, audit.MaxLimit)
	if !ok {
		return audit.Page{}, fmt.Errorf("%w: limit %d is negative", audit.ErrBadFilter, f.Limit)
	}
	sql, args := q.SQL(selectRecords, limit)
	rows, err := s.pool.Query(ctx, sql, args...)
	if err != nil {
		return audit.Page{}, fmt.Errorf("list decisions: %w", err)
	}
	recs, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (*audit.Record, error) {
		rec := new(audit.Record)
		return rec, row.Scan(scanTargets(rec)...)
	})
	if err != nil {
		return audit.Page{}, fmt.Errorf("list decisions: %w", err)
	}
	var p audit.Page
	p.Records, p.NextCursor = keyset.Trim(recs, limit, func(r *audit.Record) (time.Time, string) { return r.DecidedAt, r.DecisionID })
	if p.Records == nil {
		p.Records = []*audit.Record{}
	}
	if p.Outcomes, err = s.outcomeStatuses(ctx, p.Records); err != nil {
		return audit.Page{}, err
	}
	ids := make([]string, len(p.Records))
	for i, r := range p.Records {
		ids[i] = r.DecisionID
	}
	if p.Candidates, err = s.CandidatesOf(ctx, ids); err != nil {
		return audit.Page{}, err
	}
	return p, nil
}
