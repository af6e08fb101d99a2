package gate_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gatedhq/gated/internal/audit"
	"github.com/gatedhq/gated/internal/audit/file"
	"github.com/gatedhq/gated/internal/envelope"
	"github.com/gatedhq/gated/internal/gate"
)

// decideRecorded decides doc with a real file audit sink in sync mode and
// returns the decision and the stored record.
func decideRecorded(t *testing.T, doc map[string]any, httpRequestID string) (*gate.Decision, map[string]any) {
	t.Helper()
	return decideRequestRecorded(t, gate.Request{Event: doc, RequestID: httpRequestID})
}

// decideRequestRecorded is decideRecorded for a whole request, with the
// engine's other options.
func decideRequestRecorded(t *testing.T, req gate.Request, opts ...gate.Option) (*gate.Decision, map[string]any) {
	t.Helper()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	sink, err := file.Open(path, true)
	if err != nil {
		t.Fatal(err)
	}
	rec, err := audit.NewRecorder(ctx, sink, audit.Config{Durability: audit.Sync})
	if err != nil {
		t.Fatal(err)
	}
	e := gate.New(append(opts, gate.WithAudit(rec, audit.NewRedactor([]byte("0123456789abcdef0123456789abcdef")), "test"))...)
	d := e.Decide(ctx, req)
	if err := rec.Close(ctx); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var stored map[string]any
	if err := json.Unmarshal([]byte(strings.TrimSpace(string(raw))), &stored); err != nil {
		t.Fatalf("stored record %q: %v", raw, err)
	}
	return d, stored
}

func readEvent(request string, auth string, refs []any) map[string]any {
	ev := map[string]any{"tool_name": "get_account", "tool_category": "private_read", "authorization_state": auth,
		"evidence_refs": refs, "risk_domain": "finance", "proposed_arguments": map[string]any{}, "recommended_route": "accept"}
	if request != "" {
		ev["request_id"] = request
	}
	return ev
}

// The event's own request_id is echoed and stored, so a runtime can find
// its decision; an overlong one is neither.
func TestEventRequestIDEchoedAndStored(t *testing.T) {
	t.Parallel()
	d, stored := decideRecorded(t, readEvent("req-7f3a", "authenticated", []any{}), "http-1")
	if d.RequestID != "req-7f3a" || stored["request_id"] != "req-7f3a" {
		t.Fatalf("echoed %q, stored %v; want req-7f3a", d.RequestID, stored["request_id"])
	}
	d, stored = decideRecorded(t, readEvent(strings.Repeat("r", 129), "authenticated", []any{}), "http-2")
	if d.RequestID != "" || stored["request_id"] != "http-2" {
		t.Fatalf("overlong id: echoed %q, stored %v; want none and the HTTP id", d.RequestID, stored["request_id"])
	}
}

// When evidence lifts a declared state (the reference's section 1.3), the
// report and the record keep what the runtime declared beside the
// effective state.
func TestDeclaredAuthorizationStateIsWhatWasDeclared(t *testing.T) {
	t.Parallel()
	refs := []any{map[string]any{"source_id": "auth.session", "kind": "auth_event", "trust_tier": "verified",
		"redaction_status": "redacted", "provenance": "test", "freshness": map[string]any{"status": "fresh"}}}
	d, stored := decideRecorded(t, readEvent("", "none", refs), "http-3")
	if d.AuthorizationReport.DeclaredState.String() != "none" || d.AuthorizationReport.EffectiveState.String() != "authenticated" {
		t.Fatalf("report declared %s effective %s; want none and authenticated", d.AuthorizationReport.DeclaredState, d.AuthorizationReport.EffectiveState)
	}
	if stored["declared_auth"] != "none" || stored["effective_auth"] != "authenticated" {
		t.Fatalf("record declared %v effective %v", stored["declared_auth"], stored["effective_auth"])
	}
}

// Free text in an enum field reaches neither the answer nor the record.
func TestInvalidEnumTextNeverStored(t *testing.T) {
	t.Parallel()
	ev := readEvent("", "authenticated", []any{})
	ev["tool_category"] = strings.Repeat("private notes about a customer ", 1000)
	d, stored := decideRecorded(t, ev, "http-4")
	raw, _ := json.Marshal(stored)
	answer, _ := json.Marshal(envelope.From(d))
	if strings.Contains(string(raw), "private notes") || strings.Contains(string(answer), "private notes") ||
		!strings.HasPrefix(stored["declared_category"].(string), "invalid:len=") {
		t.Fatalf("record %s", raw)
	}
}
