package postgres

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/gatedhq/gated/internal/audit"
	"github.com/gatedhq/gated/internal/audit/audittest"
	"github.com/gatedhq/gated/internal/pgtest"
)

func TestGetAndList(t *testing.T) {
	t.Parallel()
	_, u := migratedDB(t)
	ctx := context.Background()
	s := openSink(t, u, 0)
	base := time.Now().UTC().Truncate(time.Second)
	var recs []*audit.Record
	for i := range 25 {
		// pairs share a timestamp, so the id must break ties in the keyset
		recs = append(recs, audittest.Record(i, base.Add(-time.Duration(i/2)*time.Minute)))
	}
	// Every fifth has an agent of its own and one blocker more.
	for i := 0; i < len(recs); i += 5 {
		recs[i].AgentID = "agent-5"
		recs[i].HardBlockers = append(recs[i].HardBlockers, "policy_denied")
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
	if _, err := st.Get(ctx, "no-such-id"); !errors.Is(err, audit.ErrNotFound) {
		t.Fatalf("unknown id: %v", err)
	}

	// Walk every page: newest first, each record once.
	var seen []string
	cur := ""
	for pages := 0; ; pages++ {
		p, err := st.List(ctx, audit.Filter{Limit: 4, Cursor: cur})
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

	check := func(f audit.Filter, wantN int, pred func(*audit.Record) bool) {
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
	check(audit.Filter{Route: "refuse", Limit: 100}, 8, func(r *audit.Record) bool { return r.FinalRoute == "refuse" })
	check(audit.Filter{ToolName: "get_weather", Route: "accept"}, 4, func(r *audit.Record) bool {
		return r.ToolName == "get_weather" && r.FinalRoute == "accept"
	})
	since, until := base.Add(-3*time.Minute), base.Add(-time.Minute)
	check(audit.Filter{Since: since, Until: until}, 4, func(r *audit.Record) bool {
		return !r.DecidedAt.Before(since) && r.DecidedAt.Before(until)
	})
	check(audit.Filter{}, 25, func(*audit.Record) bool { return true })
	check(audit.Filter{Limit: audit.MaxLimit + 1000}, 25, func(*audit.Record) bool { return true })
	check(audit.Filter{Route: "ask", ToolName: "nope"}, 0, func(*audit.Record) bool { return false })
	check(audit.Filter{AgentID: "agent-5"}, 5, func(r *audit.Record) bool { return r.AgentID == "agent-5" })
	check(audit.Filter{Blocker: "policy_denied"}, 5, func(r *audit.Record) bool { return slices.Contains(r.HardBlockers, "policy_denied") })
	check(audit.Filter{Blocker: "write_missing_explicit_confirmation", AgentID: "agent-1"}, 20, func(r *audit.Record) bool {
		return r.AgentID == "agent-1" && slices.Contains(r.HardBlockers, "write_missing_explicit_confirmation")
	})
	check(audit.Filter{Blocker: "policy"}, 0, func(*audit.Record) bool { return false }) // a whole code, not a prefix

	for name, f := range map[string]audit.Filter{
		"route":       {Route: "maybe"},
		"cursor":      {Cursor: "not-a-cursor"},
		"cursor json": {Cursor: "e30"}, // base64 of {}
		"limit":       {Limit: -1},
		"range":       {Since: until, Until: since},
	} {
		if _, err := st.List(ctx, f); !errors.Is(err, audit.ErrBadFilter) {
			t.Errorf("%s: got %v, want ErrBadFilter", name, err)
		}
	}
}

func TestListDefaultLimit(t *testing.T) {
	t.Parallel()
	_, u := migratedDB(t)
	ctx := context.Background()
	s := openSink(t, u, 0)
	now := time.Now()
	var recs []*audit.Record
	for i := range audit.DefaultLimit + 5 {
		recs = append(recs, audittest.Record(i, now))
	}
	st := storeWith(t, s, u, recs)
	p, err := st.List(ctx, audit.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Records) != audit.DefaultLimit || p.NextCursor == "" {
		t.Fatalf("default page: %d records, cursor %q", len(p.Records), p.NextCursor)
	}
	if want := fmt.Sprintf("dec-%06d", audit.DefaultLimit+4); p.Records[0].DecisionID != want {
		t.Fatalf("first record %s, want %s", p.Records[0].DecisionID, want)
	}
}

// storeWith inserts recs through the sink and opens a Store on the database.
func storeWith(t *testing.T, s *Sink, u string, recs []*audit.Record) audit.Store {
	t.Helper()
	ctx := context.Background()
	if err := s.Write(ctx, audit.Batch{Records: recs}); err != nil {
		t.Fatal(err)
	}
	st := NewStore(pgtest.DB(t, u))
	return st
}
