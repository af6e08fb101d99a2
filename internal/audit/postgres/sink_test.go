package postgres

import (
	"context"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/gatedhq/gated/internal/audit"
	"github.com/gatedhq/gated/internal/audit/audittest"
	"github.com/gatedhq/gated/internal/pgtest"
)

func partitions(t *testing.T, u string) []string {
	t.Helper()
	var names []string
	ctx := context.Background()
	s := NewStore(pgtest.DB(t, u))
	defer s.Close()
	rows, err := s.(*pgStore).pool.Query(ctx, `SELECT c.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
		WHERE i.inhparent = 'audit_decisions'::regclass ORDER BY 1`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var n string
		rows.Scan(&n)
		names = append(names, n)
	}
	return names
}

func TestPartitionsAheadRetentionAndOnDemand(t *testing.T) {
	t.Parallel()
	_, u := migratedDB(t)
	ctx := context.Background()
	s := openSink(t, u, 10*24*time.Hour)
	now := time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC)
	if err := s.Maintain(ctx, now); err != nil {
		t.Fatal(err)
	}
	want := []string{"audit_decisions_p20261119", "audit_decisions_p20261120", "audit_decisions_p20261121",
		"audit_decisions_p20261122", "audit_decisions_p20261123"}
	if got := partitions(t, u); !reflect.DeepEqual(got, want) {
		t.Fatalf("partitions ahead: %v, want %v", got, want)
	}
	// A record for a day with no partition (a spool replayed weeks later)
	// gets its partition on demand instead of being lost.
	old := audittest.Record(1, time.Date(2026, 11, 2, 8, 0, 0, 0, time.UTC))
	fresh := audittest.Record(2, now)
	if err := s.Write(ctx, audit.Batch{Records: []*audit.Record{old, fresh}}); err != nil {
		t.Fatal(err)
	}
	if n := pgtest.QueryInt(t, u, "SELECT count(*) FROM audit_decisions_p20261102"); n != 1 {
		t.Fatalf("old record: %d rows in its on-demand partition", n)
	}
	// Retention 10 days at Nov 20 12:00: Nov 2 ends before the cutoff and goes,
	// Nov 10 (ends Nov 11 00:00, after the cutoff Nov 10 12:00) stays.
	if err := s.Write(ctx, audit.Batch{Records: []*audit.Record{audittest.Record(3, time.Date(2026, 11, 10, 1, 0, 0, 0, time.UTC))}}); err != nil {
		t.Fatal(err)
	}
	if err := s.Maintain(ctx, now); err != nil {
		t.Fatal(err)
	}
	got := partitions(t, u)
	if strings.Contains(strings.Join(got, ","), "p20261102") || !strings.Contains(strings.Join(got, ","), "p20261110") {
		t.Fatalf("after retention: %v", got)
	}
	if n := pgtest.QueryInt(t, u, "SELECT count(*) FROM audit_decisions"); n != 2 {
		t.Fatalf("%d rows after retention, want 2", n)
	}
	// Retention dropped a partition this sink had cached: inserting into
	// that day again recreates it rather than failing.
	if err := s.Write(ctx, audit.Batch{Records: []*audit.Record{audittest.Record(4, time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC))}}); err != nil {
		t.Fatalf("insert after retention dropped the day: %v", err)
	}
}

func TestInsertIsIdempotent(t *testing.T) {
	t.Parallel()
	_, u := migratedDB(t)
	ctx := context.Background()
	s := openSink(t, u, 0)
	now := time.Now()
	batch := []*audit.Record{audittest.Record(1, now), audittest.Record(2, now)}
	for range 3 {
		if err := s.Write(ctx, audit.Batch{Records: batch}); err != nil {
			t.Fatal(err)
		}
	}
	// A batch overlapping what is stored adds only the new record.
	if err := s.Write(ctx, audit.Batch{Records: append(batch, audittest.Record(3, now))}); err != nil {
		t.Fatal(err)
	}
	if n := pgtest.QueryInt(t, u, "SELECT count(*) FROM audit_decisions"); n != 3 {
		t.Fatalf("%d rows, want 3", n)
	}
}
