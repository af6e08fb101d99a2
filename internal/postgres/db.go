package postgres

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// users is how many parts of gated share the pool (the audit sink, the
// decision store, approvals, the kill switch): each had a pool of its own
// before, and the one pool keeps their sum.
const users = 4

// DB is the one pool of connections a process keeps to its database,
// shared by every part of gated that uses it.
type DB struct {
	pool *pgxpool.Pool
	url  string
}

// Open prepares the pool; it connects on first use, so a database that is
// away does not stop it. Unless the URL sets pool_max_conns the pool holds
// up to four times pgx's default (the greater of 4 and the CPUs), one
// default for each part that shares it.
func Open(ctx context.Context, databaseURL string) (*DB, error) {
	pc, err := pgxpool.ParseConfig(databaseURL)
	if err != nil {
		return nil, fmt.Errorf("the database URL cannot be used: %w", err)
	}
	if !strings.Contains(databaseURL, "pool_max_conns") {
		pc.MaxConns = users * int32(max(4, runtime.NumCPU()))
	}
	pc.AfterConnect = func(ctx context.Context, c *pgx.Conn) error {
		var started time.Time
		if err := c.QueryRow(ctx, "SELECT backend_start FROM pg_stat_activity WHERE pid = pg_backend_pid()").Scan(&started); err != nil {
			return fmt.Errorf("read the session's start: %w", err)
		}
		c.PgConn().CustomData()[backendStart] = started
		return nil
	}
	pool, err := pgxpool.NewWithConfig(ctx, pc)
	if err != nil {
		return nil, fmt.Errorf("the database cannot be used: %w", err)
	}
	return &DB{pool: pool, url: databaseURL}, nil
}

// Pool is the shared pool.
func (db *DB) Pool() *pgxpool.Pool { return db.pool }

// URL is the database's URL, as Open was given it.
func (db *DB) URL() string { return db.url }

// Close closes the pool, once everything that uses it has stopped.
func (db *DB) Close() { db.pool.Close() }

// ConnConfig configures a connection of its own, outside the pool (a
// listener's, or a fresh one when the pool's may all be broken), named
// name in pg_stat_activity unless the URL names its connections.
func (db *DB) ConnConfig(name string) *pgx.ConnConfig {
	c := db.pool.Config().ConnConfig.Copy()
	if name != "" && c.RuntimeParams["application_name"] == "" {
		c.RuntimeParams["application_name"] = name
	}
	return c
}

// backendStart is where a pool connection keeps its server session's
// start time (pgconn's CustomData).
const backendStart = "gated.backend_start"

// SessionStart is the start time of the server session behind a pool
// connection: with its process id it names the session even after the pid
// is reused. ok is false for a connection not made by a DB's pool.
func SessionStart(c *pgconn.PgConn) (started time.Time, ok bool) {
	started, ok = c.CustomData()[backendStart].(time.Time)
	return started, ok
}
