package postgres

import (
	"context"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/gatedhq/gated/internal/actionresult"
	"github.com/gatedhq/gated/internal/audit"
	"github.com/gatedhq/gated/internal/audit/audittest"
	"github.com/gatedhq/gated/internal/pgtest"
)

func TestOutcomes(t *testing.T) {
	t.Parallel()
	_, u := migratedDB(t)
	ctx := context.Background()
	now := time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC)
	s := openSink(t, u, 10*24*time.Hour)
	var recs []*audit.Record
	for i := range len(actionresult.Statuses) + 2 {
		r := audittest.Record(i, now)
		r.Execute = true
		recs = append(recs, r)
	}
	refused := recs[len(recs)-2]
	refused.Execute = false
	old := recs[len(recs)-1]
	old.DecidedAt = now.AddDate(0, 0, -30)
	st := storeWith(t, s, u, recs)

	// Every status the API takes, the table takes; the first outcome has
	// every field.
	yes, no := true, false
	rd := audit.NewRedactor([]byte("test-key"))
	for i, status := range actionresult.Statuses {
		in := audit.OutcomeInput{DecisionID: recs[i].DecisionID, Status: status, TokenName: "ci", Time: now.Add(time.Second)}
		if i == 0 {
			in.Verification = &audit.Verification{OK: true}
			in.Repair = &audit.Attempt{Attempted: true, OK: false}
			in.Rollback = &audit.Attempt{Attempted: false, OK: false}
			in.Output = []byte(`{"b": 1, "a": [true]}`)
		}
		o := rd.BuildOutcome(in)
		if err := st.AddOutcome(ctx, o); err != nil {
			t.Fatalf("%s: %v", status, err)
		}
		got, err := st.Outcome(ctx, recs[i].DecisionID)
		if err != nil {
			t.Fatal(err)
		}
		got.RecordedAt = got.RecordedAt.UTC()
		if !reflect.DeepEqual(got, o) {
			t.Fatalf("round trip:\n got %+v\nwant %+v", got, o)
		}
	}
	first, _ := st.Outcome(ctx, recs[0].DecisionID)
	if first.OutputFingerprint == "" || first.OutputConforms != nil || *first.Verification != (audit.Verification{OK: yes}) ||
		*first.Repair != (audit.Attempt{Attempted: yes, OK: no}) {
		t.Fatalf("first outcome: %+v", first)
	}
	if same := rd.BuildOutcome(audit.OutcomeInput{Output: []byte(`{"a":[true],"b":1}`)}); same.OutputFingerprint != first.OutputFingerprint {
		t.Error("the same output, spaced and ordered differently, has another fingerprint")
	}

	for _, c := range []struct {
		name string
		o    audit.Outcome
		want error
	}{
		{"a second outcome", audit.Outcome{DecisionID: recs[0].DecisionID, Status: actionresult.Failed, TokenName: "ci"}, audit.ErrOutcomeExists},
		{"another token", audit.Outcome{DecisionID: refused.DecisionID, Status: actionresult.Succeeded, TokenName: "someone"}, audit.ErrNotYours},
		{"a refused decision", audit.Outcome{DecisionID: refused.DecisionID, Status: actionresult.Succeeded, TokenName: "ci"}, audit.ErrNotExecuted},
		{"an unknown decision", audit.Outcome{DecisionID: "no-such-id", Status: actionresult.Succeeded, TokenName: "ci"}, audit.ErrNotFound},
	} {
		c.o.RecordedAt = now
		if err := st.AddOutcome(ctx, &c.o); !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %v", c.name, err, c.want)
		}
	}
	if o, err := st.Outcome(ctx, refused.DecisionID); o != nil || err != nil {
		t.Errorf("a decision without outcome: %+v, %v", o, err)
	}
	if o, _ := st.Outcome(ctx, recs[0].DecisionID); o.Status != actionresult.Succeeded {
		t.Errorf("the refused second outcome replaced the first: %+v", o)
	}

	// Retention takes an outcome with its decision's partition, and only it.
	if err := st.AddOutcome(ctx, &audit.Outcome{DecisionID: old.DecisionID, Status: actionresult.Succeeded, TokenName: "ci", RecordedAt: now}); err != nil {
		t.Fatal(err)
	}
	if err := s.Maintain(ctx, now); err != nil {
		t.Fatal(err)
	}
	if n := pgtest.QueryInt(t, u, "SELECT count(*) FROM decision_outcomes WHERE decision_id = $1", old.DecisionID); n != 0 {
		t.Error("the outcome of a decision past retention is still stored")
	}
	if n := pgtest.QueryInt(t, u, "SELECT count(*) FROM decision_outcomes"); n != len(actionresult.Statuses) {
		t.Errorf("%d outcomes after retention, want %d", n, len(actionresult.Statuses))
	}
}
