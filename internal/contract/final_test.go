package contract_test

import (
	"strings"
	"testing"

	"github.com/gatedhq/gated/internal/contract"
	"github.com/gatedhq/gated/internal/route"
)

// Section 5: the final route is the stricter of the gate's and the
// runtime's; a runtime refuse is a hard blocker; gate_decision is pass only
// for accept without blockers.
func TestFinalRoute(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		over       obj
		aana       route.Route
		route      route.Route
		blockers   []string
		candidate  string
		runtimeSay route.Route
	}{
		{"both accept", nil, route.Accept, route.Accept, nil, "pass", route.Accept},
		{"runtime ask", obj{"recommended_route": "ask"}, route.Accept, route.Ask, nil, "pass", route.Ask},
		{"runtime defer", obj{"recommended_route": "defer"}, route.Accept, route.Defer, nil, "pass", route.Defer},
		{"runtime refuse", obj{"recommended_route": "refuse"}, route.Accept, route.Refuse, []string{route.CodeRuntimeRefusal}, "pass", route.Refuse},
		{"gate stricter than runtime", obj{"evidence_refs": []any{ref(obj{"freshness": obj{"status": "stale"}})}, "recommended_route": "ask"},
			route.Defer, route.Defer, []string{route.CodeStaleEvidence}, "fail", route.Ask},
		{"gate refuse and runtime refuse", obj{"evidence_refs": []any{ref(obj{"redaction_status": "sensitive"})}, "recommended_route": "refuse"},
			route.Refuse, route.Refuse, []string{route.CodeUnsafeRedactionStatus, route.CodeRuntimeRefusal}, "fail", route.Refuse},
		{"normalised runtime route counts", obj{"tool_category": "unknown", "tool_name": "mystery"},
			route.Defer, route.Defer, []string{route.CodeUnknownToolCategory}, "fail", route.Defer},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := decide(t, event(t, tt.over))
			expect(t, d, tt.route, tt.blockers...)
			if d.Gate.Route != tt.aana || d.Gate.GateDecision() != tt.candidate {
				t.Errorf("aana_route %s candidate_gate %s, want %s %s", d.Gate.Route, d.Gate.GateDecision(), tt.aana, tt.candidate)
			}
			if d.RuntimeRecommendedRoute == nil || *d.RuntimeRecommendedRoute != tt.runtimeSay {
				t.Errorf("runtime_recommended_route %v", d.RuntimeRecommendedRoute)
			}
		})
	}
}

func TestRuntimeFinding(t *testing.T) {
	t.Parallel()
	if _, ok := contract.RuntimeFinding(route.Accept, false); ok {
		t.Error("accept produced a finding")
	}
	f, ok := contract.RuntimeFinding(route.Refuse, false)
	if !ok || !f.Blocking || f.Code != route.CodeRuntimeRefusal || f.Route != route.Refuse || f.Source != route.SourceRuntime {
		t.Errorf("refuse: %+v", f)
	}
	for _, r := range []route.Route{route.Ask, route.Defer} {
		f, ok := contract.RuntimeFinding(r, false)
		if !ok || f.Blocking || f.Route != r || f.Code != "runtime_recommended_"+r.String() || f.Source != route.SourceRuntime {
			t.Errorf("%s: %+v", r, f)
		}
		// A lowered accept is the contract's route, not the runtime's.
		f, ok = contract.RuntimeFinding(r, true)
		if !ok || f.Blocking || f.Route != r || f.Source != route.SourceContract || strings.Contains(f.Message, "runtime") {
			t.Errorf("%s lowered: %+v", r, f)
		}
	}
}

func TestLowered(t *testing.T) {
	t.Parallel()
	ev := func(rec, state string) map[string]any {
		return map[string]any{"tool_name": "t", "tool_category": "write", "authorization_state": state,
			"evidence_refs": []any{}, "risk_domain": "unknown", "proposed_arguments": map[string]any{}, "recommended_route": rec}
	}
	for _, c := range []struct {
		rec, state string
		want       bool
	}{{"accept", "authenticated", true}, {"ask", "authenticated", false}, {"accept", "confirmed", false}} {
		if got := contract.Prepare(ev(c.rec, c.state)).Lowered(); got != c.want {
			t.Errorf("%s at %s: Lowered %v, want %v", c.rec, c.state, got, c.want)
		}
	}
}
