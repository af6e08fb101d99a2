package contract_test

import (
	"bytes"
	"context"
	"encoding/json"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/gatedhq/gated/internal/gate"
	"github.com/gatedhq/gated/internal/route"
)

// fixedNow is the clock of every test here: evidence freshness depends on it.
var fixedNow = time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC)

var engine = gate.New(gate.WithClock(func() time.Time { return fixedNow }))

type obj = map[string]any

// absent, as an override value, removes the field.
type absentT struct{}

var absent absentT

// override copies base and applies over; absent deletes a field.
func override(base, over obj) obj {
	out := maps.Clone(base)
	for k, v := range over {
		if _, del := v.(absentT); del {
			delete(out, k)
		} else {
			out[k] = v
		}
	}
	return out
}

// ref is a clean evidence ref (no warnings, supports nothing) with overrides.
func ref(over obj) obj {
	return override(obj{
		"source_id": "doc.weather", "kind": "other", "trust_tier": "verified", "redaction_status": "redacted",
		"freshness": obj{"status": "fresh"}, "provenance": "fixture",
	}, over)
}

// Refs that back exactly one authorization state each.
var (
	claimRef    = ref(obj{"source_id": "msg.1", "kind": "user_message"})
	authRef     = ref(obj{"source_id": "auth.session", "kind": "auth_event"})
	validRef    = ref(obj{"source_id": "check.owner", "kind": "tool_result", "summary": "ownership validated"})
	approvalRef = ref(obj{"source_id": "approval.1", "kind": "approval"})
)

// refsBacking returns evidence that supports exactly the declared state, so
// a category test is not confounded by a downgrade.
func refsBacking(state string) []any {
	switch state {
	case "user_claimed":
		return []any{claimRef}
	case "authenticated":
		return []any{authRef}
	case "validated":
		return []any{validRef}
	case "confirmed":
		return []any{approvalRef}
	}
	return []any{ref(nil)}
}

// event is an unversioned public read of the weather that gated accepts,
// with overrides, passed through JSON so the types are what the HTTP
// decoder produces.
func event(t testing.TB, over obj) obj {
	t.Helper()
	base := obj{
		"tool_name": "get_weather", "tool_category": "public_read", "authorization_state": "none",
		"evidence_refs": []any{ref(nil)}, "risk_domain": "public_information",
		"proposed_arguments": obj{"city": "Lisbon"}, "recommended_route": "accept",
	}
	return roundTrip(t, override(base, over))
}

func roundTrip(t testing.TB, v any) obj {
	t.Helper()
	raw, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var m obj
	if err := dec.Decode(&m); err != nil {
		t.Fatal(err)
	}
	return m
}

func decide(t testing.TB, doc obj) *gate.Decision {
	t.Helper()
	return engine.Decide(context.Background(), gate.Request{Event: doc})
}

// expect checks the final route and the hard blockers (exactly, in order),
// and the execution rule every answer must keep.
func expect(t testing.TB, d *gate.Decision, want route.Route, blockers ...string) {
	t.Helper()
	if blockers == nil {
		blockers = []string{}
	}
	if d.Route != want {
		t.Errorf("route = %s, want %s; findings %+v; validation %+v", d.Route, want, d.Findings, d.ValidationErrors)
	}
	if !slices.Equal(d.HardBlockers, blockers) {
		t.Errorf("hard_blockers = %q, want %q", d.HardBlockers, blockers)
	}
	pass := d.Route == route.Accept && len(d.HardBlockers) == 0
	if d.Execute != pass || d.Outcome().Pass() != pass {
		t.Errorf("execute = %v, gate_decision = %s for route %s with blockers %q", d.Execute, d.Outcome().GateDecision(), d.Route, d.HardBlockers)
	}
}
