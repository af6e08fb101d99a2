package gate

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/gatedhq/gated/internal/catalog"
	"github.com/gatedhq/gated/internal/policy"
	"github.com/gatedhq/gated/internal/route"
)

// The candidate decides at the live decision's time, not at its own: the
// e-mail's evidence, fresh at the live decision, is a week old by the
// candidate engine's clock, and only a decision at that clock would not
// accept it.
func TestCandidateDecidesAtTheLiveTime(t *testing.T) {
	t.Parallel()
	c := exampleCatalog(t)
	ps, err := policy.Load([]string{"testdata/policy"}, c)
	if err != nil {
		t.Fatal(err)
	}
	sources := func(now time.Time) []Option {
		return []Option{WithClock(func() time.Time { return now }),
			WithCatalog(func() *catalog.Catalog { return c }, UnknownDefer, catalog.ArgumentsEnforce),
			WithPolicy(func() *policy.Set { return ps }, policy.NewLimiter())}
	}
	var followed *Followed
	live := New(append(sources(fixedNow), WithFollower(func(f *Followed) { followed = f }))...)
	cand := New(sources(fixedNow.Add(7 * 24 * time.Hour))...)
	req := Request{Event: decode(t, []byte(confirmedEmail)), Principals: []string{"bot://support-agent"}}

	d := live.Decide(context.Background(), req)
	if d.Route != route.Accept || followed == nil || !followed.At.Equal(fixedNow) {
		t.Fatalf("live route %s blockers %v, followed %+v", d.Route, d.HardBlockers, followed)
	}
	if got := cand.DecideFollowed(context.Background(), followed); got.Route != route.Accept {
		t.Fatalf("candidate at the live time: route %s blockers %v", got.Route, got.HardBlockers)
	}
	if own := cand.Decide(context.Background(), req); own.Route == route.Accept {
		t.Fatal("the candidate's own clock accepts too, so this test shows nothing")
	}
}

// A candidate that fails is the candidate's refusal naming the failure;
// the live decision it follows stands.
func TestCandidateFailureIsItsOwnRefusal(t *testing.T) {
	t.Parallel()
	var followed *Followed
	live := New(WithClock(func() time.Time { return fixedNow }), WithFollower(func(f *Followed) { followed = f }))
	cand := New(WithPolicy(func() *policy.Set { panic("the candidate's policy is broken") }, policy.NewLimiter()))
	d := live.Decide(context.Background(), Request{Event: decode(t, []byte(confirmedEmail))})
	got := cand.DecideFollowed(context.Background(), followed)
	if d.Route != route.Accept || got.Route != route.Refuse || !slices.Contains(got.HardBlockers, route.CodeInternalError) {
		t.Fatalf("live %s %v, candidate %s %v: want the live accept, and the candidate's refusal internal_error", d.Route, d.HardBlockers, got.Route, got.HardBlockers)
	}
}
