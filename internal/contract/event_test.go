package contract_test

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/gatedhq/gated/internal/contract"
	"github.com/gatedhq/gated/internal/route"
)

// RefDoc must be a ref's JSON form, decoded, field for field: an adapter's
// ref reaches the contract as a runtime's would.
func TestRefDocIsTheRefsJSONForm(t *testing.T) {
	t.Parallel()
	hours := 24.0
	for name, r := range map[string]route.EvidenceRef{
		"required only": {SourceID: "s", Kind: "approval", TrustTier: "verified", RedactionStatus: "redacted", Provenance: "p",
			Freshness: route.Freshness{Status: "fresh"}},
		"every field": {SourceID: "s", Kind: "tool_result", TrustTier: "runtime", RedactionStatus: "public", Summary: "sum",
			RetrievedAt: "2026-11-20T12:00:00Z", CitationURL: "https://c.example", RetrievalURL: "https://r.example", Provenance: "p",
			Supports: []string{"a"}, Contradicts: []string{"b", "c"}, GatedVerified: true,
			Freshness: route.Freshness{Status: "fresh", CheckedAt: "2026-11-20T12:00:00Z", MaxAgeHours: &hours, AgeHours: &hours, Source: "x"}},
	} {
		raw, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		var want map[string]any
		if err := json.Unmarshal(raw, &want); err != nil {
			t.Fatal(err)
		}
		if got := contract.RefDoc(r); !reflect.DeepEqual(got, want) {
			t.Errorf("%s: RefDoc\n%v\nJSON form\n%v", name, got, want)
		}
	}
}

// An event an adapter builds prepares as the same event sent by a runtime.
func TestEventDocPrepares(t *testing.T) {
	t.Parallel()
	ev := contract.Event{
		ToolName: "get_weather", Category: route.PublicRead, AuthorizationState: "none", RiskDomain: "public_information",
		Arguments: map[string]any{"city": "Lisbon"}, RecommendedRoute: route.Accept, AgentID: "agent-1",
		AuthorizationSubject: &route.Subject{SubjectType: "user", SubjectRef: "u-1"}, UserIntent: "plan a trip",
		EvidenceRefs: []any{contract.RefDoc(route.EvidenceRef{SourceID: "doc.weather", Kind: "other", TrustTier: "verified",
			RedactionStatus: "redacted", Provenance: "fixture", Freshness: route.Freshness{Status: "fresh"}})},
	}
	p := contract.Prepare(ev.Doc())
	if p.Event == nil {
		t.Fatalf("the built event does not prepare: %+v %+v", p.ValidationErrors, p.Findings)
	}
	if p.Event.AgentID != "agent-1" || p.Event.RequestID != "" || len(p.Event.EvidenceRefs) != 1 || p.Event.RecommendedRoute != route.Accept {
		t.Errorf("prepared %+v", p.Event)
	}
	if s := p.Event.AuthorizationSubject; s == nil || *s != *ev.AuthorizationSubject || p.Event.UserIntent != "plan a trip" {
		t.Errorf("prepared subject %+v, intent %q", s, p.Event.UserIntent)
	}
	for _, key := range []string{"request_id", "authorization_subject", "user_intent"} {
		if _, ok := (contract.Event{}).Doc()[key]; ok {
			t.Errorf("an empty %s is sent", key)
		}
	}
}
