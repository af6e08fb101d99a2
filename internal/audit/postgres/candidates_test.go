package postgres

import (
	"context"
	"errors"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/gatedhq/gated/internal/audit"
	"github.com/gatedhq/gated/internal/audit/audittest"
	"github.com/gatedhq/gated/internal/pgtest"
)

// The candidate's rows: written in a batch (a second write of a row keeps
// the first), listed as disagreements newest first with each filter and
// a cursor, summed for one revision, joined to the decisions listing, and
// deleted with their decisions by retention.
func TestCandidateRows(t *testing.T) {
	t.Parallel()
	_, u := migratedDB(t)
	ctx := context.Background()
	now := time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC)
	s := openSink(t, u, 10*24*time.Hour)
	var recs []*audit.Record
	for i := range 5 {
		recs = append(recs, audittest.Record(i, now.Add(time.Duration(i)*time.Second)))
	}
	recs[4].DecidedAt = now.AddDate(0, 0, -30)
	st := storeWith(t, s, u, recs)
	cs := NewCandidates(pgtest.DB(t, u))

	row := func(i int, live, cand, dir, tool string, principals ...string) *audit.Candidate {
		return &audit.Candidate{DecisionID: recs[i].DecisionID, DecidedAt: recs[i].DecidedAt, ToolName: tool, TokenName: "ci",
			Principals: principals, LiveRoute: live, Route: cand, HardBlockers: []string{}, CatalogRevision: "cat-1", PolicyRevision: "pol-2",
			Direction: dir, RecordedAt: now.Add(time.Minute)}
	}
	rows := []*audit.Candidate{
		row(0, "accept", "accept", audit.DirectionSame, "search"),
		row(1, "accept", "refuse", audit.DirectionNarrower, "refund", "bot://a", "group://ops"),
		row(2, "refuse", "ask", audit.DirectionWider, "refund", "bot://b"),
		row(3, "ask", "accept", audit.DirectionWider, "send_email", "bot://a"),
		row(4, "refuse", "accept", audit.DirectionWider, "refund", "bot://a"),
	}
	rows[1].HardBlockers = []string{"policy_no_grant"}
	if err := cs.WriteCandidates(ctx, rows); err != nil {
		t.Fatal(err)
	}
	again := *rows[1]
	again.Route = "accept"
	if err := cs.WriteCandidates(ctx, []*audit.Candidate{&again}); err != nil {
		t.Fatal(err)
	}

	ids := func(p audit.CandidatePage) []string {
		var out []string
		for _, c := range p.Candidates {
			out = append(out, c.DecisionID)
		}
		return out
	}
	list := func(f audit.CandidateFilter) audit.CandidatePage {
		t.Helper()
		p, err := cs.Disagreements(ctx, f)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	id := func(is ...int) []string {
		var out []string
		for _, i := range is {
			out = append(out, recs[i].DecisionID)
		}
		return out
	}
	for _, c := range []struct {
		f    audit.CandidateFilter
		want []string
	}{
		{audit.CandidateFilter{}, id(3, 2, 1, 4)},
		{audit.CandidateFilter{Direction: audit.DirectionWider}, id(3, 2, 4)},
		{audit.CandidateFilter{Direction: audit.DirectionNarrower}, id(1)},
		{audit.CandidateFilter{ToolName: "refund"}, id(2, 1, 4)},
		{audit.CandidateFilter{Principal: "bot://a"}, id(3, 1, 4)},
		{audit.CandidateFilter{Principal: "bot://a", Direction: audit.DirectionWider, ToolName: "refund"}, id(4)},
	} {
		if got := ids(list(c.f)); !slices.Equal(got, c.want) {
			t.Errorf("%+v: %v, want %v", c.f, got, c.want)
		}
	}
	first := list(audit.CandidateFilter{Limit: 2})
	next := list(audit.CandidateFilter{Limit: 2, Cursor: first.NextCursor})
	if got := append(ids(first), ids(next)...); !slices.Equal(got, id(3, 2, 1, 4)) || next.NextCursor != "" {
		t.Errorf("two pages: %v (next %q)", got, next.NextCursor)
	}
	if got := list(audit.CandidateFilter{Direction: audit.DirectionNarrower}).Candidates[0]; !reflect.DeepEqual(normal(got), rows[1]) {
		t.Errorf("round trip:\n got %+v\nwant %+v", got, rows[1])
	}
	if _, err := cs.Disagreements(ctx, audit.CandidateFilter{Direction: "same"}); !errors.Is(err, audit.ErrBadFilter) {
		t.Errorf("direction same: %v, want a bad filter", err)
	}

	counts, err := cs.CandidateCounts(ctx, "cat-1", "pol-2", now)
	if err != nil {
		t.Fatal(err)
	}
	want := []audit.CandidateCount{
		{Live: "accept", Candidate: "accept", Direction: "same", Count: 1},
		{Live: "accept", Candidate: "refuse", Direction: "narrower", Count: 1},
		{Live: "ask", Candidate: "accept", Direction: "wider", Count: 1},
		{Live: "refuse", Candidate: "ask", Direction: "wider", Count: 1},
	}
	if !reflect.DeepEqual(counts, want) {
		t.Errorf("counts since %s: %+v, want %+v", now, counts, want)
	}
	if counts, _ := cs.CandidateCounts(ctx, "cat-1", "pol-other", time.Time{}); len(counts) != 0 {
		t.Errorf("another revision's counts: %+v", counts)
	}

	page, err := st.List(ctx, audit.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	if c := page.Candidates[recs[2].DecisionID]; c == nil || c.Route != "ask" || len(page.Candidates) != 5 {
		t.Errorf("the listing joins %d rows, decision 2's %+v", len(page.Candidates), c)
	}

	if err := s.Maintain(ctx, now); err != nil {
		t.Fatal(err)
	}
	if got := ids(list(audit.CandidateFilter{})); !slices.Equal(got, id(3, 2, 1)) {
		t.Errorf("after retention: %v, want the old decision's row gone", got)
	}
}

// normal is c as written: times in UTC.
func normal(c *audit.Candidate) *audit.Candidate {
	c.DecidedAt, c.RecordedAt = c.DecidedAt.UTC(), c.RecordedAt.UTC()
	return c
}
