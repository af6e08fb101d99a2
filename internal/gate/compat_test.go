package gate

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gatedhq/gated/internal/catalog"
	"github.com/gatedhq/gated/internal/contract"
	"github.com/gatedhq/gated/internal/route"
)

// Each test here pins one deliberate departure from the reference gate,
// listed with its reason in docs/aana-compatibility.md.

func decideJSON(t *testing.T, ev string) *Decision {
	t.Helper()
	return New(WithClock(func() time.Time { return fixedNow })).Decide(context.Background(), Request{Event: decode(t, []byte(ev))})
}

// Departure 1: a missing required field is refused, not filled with a default.
func TestCompatMissingFieldRefused(t *testing.T) {
	t.Parallel()
	d := decideJSON(t, `{"tool_name":"search_docs","tool_category":"public_read","authorization_state":"none","risk_domain":"research","proposed_arguments":{},"recommended_route":"accept"}`)
	if d.Route != route.Refuse || !slices.Equal(d.HardBlockers, []string{"schema_validation_failed"}) {
		t.Fatalf("route %s blockers %v", d.Route, d.HardBlockers)
	}
	if len(d.ValidationErrors) != 1 || d.ValidationErrors[0].Path != "$" || !strings.Contains(d.ValidationErrors[0].Message, "evidence_refs") {
		t.Fatalf("validation_errors %+v", d.ValidationErrors)
	}
}

// Departure 2: a hard blocker never leaves the route at accept. A public
// read whose declared authentication the evidence does not back would be
// "accept" with a blocker in the reference; gated asks.
func TestCompatBlockerIsNeverAccept(t *testing.T) {
	t.Parallel()
	d := decideJSON(t, `{"tool_name":"search_docs","tool_category":"public_read","authorization_state":"authenticated",
		"evidence_refs":[{"source_id":"note.1","kind":"other","trust_tier":"runtime","redaction_status":"public","freshness":{"status":"fresh"},"provenance":"runtime"}],
		"risk_domain":"research","proposed_arguments":{"query":"x"},"recommended_route":"accept"}`)
	if d.Route != route.Ask || d.Execute || !slices.Contains(d.HardBlockers, "authorization_state_not_supported_by_evidence") {
		t.Fatalf("route %s execute %v blockers %v", d.Route, d.Execute, d.HardBlockers)
	}
}

// Departure 3: the unversioned branch's enum failure says where, with
// validation_errors, besides contract_normalization_failed.
func TestCompatNormalizationFailureHasPaths(t *testing.T) {
	t.Parallel()
	d := decideJSON(t, `{"tool_name":"x","tool_category":"delete","authorization_state":"none","evidence_refs":[],"risk_domain":"research","proposed_arguments":{},"recommended_route":"refuse"}`)
	if d.Route != route.Refuse || !slices.Equal(d.HardBlockers, []string{"contract_normalization_failed"}) {
		t.Fatalf("route %s blockers %v", d.Route, d.HardBlockers)
	}
	if len(d.ValidationErrors) == 0 || d.ValidationErrors[0].Path != "$.tool_category" {
		t.Fatalf("validation_errors %+v", d.ValidationErrors)
	}
}

// Departure 4: non-ASCII letters are word characters, so "cafésearch" holds
// no whole word "search" and an identity-bound name stays private.
func TestCompatNonASCIIWordBoundary(t *testing.T) {
	t.Parallel()
	ev := `{"tool_name":"get_order","tool_category":"public_read","authorization_state":"none","evidence_refs":[],
		"risk_domain":"commerce","proposed_arguments":{"q":"ésearch"},"recommended_route":"accept"}`
	d := decideJSON(t, ev)
	if !slices.Contains(d.HardBlockers, "public_read_identity_bound_misclassified") {
		t.Fatalf("blockers %v", d.HardBlockers)
	}
	d = decideJSON(t, strings.Replace(ev, "ésearch", "é search", 1))
	if slices.Contains(d.HardBlockers, "public_read_identity_bound_misclassified") {
		t.Fatalf("a separated public word must count: %v", d.HardBlockers)
	}
}

// Departure 5: source ids that look like secrets or personal data are not
// echoed back in the answer: the decision, which the answer only presents,
// holds them nowhere.
func TestCompatSecretSourceIDNotEchoed(t *testing.T) {
	t.Parallel()
	d := decideJSON(t, `{"tool_name":"get_profile","tool_category":"private_read","authorization_state":"authenticated",
		"evidence_refs":[{"source_id":"sk-abcdefghijklmnop","kind":"auth_event","trust_tier":"verified","redaction_status":"redacted","freshness":{"status":"fresh"},"provenance":"connector"}],
		"risk_domain":"commerce","proposed_arguments":{},"recommended_route":"accept"}`)
	body, _ := json.Marshal(d)
	if strings.Contains(string(body), "sk-abcdefghijklmnop") {
		t.Fatalf("the secret-looking source id was echoed: %s", body)
	}
	if d.Route != route.Refuse || !slices.Contains(d.HardBlockers, "evidence_secret_leak") {
		t.Fatalf("route %s blockers %v", d.Route, d.HardBlockers)
	}
}

// Departure 6: at most contract.MaxEvidenceRefs evidence refs per event.
func TestCompatEvidenceRefCap(t *testing.T) {
	t.Parallel()
	refs := strings.Repeat(`"draft:1",`, contract.MaxEvidenceRefs)
	ev := `{"tool_name":"search_docs","tool_category":"public_read","authorization_state":"none","evidence_refs":[%s],"risk_domain":"research","proposed_arguments":{},"recommended_route":"accept"}`
	if d := decideJSON(t, fmt.Sprintf(ev, strings.TrimSuffix(refs, ","))); d.Route != route.Accept {
		t.Fatalf("%d refs: route %s blockers %v", contract.MaxEvidenceRefs, d.Route, d.HardBlockers)
	}
	d := decideJSON(t, fmt.Sprintf(ev, refs+`"draft:1"`))
	if d.Route != route.Refuse || !slices.Equal(d.HardBlockers, []string{"schema_validation_failed"}) ||
		len(d.ValidationErrors) != 1 || d.ValidationErrors[0].Path != "$.evidence_refs" {
		t.Fatalf("%d refs: route %s blockers %v errors %+v", contract.MaxEvidenceRefs+1, d.Route, d.HardBlockers, d.ValidationErrors)
	}
}

// A failure inside the decision path refuses, naming it; it never accepts.
func TestFaultInDecisionPathRefuses(t *testing.T) {
	t.Parallel()
	e := New(WithClock(func() time.Time { return fixedNow }),
		WithCatalog(func() *catalog.Catalog { panic("catalog snapshot corrupted") }, UnknownAllow, catalog.ArgumentsEnforce))
	d := e.Decide(context.Background(), Request{Event: decode(t, []byte(`{"tool_name":"search_docs","tool_category":"public_read","authorization_state":"none","evidence_refs":[],"risk_domain":"research","proposed_arguments":{},"recommended_route":"accept"}`))})
	if d.Route != route.Refuse || d.Execute || !slices.Contains(d.HardBlockers, "internal_error") {
		t.Fatalf("route %s execute %v blockers %v", d.Route, d.Execute, d.HardBlockers)
	}
}
