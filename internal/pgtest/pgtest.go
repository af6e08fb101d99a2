// Package pgtest gives tests a PostgreSQL database of their own on the real
// server named by GATED_TEST_DATABASE_URL (default: the local one, user
// postgres, trust auth). Each database is dropped when its test ends.
package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/gatedhq/gated/internal/postgres"
)

// DefaultURL is the maintenance database of the local test cluster.
const DefaultURL = "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"

// AdminURL is the maintenance database tests create their databases from.
func AdminURL() string {
	if u := os.Getenv("GATED_TEST_DATABASE_URL"); u != "" {
		return u
	}
	return DefaultURL
}

// WithDatabase returns u with its database replaced by name.
func WithDatabase(t testing.TB, u, name string) string {
	t.Helper()
	p, err := url.Parse(u)
	if err != nil {
		t.Fatalf("test database url: %v", err)
	}
	p.Path = "/" + name
	return p.String()
}

// Exec runs one statement on the maintenance database.
func Exec(t testing.TB, sql string, args ...any) {
	t.Helper()
	ExecOn(t, AdminURL(), sql, args...)
}

// Fresh creates an empty database for the test, dropped (with its
// connections) when the test ends, and returns its name and URL.
func Fresh(t testing.TB) (name, dbURL string) {
	t.Helper()
	dbURL, create := Later(t)
	create()
	return dbName(dbURL), dbURL
}

// Later names a database that does not exist yet — gated started against
// it finds PostgreSQL "down" for it alone — and returns the function that
// creates it. It is dropped when the test ends.
func Later(t testing.TB) (dbURL string, create func()) {
	t.Helper()
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	name := "gated_test_" + hex.EncodeToString(b)
	t.Cleanup(func() { Exec(t, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)") })
	return WithDatabase(t, AdminURL(), name), func() { Exec(t, "CREATE DATABASE "+name) }
}

// Addr is the host:port of the test server, for a fault-injecting proxy
// in front of it.
func Addr(t testing.TB) string {
	t.Helper()
	u, err := url.Parse(AdminURL())
	if err != nil {
		t.Fatal(err)
	}
	if u.Port() == "" {
		return u.Host + ":5432"
	}
	return u.Host
}

// dbName is the database a URL made by WithDatabase names.
func dbName(dbURL string) string {
	u, err := url.Parse(dbURL)
	if err != nil {
		return ""
	}
	return strings.TrimPrefix(u.Path, "/")
}

// QueryInt runs a single-value query on the database at dbURL.
func QueryInt(t testing.TB, dbURL, sql string, args ...any) int {
	t.Helper()
	ctx := context.Background()
	c, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	var n int
	if err := c.QueryRow(ctx, sql, args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return n
}

// ExecOn runs one statement on the database at dbURL.
func ExecOn(t testing.TB, dbURL, sql string, args ...any) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		t.Fatalf("connect to the test PostgreSQL (set GATED_TEST_DATABASE_URL): %v", err)
	}
	defer c.Close(ctx)
	if _, err := c.Exec(ctx, sql, args...); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
}

// DB is the pool gated would share on the database at dbURL, closed when
// the test ends (after what the test closes in its own cleanups).
func DB(t testing.TB, dbURL string) *postgres.DB {
	t.Helper()
	db, err := postgres.Open(context.Background(), dbURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(db.Close)
	return db
}
