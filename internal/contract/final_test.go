package contract_test

import (
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
	if _, ok := contract.RuntimeFinding(route.Accept); ok {
		t.Error("accept produced a finding")
	}
	f, ok := contract.RuntimeFinding(route.Refuse)
	if !ok || !f.Blocking || f.Code != route.CodeRuntimeRefusal || f.Route != route.Refuse || f.Source != route.SourceRuntime {
		t.Errorf("refuse: %+v", f)
	}
	for _, r := range []route.Route{route.Ask, route.Defer} {
		f, ok := contract.RuntimeFinding(r)
		if !ok || f.Blocking || f.Route != r || f.Code != "runtime_recommended_"+r.String() {
			t.Errorf("%s: %+v", r, f)
		}
	}
}
