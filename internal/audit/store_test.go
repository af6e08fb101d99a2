package audit

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/gatedhq/gated/internal/pgtest"
)

func TestMigrateUpStatusDown(t *testing.T) {
	_, u := pgtest.Fresh(t)
	ctx := context.Background()
	var out bytes.Buffer
	if err := Migrate(ctx, u, "status", &out); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "00001_audit_decisions.sql pending") {
		t.Fatalf("status before up: %q", out.String())
	}
	// Replicas starting together: the advisory lock lets one apply, the rest see nothing to do.
	var wg sync.WaitGroup
	errs := make([]error, 3)
	outs := make([]bytes.Buffer, 3)
	for i := range errs {
		wg.Go(func() { errs[i] = Migrate(ctx, u, "up", &outs[i]) })
	}
	wg.Wait()
	applied := 0
	for i, err := range errs {
		if err != nil {
			t.Fatalf("concurrent up %d: %v", i, err)
		}
		if strings.Contains(outs[i].String(), "up 00001_audit_decisions.sql") {
			applied++
		}
	}
	if applied != 1 {
		t.Fatalf("migration applied %d times", applied)
	}
	if n := queryInt(t, u, "SELECT count(*) FROM pg_class WHERE relname = 'audit_decisions'"); n != 1 {
		t.Fatal("no audit_decisions table after up")
	}
	out.Reset()
	Migrate(ctx, u, "status", &out)
	if !strings.Contains(out.String(), "00001_audit_decisions.sql applied") {
		t.Fatalf("status after up: %q", out.String())
	}
	if err := Migrate(ctx, u, "down", io.Discard); err != nil {
		t.Fatal(err)
	}
	if n := queryInt(t, u, "SELECT count(*) FROM pg_class WHERE relname = 'audit_decisions'"); n != 0 {
		t.Fatal("audit_decisions still there after down")
	}
	out.Reset()
	if err := Migrate(ctx, u, "down", &out); err != nil || !strings.Contains(out.String(), "nothing to roll back") {
		t.Fatalf("down with nothing applied: %v %q", err, out.String())
	}
	if err := Migrate(ctx, u, "sideways", &out); err == nil {
		t.Fatal("unknown direction accepted")
	}
	if err := Migrate(ctx, "postgres://postgres@127.0.0.1:1/x?sslmode=disable&connect_timeout=1", "up", &out); err == nil {
		t.Fatal("unreachable database accepted")
	}
}

func openSink(t *testing.T, u string, retention time.Duration) *pgSink {
	t.Helper()
	s, err := openPGSink(context.Background(), Config{DatabaseURL: u, Retention: retention, Logger: zap.NewNop()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.close() })
	return s
}

func partitions(t *testing.T, u string) []string {
	t.Helper()
	var names []string
	ctx := context.Background()
	s, err := OpenStore(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
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
	_, u := migratedDB(t)
	ctx := context.Background()
	s := openSink(t, u, 10*24*time.Hour)
	now := time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC)
	if err := s.maintain(ctx, now); err != nil {
		t.Fatal(err)
	}
	want := []string{"audit_decisions_p20261119", "audit_decisions_p20261120", "audit_decisions_p20261121",
		"audit_decisions_p20261122", "audit_decisions_p20261123"}
	if got := partitions(t, u); !reflect.DeepEqual(got, want) {
		t.Fatalf("partitions ahead: %v, want %v", got, want)
	}
	// A record for a day with no partition (a spool replayed weeks later)
	// gets its partition on demand instead of being lost.
	old := testRecord(1, time.Date(2026, 11, 2, 8, 0, 0, 0, time.UTC))
	fresh := testRecord(2, now)
	if err := s.insert(ctx, []*Record{old, fresh}); err != nil {
		t.Fatal(err)
	}
	if n := queryInt(t, u, "SELECT count(*) FROM audit_decisions_p20261102"); n != 1 {
		t.Fatalf("old record: %d rows in its on-demand partition", n)
	}
	// Retention 10 days at Nov 20 12:00: Nov 2 ends before the cutoff and goes,
	// Nov 10 (ends Nov 11 00:00, after the cutoff Nov 10 12:00) stays.
	if err := s.insert(ctx, []*Record{testRecord(3, time.Date(2026, 11, 10, 1, 0, 0, 0, time.UTC))}); err != nil {
		t.Fatal(err)
	}
	if err := s.maintain(ctx, now); err != nil {
		t.Fatal(err)
	}
	got := partitions(t, u)
	if strings.Contains(strings.Join(got, ","), "p20261102") || !strings.Contains(strings.Join(got, ","), "p20261110") {
		t.Fatalf("after retention: %v", got)
	}
	if n := queryInt(t, u, "SELECT count(*) FROM audit_decisions"); n != 2 {
		t.Fatalf("%d rows after retention, want 2", n)
	}
	// Retention dropped a partition this sink had cached: inserting into
	// that day again recreates it rather than failing.
	if err := s.insert(ctx, []*Record{testRecord(4, time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC))}); err != nil {
		t.Fatalf("insert after retention dropped the day: %v", err)
	}
}

func TestInsertIsIdempotent(t *testing.T) {
	_, u := migratedDB(t)
	ctx := context.Background()
	s := openSink(t, u, 0)
	now := time.Now()
	batch := []*Record{testRecord(1, now), testRecord(2, now)}
	for range 3 {
		if err := s.insert(ctx, batch); err != nil {
			t.Fatal(err)
		}
	}
	// A batch overlapping what is stored adds only the new record.
	if err := s.insert(ctx, append(batch, testRecord(3, now))); err != nil {
		t.Fatal(err)
	}
	if n := queryInt(t, u, "SELECT count(*) FROM audit_decisions"); n != 3 {
		t.Fatalf("%d rows, want 3", n)
	}
}

func TestGetAndList(t *testing.T) {
	_, u := migratedDB(t)
	ctx := context.Background()
	s := openSink(t, u, 0)
	base := time.Now().UTC().Truncate(time.Second)
	var recs []*Record
	for i := range 25 {
		// pairs share a timestamp, so the id must break ties in the keyset
		recs = append(recs, testRecord(i, base.Add(-time.Duration(i/2)*time.Minute)))
	}
	st := storeWith(t, s, u, recs)

	got, err := st.Get(ctx, recs[7].DecisionID)
	if err != nil {
		t.Fatal(err)
	}
	got.DecidedAt = got.DecidedAt.UTC()
	if !reflect.DeepEqual(got, recs[7]) {
		t.Fatalf("round trip:\n got %+v\nwant %+v", got, recs[7])
	}
	if _, err := st.Get(ctx, "no-such-id"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("unknown id: %v", err)
	}

	// Walk every page: newest first, each record once.
	var seen []string
	cur := ""
	for pages := 0; ; pages++ {
		p, err := st.List(ctx, Filter{Limit: 4, Cursor: cur})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range p.Records {
			seen = append(seen, r.DecisionID)
		}
		if p.NextCursor == "" {
			break
		}
		if pages > 10 {
			t.Fatal("pagination does not end")
		}
		cur = p.NextCursor
	}
	var want []string
	for i := range 25 {
		// same minute: dec-(2k+1) > dec-(2k), so the odd one comes first
		j := i ^ 1
		if j >= 25 {
			j = i
		}
		want = append(want, recs[j].DecisionID)
	}
	if !reflect.DeepEqual(seen, want) {
		t.Fatalf("pages:\n got %v\nwant %v", seen, want)
	}

	check := func(f Filter, wantN int, pred func(*Record) bool) {
		t.Helper()
		p, err := st.List(ctx, f)
		if err != nil {
			t.Fatal(err)
		}
		if len(p.Records) != wantN {
			t.Fatalf("%+v: %d records, want %d", f, len(p.Records), wantN)
		}
		for _, r := range p.Records {
			if !pred(r) {
				t.Fatalf("%+v: record %s does not match", f, r.DecisionID)
			}
		}
	}
	check(Filter{Route: "refuse", Limit: 100}, 8, func(r *Record) bool { return r.FinalRoute == "refuse" })
	check(Filter{ToolName: "get_weather", Route: "accept"}, 4, func(r *Record) bool {
		return r.ToolName == "get_weather" && r.FinalRoute == "accept"
	})
	since, until := base.Add(-3*time.Minute), base.Add(-time.Minute)
	check(Filter{Since: since, Until: until}, 4, func(r *Record) bool {
		return !r.DecidedAt.Before(since) && r.DecidedAt.Before(until)
	})
	check(Filter{}, 25, func(*Record) bool { return true })
	check(Filter{Limit: MaxLimit + 1000}, 25, func(*Record) bool { return true })
	check(Filter{Route: "ask", ToolName: "nope"}, 0, func(*Record) bool { return false })

	for name, f := range map[string]Filter{
		"route":       {Route: "maybe"},
		"cursor":      {Cursor: "not-a-cursor"},
		"cursor json": {Cursor: "e30"}, // base64 of {}
		"limit":       {Limit: -1},
		"range":       {Since: until, Until: since},
	} {
		if _, err := st.List(ctx, f); !errors.Is(err, ErrBadFilter) {
			t.Errorf("%s: got %v, want ErrBadFilter", name, err)
		}
	}
}

func TestListDefaultLimit(t *testing.T) {
	_, u := migratedDB(t)
	ctx := context.Background()
	s := openSink(t, u, 0)
	now := time.Now()
	var recs []*Record
	for i := range DefaultLimit + 5 {
		recs = append(recs, testRecord(i, now))
	}
	st := storeWith(t, s, u, recs)
	p, err := st.List(ctx, Filter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Records) != DefaultLimit || p.NextCursor == "" {
		t.Fatalf("default page: %d records, cursor %q", len(p.Records), p.NextCursor)
	}
	if want := fmt.Sprintf("dec-%06d", DefaultLimit+4); p.Records[0].DecisionID != want {
		t.Fatalf("first record %s, want %s", p.Records[0].DecisionID, want)
	}
}

// storeWith inserts recs through the sink and opens a Store on the database.
func storeWith(t *testing.T, s *pgSink, u string, recs []*Record) Store {
	t.Helper()
	ctx := context.Background()
	if err := s.insert(ctx, recs); err != nil {
		t.Fatal(err)
	}
	st, err := OpenStore(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(st.Close)
	return st
}
