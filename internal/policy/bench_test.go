package policy

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/gatedhq/gated/internal/route"
	"github.com/gatedhq/gated/internal/testcpu"
)

// BenchmarkEvaluate measures one decision against 10, 1,000 and 10,000
// grants, each on its own action ("grants=N"), and against 10 and 10,000
// grants all on the decision's action, each for its own principal
// ("one-action/grants=N"). With rule indexing on the action id and the
// principal the time should barely grow with the number of grants in
// either case.
func BenchmarkEvaluate(b *testing.B) {
	for _, n := range []int{10, 1000, 10000} {
		b.Run(fmt.Sprintf("grants=%d", n), func(b *testing.B) {
			benchmarkGrants(b, n, func(i int) string { return fmt.Sprintf("kind%d:verb%d", i%50, i) })
		})
	}
	for _, n := range []int{10, 10000} {
		b.Run(fmt.Sprintf("one-action/grants=%d", n), func(b *testing.B) {
			benchmarkGrants(b, n, func(int) string { return "kind7:verb7" })
		})
	}
	b.Run("harness/grants=1000", benchmarkHarness)
}

// benchmarkHarness decides what bench/cmd/benchhttp's full path asks of
// the policy: its ~1.5 KB event (four evidence refs, arguments) as
// bot://support-agent on tickets:update, against the 1,000 grants its
// writePolicy generates (the event's grant and 999 on other actions).
func benchmarkHarness(b *testing.B) {
	raw, err := os.ReadFile("../../bench/cmd/benchhttp/event.json")
	if err != nil {
		b.Fatal(err)
	}
	ev := &route.Event{}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber() // as gated's decoder reads arguments
	if err := dec.Decode(ev); err != nil {
		b.Fatal(err)
	}
	var g strings.Builder
	g.WriteString("  - {principal: \"bot://support-agent\", actions: [{action: \"tickets:update\"}]}\n")
	for i := 1; i < 1000; i++ {
		fmt.Fprintf(&g, "  - {principal: \"operator://u%d\", actions: [{action: \"kind%d:verb%d\"}]}\n", i, i%50, i)
	}
	s := mustLoad(b, nil, oneGrant(g.String()))
	in := Input{Event: ev, Category: ev.ToolCategory, ActionID: "tickets:update",
		Principals: Principals(nil, true, ev), Now: t0, Limiter: NewLimiter()}
	if res := s.Evaluate(context.Background(), in); res.Block == nil || res.Block.Decision != "allow" || res.Block.Grant == nil || res.Block.Grant.Index != 0 {
		b.Fatalf("setup: %+v %+v", res.Findings, res.Block)
	}
	evaluateLoop(b, s, in)
}

// benchmarkGrants decides, n times over, the call of operator://u7 on
// kind7:verb7 against n grants, grant i for operator://u<i> on action(i).
func benchmarkGrants(b *testing.B, n int, action func(i int) string) {
	var g strings.Builder
	for i := range n {
		fmt.Fprintf(&g, "  - {principal: \"operator://u%d\", actions: [{action: %q}]}\n", i, action(i))
	}
	s := mustLoad(b, nil, oneGrant(g.String()))
	in := input("kind7:verb7", "operator://u7")
	res := s.Evaluate(context.Background(), in)
	if o := route.Combine(res.Findings); o.Route != route.Accept || res.Block.Grant == nil || res.Block.Grant.Index != 7 {
		b.Fatalf("setup: %s %v %+v", o.Route, o.HardBlockers, res.Block)
	}
	evaluateLoop(b, s, in)
}

// benchAction stands in for a catalog view: Rego reads it as input.action.
type benchAction struct {
	ToolID      string            `json:"tool_id"`
	ActionID    string            `json:"action_id"`
	RiskLevel   int               `json:"risk_level"`
	Mutates     []string          `json:"mutates"`
	Requires    []string          `json:"requires"`
	Annotations map[string]string `json:"annotations"`
	Rules       []map[string]any  `json:"rules"`
}

// BenchmarkEvaluateWithAction is BenchmarkEvaluate's 10 grants with an
// action view in the input, as every catalogued call has: its conversion
// for Rego is done once per view and Set.
func BenchmarkEvaluateWithAction(b *testing.B) {
	var g strings.Builder
	for i := range 10 {
		fmt.Fprintf(&g, "  - {principal: \"operator://u%d\", actions: [{action: \"kind%d:verb%d\"}]}\n", i, i, i)
	}
	s := mustLoad(b, nil, oneGrant(g.String()))
	in := input("kind7:verb7", "operator://u7")
	rules := make([]map[string]any, 8)
	for i := range rules {
		rules[i] = map[string]any{"kind": "regex", "argument": fmt.Sprintf("/arg%d", i), "patterns": []string{"^[a-z]+$", "^x"}}
	}
	in.Action = &benchAction{ToolID: "kind7.verb7", ActionID: "kind7:verb7", RiskLevel: 2, Mutates: []string{"orders:*"},
		Requires: []string{"network:api.example.com"}, Annotations: map[string]string{"title": "Verb seven"}, Rules: rules}
	if o := route.Combine(s.Evaluate(context.Background(), in).Findings); o.Route != route.Accept {
		b.Fatalf("setup: %s %v", o.Route, o.HardBlockers)
	}
	evaluateLoop(b, s, in)
}

// evaluateLoop decides in over and over, reporting the process's CPU time
// per decision (cpu-ns/op) besides the wall time: on a shared machine the
// CPU time is the steadier figure.
func evaluateLoop(b *testing.B, s *Set, in Input) {
	ctx := context.Background()
	b.ReportAllocs()
	cpu0 := testcpu.Time(b)
	for b.Loop() {
		s.Evaluate(ctx, in)
	}
	b.ReportMetric(float64((testcpu.Time(b)-cpu0).Nanoseconds())/float64(b.N), "cpu-ns/op")
}
