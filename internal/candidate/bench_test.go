package candidate_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/gatedhq/gated/internal/audit"
	"github.com/gatedhq/gated/internal/candidate"
	"github.com/gatedhq/gated/internal/catalog"
	"github.com/gatedhq/gated/internal/gate"
	"github.com/gatedhq/gated/internal/policy"
)

// discard is an audit recorder, and a candidate writer, that keeps
// nothing: the sinks' costs are measured by the audit benchmarks.
type discard struct{}

func (discard) Record(context.Context, *audit.Record) (audit.Result, error) {
	return audit.Result{Status: audit.StatusWritten}, nil
}
func (discard) Close(context.Context) error                               { return nil }
func (discard) Ready() bool                                               { return true }
func (discard) Stored(*audit.Record) audit.Result                         { return audit.Result{Status: audit.StatusWritten} }
func (discard) WriteCandidates(context.Context, []*audit.Candidate) error { return nil }

// cpu is the process's user and system CPU time so far.
func cpu(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkCandidateCPU measures the process's CPU per decision, on the
// example catalog and policy, with the audit record built: the live
// engine alone, then with a candidate on the same sources deciding every
// decision (its queue long enough that none is skipped, and the run
// waits until it has decided them all), and the candidate's own
// decision alone; live+handoff is the live path with the hand-off to a
// candidate that never runs. cpu-ns/op is the figure docs/performance.md
// compares.
func BenchmarkCandidateCPU(b *testing.B) {
	cat, err := catalog.Load([]string{"../../examples/catalog"})
	if err != nil {
		b.Fatal(err)
	}
	pol, err := policy.Load([]string{"../../examples/policy"}, cat)
	if err != nil {
		b.Fatal(err)
	}
	raw, err := os.ReadFile("../../examples/events/send_email_ask.json")
	if err != nil {
		b.Fatal(err)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var ev map[string]any
	if err := dec.Decode(&ev); err != nil {
		b.Fatal(err)
	}
	sources := func() []gate.Option {
		return []gate.Option{gate.WithCatalog(func() *catalog.Catalog { return cat }, gate.UnknownDefer, catalog.ArgumentsEnforce),
			gate.WithPolicy(func() *policy.Set { return pol }, policy.NewLimiter())}
	}
	liveOpts := func(more ...gate.Option) []gate.Option {
		return append(append(sources(), gate.WithAudit(discard{}, audit.NewRedactor([]byte("bench-key")), "bench")), more...)
	}
	req := gate.Request{Event: ev, TokenName: "bench-token", Principals: []string{"bot://support-agent"}}
	ctx := context.Background()
	measure := func(b *testing.B, decide func(), wait func()) {
		b.ReportAllocs()
		start := cpu(b)
		for b.Loop() {
			decide()
		}
		wait()
		b.ReportMetric(float64((cpu(b)-start).Nanoseconds())/float64(b.N), "cpu-ns/op")
	}

	b.Run("live", func(b *testing.B) {
		e := gate.New(liveOpts()...)
		measure(b, func() { e.Decide(ctx, req) }, func() {})
	})
	b.Run("live+candidate", func(b *testing.B) {
		c := candidate.New(candidate.Config{Engine: gate.New(sources()...), Writer: discard{}, Queue: 1 << 20})
		e := gate.New(liveOpts(gate.WithFollower(c.Follow))...)
		rctx, cancel := context.WithCancel(ctx)
		go c.Run(rctx)
		var n int64
		measure(b, func() { e.Decide(ctx, req); n++ }, func() {
			for c.Status().Decided+c.Status().Skipped < n {
				time.Sleep(time.Millisecond)
			}
		})
		cancel()
		c.Wait()
		if s := c.Status(); s.Skipped != 0 {
			b.Fatalf("the candidate skipped %d decisions", s.Skipped)
		}
	})
	b.Run("live+handoff", func(b *testing.B) {
		// The live path's own share: the copy and the send, into a queue
		// nobody drains (every decision after the first is skipped).
		c := candidate.New(candidate.Config{Engine: gate.New(sources()...), Queue: 1})
		e := gate.New(liveOpts(gate.WithFollower(c.Follow))...)
		measure(b, func() { e.Decide(ctx, req) }, func() {})
	})
	b.Run("candidate", func(b *testing.B) {
		var f *gate.Followed
		gate.New(liveOpts(gate.WithFollower(func(x *gate.Followed) { f = x }))...).Decide(ctx, req)
		cand := gate.New(sources()...)
		measure(b, func() { cand.DecideFollowed(ctx, f) }, func() {})
	})
}
