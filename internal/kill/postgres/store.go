// Package postgres stores kill switches in PostgreSQL, the kill list's
// source of truth, which every replica shares. Store sets, lifts and lists
// kills; Watch keeps a replica's kill.Board current: it listens on the
// channel gated_kill_switches (notified by a trigger on every change,
// migrations/00007_kill_switches.sql) and reloads the whole active list on
// each notification and every few seconds besides, so a lost notification
// costs at most one interval and every reload confirms the list.
package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/gatedhq/gated/internal/kill"
	"github.com/gatedhq/gated/internal/postgres"
)

// MaxList bounds a listing that includes lifted and expired kills, newest
// first.
const MaxList = 500

// Store is the PostgreSQL kill switch store of one replica.
type Store struct {
	db   *postgres.DB
	pool *pgxpool.Pool
}

// New is the kill switch store on db.
func New(db *postgres.DB) *Store { return &Store{db: db, pool: db.Pool()} }

// columns are the kill_switches table's, in the order scan reads them.
const columns = `id, scope, value, reason, created_at, created_by, expires_at, lifted_at, lifted_by`

// activeQuery reads the kills that stop calls now.
const activeQuery = `SELECT ` + columns + ` FROM kill_switches
	WHERE lifted_at IS NULL AND (expires_at IS NULL OR expires_at > now())
	ORDER BY created_at, id`

// Create stores k, giving it an id, with CreatedAt set to at. It does not
// check k: the caller does (kill.Kill.Check), with the clock it answers by.
func (s *Store) Create(ctx context.Context, k *kill.Kill, at time.Time) error {
	id, err := uuid.NewV7()
	if err != nil {
		return fmt.Errorf("a kill switch id cannot be made: %w", err)
	}
	k.ID, k.CreatedAt = id.String(), at.UTC().Truncate(time.Microsecond)
	_, err = s.pool.Exec(ctx, `INSERT INTO kill_switches (id, scope, value, reason, created_at, created_by, expires_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7)`,
		k.ID, string(k.Scope), k.Value, k.Reason, k.CreatedAt, k.CreatedBy, nullTime(k.ExpiresAt))
	if err != nil {
		return fmt.Errorf("the kill switch could not be stored: %w", err)
	}
	return nil
}

// Lift marks kill id lifted by token name by at, and returns it.
// kill.ErrNotFound when no kill with this id is active (lifted, expired or
// never set).
func (s *Store) Lift(ctx context.Context, id, by string, at time.Time) (*kill.Kill, error) {
	if u, err := uuid.Parse(id); err != nil || u.String() != id {
		return nil, kill.ErrNotFound
	}
	rows, err := s.pool.Query(ctx, `UPDATE kill_switches SET lifted_at = $2, lifted_by = $3
		WHERE id = $1 AND lifted_at IS NULL AND (expires_at IS NULL OR expires_at > now())
		RETURNING `+columns, id, at.UTC().Truncate(time.Microsecond), by)
	if err != nil {
		return nil, fmt.Errorf("the kill switch could not be lifted: %w", err)
	}
	ks, err := collect(rows)
	if err != nil {
		return nil, fmt.Errorf("the kill switch could not be lifted: %w", err)
	}
	if len(ks) == 0 {
		return nil, kill.ErrNotFound
	}
	return &ks[0], nil
}

// List returns the active kills, oldest first; with all, every kill ever
// set (the MaxList newest), lifted and expired ones included, newest first.
func (s *Store) List(ctx context.Context, all bool) ([]kill.Kill, error) {
	q := activeQuery
	if all {
		q = fmt.Sprintf(`SELECT %s FROM kill_switches ORDER BY created_at DESC, id DESC LIMIT %d`, columns, MaxList)
	}
	rows, err := s.pool.Query(ctx, q)
	if err != nil {
		return nil, fmt.Errorf("the kill switches could not be listed: %w", err)
	}
	ks, err := collect(rows)
	if err != nil {
		return nil, fmt.Errorf("the kill switches could not be listed: %w", err)
	}
	return ks, nil
}

// collect reads every row of rows as a kill. A stored scope this gated
// does not know is an error: listing it as something else could hide it.
func collect(rows pgx.Rows) ([]kill.Kill, error) {
	ks, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (kill.Kill, error) {
		var k kill.Kill
		var scope string
		var expires, lifted *time.Time
		if err := row.Scan(&k.ID, &scope, &k.Value, &k.Reason, &k.CreatedAt, &k.CreatedBy, &expires, &lifted, &k.LiftedBy); err != nil {
			return k, err
		}
		sc, err := kill.ParseScope(scope)
		if err != nil {
			return k, fmt.Errorf("kill switch %s: %w", k.ID, err)
		}
		k.Scope = sc
		k.CreatedAt = k.CreatedAt.UTC()
		if expires != nil {
			k.ExpiresAt = expires.UTC()
		}
		if lifted != nil {
			k.LiftedAt = lifted.UTC()
		}
		return k, nil
	})
	if ks == nil {
		ks = []kill.Kill{}
	}
	return ks, err
}

func nullTime(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}
