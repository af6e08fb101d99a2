// Package postgres stores approvals in PostgreSQL, the only state replicas
// of gated share. Store creates, lists, decides and spends approvals; the
// rules it applies are internal/approval's (CanDecide, CheckUse), checked
// on the row locked FOR UPDATE, so two replicas deciding or spending one
// approval at once cannot both succeed. Consume stores the consuming
// decision's audit record in the same transaction that spends the
// approval: both commit, or neither.
//
// Every change to a row notifies the channel gated_approvals with its id (a
// trigger, migrations/00003_approvals.sql). Each Store keeps one connection
// listening on it, so Wait (long polls) and Subscribe (the event stream)
// learn of a change made by any replica.
package postgres

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/gatedhq/gated/internal/approval"
	"github.com/gatedhq/gated/internal/audit"
	auditpg "github.com/gatedhq/gated/internal/audit/postgres"
	"github.com/gatedhq/gated/internal/keyset"
	"github.com/gatedhq/gated/internal/postgres"
	"github.com/gatedhq/gated/internal/redact"
	"github.com/gatedhq/gated/internal/route"
)

// List's page sizes.
const (
	DefaultLimit = 50
	MaxLimit     = 200
)

// MaxReason is how many characters (runes) of a decision's reason are
// kept; the rest is cut.
const MaxReason = 1000

// uniqueViolation is PostgreSQL's SQLSTATE for a duplicate key.
const uniqueViolation = "23505"

// Store is the PostgreSQL approval store of one replica.
type Store struct {
	pool *pgxpool.Pool
	l    *listener

	closeOnce sync.Once
	stop      context.CancelFunc
	// waiting, when set (by tests), is called each time a Wait has read
	// the approval and is about to block.
	waiting func(id string)
}

// New is the approval store on db; it starts the listener, which keeps
// trying while the database is away.
func New(db *postgres.DB) *Store {
	ctx, stop := context.WithCancel(context.Background())
	s := &Store{pool: db.Pool(), l: newListener(db.ConnConfig(listenerName)), stop: stop}
	go s.l.run(ctx)
	return s
}

// Close stops the listener and ends every subscription; the pool is the
// DB's, closed by whoever opened it. Waits still in progress return the
// approval as last read.
func (s *Store) Close() {
	s.closeOnce.Do(func() {
		s.stop()
		<-s.l.done
	})
}

// validID reports whether id is a UUID in its canonical form, the only
// form Create stores. Anything else is not looked up: it cannot match, and
// bytes PostgreSQL would reject as text must not turn "not found" into an
// error.
func validID(id string) bool {
	u, err := uuid.Parse(id)
	return err == nil && u.String() == id
}

// columns are the approvals table's, in the order values writes and
// scanApproval reads them. listedColumns leave out the masked arguments
// (up to 256 KiB each), which only Get reads: a list of 200 approvals does
// not carry them.
const (
	listedColumns = `id, status, digest, created_at, expires_at, decided_at, used_at,
	requester_token_name, requester_principals, agent_id, tool_name, tool_category, risk_domain,
	action_id, route, findings, catalog_revision, policy_revision,
	approver_token_name, approver_principals, reason, required_approvers,
	decision_id, consumed_by, preview`
	columns = listedColumns + ", masked_arguments"
)

var (
	insertApproval = "INSERT INTO approvals (" + columns + ") VALUES (" + params(26) + ")"
	selectApproval = "SELECT " + columns + " FROM approvals"
	selectListed   = "SELECT " + listedColumns + ", NULL::json FROM approvals"
)

func params(n int) string {
	p := make([]string, n)
	for i := range p {
		p[i] = fmt.Sprintf("$%d", i+1)
	}
	return strings.Join(p, ", ")
}

// values is what Create writes for a. Lists go in empty rather than nil
// (the columns are NOT NULL; no approver has no principals either).
func values(a *approval.Approval) []any {
	return []any{a.ID, string(a.Status), a.Digest, a.CreatedAt, a.ExpiresAt, nullTime(a.DecidedAt), nullTime(a.UsedAt),
		a.Requester.TokenName, nonNil(a.Requester.Principals), a.AgentID, a.ToolName, a.ToolCategory, a.RiskDomain,
		a.ActionID, a.Route, nonNil(a.Findings), a.Revisions.Catalog, a.Revisions.Policy,
		a.Approver.TokenName, nonNil(a.Approver.Principals), a.Reason, nonNil(a.RequiredApprovers),
		a.DecisionID, a.ConsumedBy, a.Preview, a.MaskedArguments}
}

// nullTime stores a zero time, something that has not happened, as NULL.
func nullTime(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t
}

func scanApproval(row pgx.Row) (*approval.Approval, error) {
	var a approval.Approval
	var status string
	var decided, used *time.Time
	err := row.Scan(&a.ID, &status, &a.Digest, &a.CreatedAt, &a.ExpiresAt, &decided, &used,
		&a.Requester.TokenName, &a.Requester.Principals, &a.AgentID, &a.ToolName, &a.ToolCategory, &a.RiskDomain,
		&a.ActionID, &a.Route, &a.Findings, &a.Revisions.Catalog, &a.Revisions.Policy,
		&a.Approver.TokenName, &a.Approver.Principals, &a.Reason, &a.RequiredApprovers,
		&a.DecisionID, &a.ConsumedBy, &a.Preview, &a.MaskedArguments)
	if err != nil {
		return nil, err
	}
	a.Status = approval.Status(status) // the table's CHECK admits only the five
	if decided != nil {
		a.DecidedAt = *decided
	}
	if used != nil {
		a.UsedAt = *used
	}
	normalize(&a)
	return &a, nil
}

// normalize puts a in the form it reads back in: times in UTC to the
// microsecond (PostgreSQL's precision), lists empty rather than nil, and
// an approver with neither name nor principals as no approver at all.
func normalize(a *approval.Approval) {
	for _, t := range []*time.Time{&a.CreatedAt, &a.ExpiresAt, &a.DecidedAt, &a.UsedAt} {
		if !t.IsZero() {
			*t = t.UTC().Truncate(time.Microsecond)
		}
	}
	a.Requester.Principals = nonNil(a.Requester.Principals)
	a.RequiredApprovers = nonNil(a.RequiredApprovers)
	a.Findings = nonNil(a.Findings)
	if a.Approver.TokenName == "" && len(a.Approver.Principals) == 0 {
		a.Approver = approval.Identity{}
	} else {
		a.Approver.Principals = nonNil(a.Approver.Principals)
	}
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// Create stores a new approval. Its ID must be a UUID in canonical form
// (the caller mints a UUIDv7), its status one of the five and its route ask
// or defer. Create normalizes a in place to what Get will return (times in
// UTC to the microsecond, lists empty rather than nil), so the caller's
// copy, sent in the webhook event, says what is stored.
func (s *Store) Create(ctx context.Context, a *approval.Approval) error {
	if a == nil {
		return errors.New("an approval cannot be stored: there is none")
	}
	if !validID(a.ID) {
		return fmt.Errorf("the approval %q cannot be stored: its id is not a UUID in canonical form", a.ID)
	}
	if _, err := approval.ParseStatus(string(a.Status)); err != nil {
		return fmt.Errorf("the approval %s cannot be stored: %w", a.ID, err)
	}
	if a.Route != route.Ask.String() && a.Route != route.Defer.String() {
		return fmt.Errorf("the approval %s cannot be stored: its route %q is neither ask nor defer", a.ID, a.Route)
	}
	if a.CreatedAt.IsZero() || a.ExpiresAt.IsZero() {
		return fmt.Errorf("the approval %s cannot be stored: it needs a creation and an expiry time", a.ID)
	}
	normalize(a)
	if _, err := s.pool.Exec(ctx, insertApproval, values(a)...); err != nil {
		if pgErr, ok := errors.AsType[*pgconn.PgError](err); ok && pgErr.Code == uniqueViolation {
			return fmt.Errorf("the approval %s cannot be stored: an approval with this id exists already", a.ID)
		}
		return fmt.Errorf("the approval %s cannot be stored: %w", a.ID, err)
	}
	return nil
}

// Get returns the approval id as stored, or approval.ErrNotFound. Its status is the
// stored one: a pending approval past its expiry reads pending until
// ExpireDue marks it, though neither Decide nor Consume will take it.
func (s *Store) Get(ctx context.Context, id string) (*approval.Approval, error) {
	if !validID(id) {
		return nil, approval.ErrNotFound
	}
	a, err := scanApproval(s.pool.QueryRow(ctx, selectApproval+" WHERE id = $1", id))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, approval.ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("the approval %s cannot be read: %w", id, err)
	}
	return a, nil
}

// FindOpen returns the approval a call with digest, asked for by
// requester, would use or be offered again: of its approvals still open at
// now (pending or approved, unused, not past expiry), an approved one
// before a pending one, the newest first; nil when there is none. A hook
// that cannot carry an evidence ref retries by sending the same call, and
// this is how gated finds the approval it asked for
// (migrations/00009_approval_open_digest.sql indexes it).
func (s *Store) FindOpen(ctx context.Context, digest string, requester approval.Identity, now time.Time) (*approval.Approval, error) {
	a, err := scanApproval(s.pool.QueryRow(ctx, selectApproval+` WHERE digest = $1 AND requester_token_name = $2
		AND requester_principals = $3 AND status IN ('pending', 'approved') AND expires_at > $4 AND used_at IS NULL
		ORDER BY status = 'approved' DESC, created_at DESC, id DESC LIMIT 1`,
		digest, requester.TokenName, nonNil(requester.Principals), now))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("the open approvals of a call cannot be read: %w", err)
	}
	return a, nil
}

// List returns approvals newest first (created_at, then id, both
// descending), all of them or those with status, limit to a page: 0 means
// DefaultLimit, and more than MaxLimit is cut to MaxLimit. before is ""
// for the first page, else the cursor the previous page returned; the
// cursor returned is "" on the last page. Paging is by keyset, so a page
// costs the same however deep it is. Bad arguments wrap approval.ErrBadFilter. The
// approvals listed have no MaskedArguments: Get reads them.
func (s *Store) List(ctx context.Context, status approval.Status, limit int, before string) ([]approval.Approval, string, error) {
	q := keyset.Query{TimeColumn: "created_at", IDColumn: "id"}
	if status != "" {
		if _, err := approval.ParseStatus(string(status)); err != nil {
			return nil, "", fmt.Errorf("%w: %w", approval.ErrBadFilter, err)
		}
		q.Where("status = $%d", string(status))
	}
	if before != "" {
		c, err := keyset.Decode(before, validID)
		if err != nil {
			return nil, "", fmt.Errorf("%w: %w", approval.ErrBadFilter, err)
		}
		q.Before(c)
	}
	size, ok := keyset.Limit(limit, DefaultLimit, MaxLimit)
	if !ok {
		return nil, "", fmt.Errorf("%w: the limit %d is negative", approval.ErrBadFilter, limit)
	}
	sql, args := q.SQL(selectListed, size)
	rows, err := s.pool.Query(ctx, sql, args...)
	if err != nil {
		return nil, "", fmt.Errorf("the approvals cannot be listed: %w", err)
	}
	page, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (approval.Approval, error) {
		a, err := scanApproval(row)
		if err != nil {
			return approval.Approval{}, err
		}
		return *a, nil
	})
	if err != nil {
		return nil, "", fmt.Errorf("the approvals cannot be listed: %w", err)
	}
	page, next := keyset.Trim(page, size, func(a approval.Approval) (time.Time, string) { return a.CreatedAt, a.ID })
	return page, next, nil
}

// lock reads approval id FOR UPDATE: whoever else decides, spends or
// expires it waits until this transaction ends, then sees what it left.
func lock(ctx context.Context, tx pgx.Tx, id string) (*approval.Approval, error) {
	a, err := scanApproval(tx.QueryRow(ctx, selectApproval+" WHERE id = $1 FOR UPDATE", id))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, approval.ErrNotFound
	}
	return a, err
}

// Decide approves (approve true) or denies approval id for approver at now,
// with reason (trimmed, and cut to MaxReason characters). approval.CanDecide
// rules on the row as locked, so of two approvers deciding at once the
// second is refused approval_decided. It returns the decided approval, or
// the refusal as an *approval.Error (approval.ErrNotFound for an unknown id), in
// which case nothing changed.
func (s *Store) Decide(ctx context.Context, id string, approver approval.Identity, approve bool, reason string, now time.Time) (*approval.Approval, error) {
	if !validID(id) {
		return nil, approval.ErrNotFound
	}
	var decided *approval.Approval
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		a, err := lock(ctx, tx, id)
		if err != nil {
			return err
		}
		if err := approval.CanDecide(a, approver, now); err != nil {
			return err
		}
		a.Status = approval.StatusDenied
		if approve {
			a.Status = approval.StatusApproved
		}
		a.DecidedAt, a.Approver, a.Reason = now, approver, cleanReason(reason)
		normalize(a)
		_, err = tx.Exec(ctx, `UPDATE approvals SET status = $2, decided_at = $3,
			approver_token_name = $4, approver_principals = $5, reason = $6 WHERE id = $1`,
			id, string(a.Status), a.DecidedAt, a.Approver.TokenName, nonNil(a.Approver.Principals), a.Reason)
		decided = a
		return err
	})
	if err != nil {
		return nil, refusedOr(err, "the approval %s cannot be decided: %w", id)
	}
	return decided, nil
}

// cleanReason is reason as stored: valid UTF-8 without NUL (which
// PostgreSQL text cannot hold), trimmed, any secret an approver pasted
// masked (it is shown and sent to the webhook), at most MaxReason
// characters.
func cleanReason(reason string) string {
	r := redact.Mask(strings.TrimSpace(strings.ReplaceAll(strings.ToValidUTF8(reason, "\uFFFD"), "\x00", "")))
	if utf8.RuneCountInString(r) <= MaxReason {
		return r
	}
	n := 0
	for i := range r {
		if n == MaxReason {
			return strings.TrimSpace(r[:i])
		}
		n++
	}
	return r
}

// Consume spends approval id for the call with digest, made by requester
// at now, and stores rec, the audit record of the decision that spends it,
// in one transaction. approval.CheckUse rules on the row as locked FOR
// UPDATE, so of any number of concurrent retries with one approval exactly
// one passes; the rest wait for its commit and are refused approval_used.
// The approval is marked used, consumed by rec.DecisionID, at now; rec is
// inserted with audit/postgres.InsertRecords, and must carry this
// approval's id as its ApprovalID (Consume sets it when empty, refused or
// not: the decision tried to use this approval either way).
//
// Both commit or neither: on a refusal (an *approval.Error, approval.ErrNotFound for
// an unknown id) nothing is written, and when the record cannot be stored
// (its decision is stored already, its day has no partition, the database
// failed) the approval stays as it was. The partition of rec's day must
// exist; a running audit Sink keeps them three days ahead.
func (s *Store) Consume(ctx context.Context, id, digest string, requester approval.Identity, now time.Time, rec *audit.Record) (*approval.Approval, error) {
	if !validID(id) {
		return nil, approval.ErrNotFound
	}
	switch {
	case rec == nil || rec.DecisionID == "":
		return nil, fmt.Errorf("the approval %s cannot be used: the decision that uses it has no audit record", id)
	case rec.ApprovalID == "":
		rec.ApprovalID = id
	case rec.ApprovalID != id:
		return nil, fmt.Errorf("the approval %s cannot be used: the audit record of decision %s names approval %s", id, rec.DecisionID, rec.ApprovalID)
	}
	// The record's day may have no partition yet (a fresh database, before
	// the audit sink's first maintenance): make it outside the transaction,
	// which then holds only the row lock.
	if err := auditpg.EnsurePartition(ctx, s.pool, rec.DecidedAt); err != nil {
		return nil, fmt.Errorf("the approval %s cannot be used: %w", id, err)
	}
	var used *approval.Approval
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		a, err := lock(ctx, tx, id)
		if err != nil {
			return err
		}
		if err := approval.CheckUse(a, digest, requester, now); err != nil {
			return err
		}
		a.Status, a.ConsumedBy, a.UsedAt = approval.StatusUsed, rec.DecisionID, now
		normalize(a)
		if _, err := tx.Exec(ctx, "UPDATE approvals SET status = $2, consumed_by = $3, used_at = $4 WHERE id = $1",
			id, string(a.Status), a.ConsumedBy, a.UsedAt); err != nil {
			return err
		}
		if err := auditpg.InsertRecords(ctx, tx, []*audit.Record{rec}); err != nil {
			return err
		}
		used = a
		return nil
	})
	if err != nil {
		return nil, refusedOr(err, "the approval %s cannot be used: %w", id)
	}
	return used, nil
}

// ExpireDue marks expired every pending or approved approval whose expiry
// is at or before now, and returns how many it marked. Rows are kept, for
// the trail, until Purge. Run it periodically: until it runs, Get reports
// such an approval by its stored status (Decide and Consume refuse it
// either way), and Wait does not return for its expiry.
func (s *Store) ExpireDue(ctx context.Context, now time.Time) (int, error) {
	tag, err := s.pool.Exec(ctx, `UPDATE approvals SET status = 'expired'
		WHERE status IN ('pending', 'approved') AND expires_at <= $1`, now)
	if err != nil {
		return 0, fmt.Errorf("the due approvals cannot be marked expired: %w", err)
	}
	return int(tag.RowsAffected()), nil
}

// Purge deletes the approvals that expired, and were decided and used if
// at all, before before, and returns how many. Call it with now minus the
// audit retention, so an approval lasts as long as the decisions that
// link to it.
func (s *Store) Purge(ctx context.Context, before time.Time) (int, error) {
	// Only final approvals go: one still pending or approved is first
	// marked expired (ExpireDue), so that its end is counted and seen.
	tag, err := s.pool.Exec(ctx, `DELETE FROM approvals WHERE expires_at < $1
		AND status IN ('expired', 'denied', 'used')
		AND (decided_at IS NULL OR decided_at < $1) AND (used_at IS NULL OR used_at < $1)`, before)
	if err != nil {
		return 0, fmt.Errorf("the approvals past retention cannot be purged: %w", err)
	}
	return int(tag.RowsAffected()), nil
}

// refusedOr is err as Decide and Use return it: an approval.Error (a
// refusal the rules gave) as it is, any other failure in the words of
// format, which holds the approval's id and then err.
func refusedOr(err error, format, id string) error {
	if _, refused := errors.AsType[*approval.Error](err); refused {
		return err
	}
	return fmt.Errorf(format, id, err)
}
