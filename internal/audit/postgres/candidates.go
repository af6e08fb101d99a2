package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/gatedhq/gated/internal/audit"
	"github.com/gatedhq/gated/internal/keyset"
	"github.com/gatedhq/gated/internal/postgres"
)

// NewCandidates keeps and reads the candidate's rows in db
// (audit_candidate_decisions).
func NewCandidates(db *postgres.DB) audit.CandidateStore { return &pgStore{pool: db.Pool()} }

const candidateColumns = "decision_id, decided_at, tool_name, token_name, principals, live_route, route, hard_blockers, catalog_revision, policy_revision, direction, recorded_at"

func candidateTargets(c *audit.Candidate) []any {
	return []any{&c.DecisionID, &c.DecidedAt, &c.ToolName, &c.TokenName, &c.Principals, &c.LiveRoute, &c.Route,
		&c.HardBlockers, &c.CatalogRevision, &c.PolicyRevision, &c.Direction, &c.RecordedAt}
}

func emptyIfNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// WriteCandidates inserts the rows in one statement. A decision's row
// already there (a spooled decision decided again after a restart cannot
// be: the candidate follows live decisions only) is kept.
func (s *pgStore) WriteCandidates(ctx context.Context, cs []*audit.Candidate) error {
	if len(cs) == 0 {
		return nil
	}
	b := &pgx.Batch{}
	for _, c := range cs {
		b.Queue("INSERT INTO audit_candidate_decisions ("+candidateColumns+") VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12) ON CONFLICT (decision_id) DO NOTHING",
			c.DecisionID, c.DecidedAt, c.ToolName, c.TokenName, emptyIfNil(c.Principals), c.LiveRoute, c.Route,
			emptyIfNil(c.HardBlockers), c.CatalogRevision, c.PolicyRevision, c.Direction, c.RecordedAt)
	}
	if err := s.pool.SendBatch(ctx, b).Close(); err != nil {
		return fmt.Errorf("write candidate decisions: %w", err)
	}
	return nil
}

// Disagreements lists the rows whose route differs from the live one,
// newest first, by keyset.
func (s *pgStore) Disagreements(ctx context.Context, f audit.CandidateFilter) (audit.CandidatePage, error) {
	q := keyset.Query{TimeColumn: "decided_at", IDColumn: "decision_id"}
	switch f.Direction {
	case "":
		q.Where("direction <> $%d", audit.DirectionSame)
	case audit.DirectionWider, audit.DirectionNarrower:
		q.Where("direction = $%d", f.Direction)
	default:
		return audit.CandidatePage{}, fmt.Errorf("%w: direction %q is neither wider nor narrower", audit.ErrBadFilter, f.Direction)
	}
	if f.ToolName != "" {
		q.Where("tool_name = $%d", f.ToolName)
	}
	if f.Principal != "" {
		q.Where("principals @> ARRAY[$%d::text]", f.Principal)
	}
	if f.Cursor != "" {
		c, err := keyset.Decode(f.Cursor, nil)
		if err != nil {
			return audit.CandidatePage{}, fmt.Errorf("%w: %w", audit.ErrBadFilter, err)
		}
		q.Before(c)
	}
	limit, ok := keyset.Limit(f.Limit, audit.DefaultLimit, audit.MaxLimit)
	if !ok {
		return audit.CandidatePage{}, fmt.Errorf("%w: limit %d is negative", audit.ErrBadFilter, f.Limit)
	}
	sql, args := q.SQL("SELECT "+candidateColumns+" FROM audit_candidate_decisions", limit)
	rows, err := s.pool.Query(ctx, sql, args...)
	if err != nil {
		return audit.CandidatePage{}, fmt.Errorf("list candidate disagreements: %w", err)
	}
	cs, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (*audit.Candidate, error) {
		c := new(audit.Candidate)
		return c, row.Scan(candidateTargets(c)...)
	})
	if err != nil {
		return audit.CandidatePage{}, fmt.Errorf("list candidate disagreements: %w", err)
	}
	var p audit.CandidatePage
	p.Candidates, p.NextCursor = keyset.Trim(cs, limit, func(c *audit.Candidate) (time.Time, string) { return c.DecidedAt, c.DecisionID })
	if p.Candidates == nil {
		p.Candidates = []*audit.Candidate{}
	}
	return p, nil
}

// CandidateCounts sums a candidate revision's rows by live and candidate
// route.
func (s *pgStore) CandidateCounts(ctx context.Context, catalogRevision, policyRevision string, since time.Time) ([]audit.CandidateCount, error) {
	rows, err := s.pool.Query(ctx, `SELECT live_route, route, direction, count(*) FROM audit_candidate_decisions
		WHERE catalog_revision = $1 AND policy_revision = $2 AND decided_at >= $3
		GROUP BY live_route, route, direction ORDER BY live_route, route`, catalogRevision, policyRevision, since)
	if err != nil {
		return nil, fmt.Errorf("count candidate decisions: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (audit.CandidateCount, error) {
		var c audit.CandidateCount
		return c, row.Scan(&c.Live, &c.Candidate, &c.Direction, &c.Count)
	})
	if err != nil {
		return nil, fmt.Errorf("count candidate decisions: %w", err)
	}
	if out == nil {
		out = []audit.CandidateCount{}
	}
	return out, nil
}

// CandidatesOf looks the rows of ids up by primary key.
func (s *pgStore) CandidatesOf(ctx context.Context, ids []string) (map[string]*audit.Candidate, error) {
	out := map[string]*audit.Candidate{}
	if len(ids) == 0 {
		return out, nil
	}
	rows, err := s.pool.Query(ctx, "SELECT "+candidateColumns+" FROM audit_candidate_decisions WHERE decision_id = ANY($1)", ids)
	if err != nil {
		return nil, fmt.Errorf("read candidate decisions: %w", err)
	}
	cs, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (*audit.Candidate, error) {
		c := new(audit.Candidate)
		return c, row.Scan(candidateTargets(c)...)
	})
	if err != nil {
		return nil, fmt.Errorf("read candidate decisions: %w", err)
	}
	for _, c := range cs {
		out[c.DecisionID] = c
	}
	return out, nil
}
