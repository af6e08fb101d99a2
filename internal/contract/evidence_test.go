package contract_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gatedhq/gated/internal/contract"
	"github.com/gatedhq/gated/internal/envelope"
	"github.com/gatedhq/gated/internal/route"
)

func ago(d time.Duration) string { return fixedNow.Add(-d).Format(time.RFC3339Nano) }

type evidenceCase struct {
	name     string
	ref      obj
	route    route.Route
	blockers []string
}

// Section 4: each evidence check on an otherwise accepted public read.
func TestEvidenceChecks(t *testing.T) {
	t.Parallel()
	tests := []evidenceCase{
		{"clean", ref(nil), route.Accept, nil},

		// Missing authorization, by source id and by system_state summary.
		{"counterfactual source id", ref(obj{"source_id": "counterfactual.missing_authorization.refund"}), route.Defer, []string{route.CodeEvidenceMissingAuthorization}},
		{"system_state missing authorization", ref(obj{"kind": "system_state", "summary": "Missing Authorization for refund"}), route.Defer, []string{route.CodeEvidenceMissingAuthorization}},
		{"system_state removes verified authorization", ref(obj{"kind": "system_state", "summary": "this removes verified authorization"}), route.Defer, []string{route.CodeEvidenceMissingAuthorization}},
		{"other kind saying missing authorization", ref(obj{"summary": "missing authorization"}), route.Accept, nil},
		{"counterfactual elsewhere in id", ref(obj{"source_id": "x.counterfactual.missing_authorization"}), route.Accept, nil},

		// PII only when not redacted.
		{"email public", ref(obj{"redaction_status": "public", "summary": "mail ann@example.com"}), route.Refuse, []string{route.CodeEvidencePIILeak}},
		{"email unknown", ref(obj{"redaction_status": "unknown", "summary": "ann@example.com"}), route.Refuse, []string{route.CodeEvidencePIILeak}},
		{"phone public", ref(obj{"redaction_status": "public", "summary": "call 555-123-4567"}), route.Refuse, []string{route.CodeEvidencePIILeak}},
		{"phone in citation_url", ref(obj{"redaction_status": "public", "citation_url": "tel:555-123-4567"}), route.Refuse, []string{route.CodeEvidencePIILeak}},
		{"email redacted", ref(obj{"summary": "mail ann@example.com"}), route.Accept, nil},
		{"date is not a phone", ref(obj{"redaction_status": "public", "summary": "as of 2026-11-19"}), route.Accept, nil},
		{"secret wins over pii", ref(obj{"redaction_status": "public", "summary": "ann@example.com sk-abcdefghijklmnop"}), route.Refuse, []string{route.CodeEvidenceSecretLeak}},

		// Redaction status sensitive.
		{"sensitive", ref(obj{"redaction_status": "sensitive"}), route.Refuse, []string{route.CodeUnsafeRedactionStatus}},
		{"sensitive with secret", ref(obj{"redaction_status": "sensitive", "summary": "token=abcdefgh1"}), route.Refuse, []string{route.CodeEvidenceSecretLeak, route.CodeUnsafeRedactionStatus}},

		// Stale by status and by age (168 hours), retrieved_at first, then checked_at.
		{"status stale", ref(obj{"freshness": obj{"status": "stale"}}), route.Defer, []string{route.CodeStaleEvidence}},
		{"retrieved 1h ago", ref(obj{"retrieved_at": ago(time.Hour)}), route.Accept, nil},
		{"retrieved exactly 168h ago", ref(obj{"retrieved_at": ago(168 * time.Hour)}), route.Accept, nil},
		{"retrieved 168h1s ago", ref(obj{"retrieved_at": ago(168*time.Hour + time.Second)}), route.Defer, []string{route.CodeStaleEvidence}},
		{"retrieved 168h+1ns ago", ref(obj{"retrieved_at": ago(168*time.Hour + time.Nanosecond)}), route.Defer, []string{route.CodeStaleEvidence}},
		{"retrieved in an offset zone", ref(obj{"retrieved_at": fixedNow.Add(-169 * time.Hour).In(time.FixedZone("X", 5*3600)).Format(time.RFC3339)}), route.Defer, []string{route.CodeStaleEvidence}},
		{"retrieved without zone is UTC", ref(obj{"retrieved_at": "2026-11-13T11:59:59"}), route.Defer, []string{route.CodeStaleEvidence}},
		{"retrieved without zone fresh", ref(obj{"retrieved_at": "2026-11-13T12:00:00"}), route.Accept, nil},
		{"retrieved with space", ref(obj{"retrieved_at": "2026-11-13 11:00:00Z"}), route.Defer, []string{route.CodeStaleEvidence}},
		{"retrieved date only old", ref(obj{"retrieved_at": "2026-11-13"}), route.Defer, []string{route.CodeStaleEvidence}},
		{"retrieved date only fresh", ref(obj{"retrieved_at": "2026-11-14"}), route.Accept, nil},
		{"checked_at fallback stale", ref(obj{"freshness": obj{"status": "fresh", "checked_at": ago(200 * time.Hour)}}), route.Defer, []string{route.CodeStaleEvidence}},
		{"checked_at fallback fresh", ref(obj{"freshness": obj{"status": "fresh", "checked_at": ago(2 * time.Hour)}}), route.Accept, nil},
		{"retrieved_at wins over old checked_at", ref(obj{"retrieved_at": ago(time.Hour), "freshness": obj{"status": "fresh", "checked_at": ago(900 * time.Hour)}}), route.Accept, nil},
		{"old retrieved_at beats fresh checked_at", ref(obj{"retrieved_at": ago(900 * time.Hour), "freshness": obj{"status": "fresh", "checked_at": ago(time.Hour)}}), route.Defer, []string{route.CodeStaleEvidence}},
		{"unparseable retrieved_at", ref(obj{"retrieved_at": "yesterday"}), route.Defer, []string{route.CodeInvalidRetrievedAt}},
		{"unparseable checked_at", ref(obj{"freshness": obj{"status": "fresh", "checked_at": "20/11/2026"}}), route.Defer, []string{route.CodeInvalidRetrievedAt}},
		{"out of range date", ref(obj{"retrieved_at": "2026-13-40T00:00:00Z"}), route.Defer, []string{route.CodeInvalidRetrievedAt}},

		// Contradictions by word and by the contradicts list.
		{"contradicts list", ref(obj{"contradicts": []any{"claim.balance"}}), route.Defer, []string{route.CodeContradictoryEvidence}},
		{"empty contradicts list", ref(obj{"contradicts": []any{}}), route.Accept, nil},
		{"supports list", ref(obj{"supports": []any{"claim.balance"}}), route.Accept, nil},

		// Nothing weak changes the route: only warnings.
		{"weak trust unverified", ref(obj{"trust_tier": "unverified"}), route.Accept, nil},
		{"weak trust unknown", ref(obj{"trust_tier": "unknown"}), route.Accept, nil},
		{"unknown redaction", ref(obj{"redaction_status": "unknown"}), route.Accept, nil},
		{"unknown freshness", ref(obj{"freshness": obj{"status": "unknown"}}), route.Accept, nil},
	}
	for _, w := range []string{"contradict", "Conflicting", "inconsistent", "does not match", "disputes", "opposes"} {
		tests = append(tests, evidenceCase{"contradiction word " + w, ref(obj{"summary": "record " + w + " the request"}), route.Defer, []string{route.CodeContradictoryEvidence}})
	}
	for _, w := range []string{"evidence missing", "missing evidence", "information is missing", "record is missing",
		"not available", "unavailable", "unknown", "insufficient", "no evidence"} {
		tests = append(tests, evidenceCase{"missing-information phrase " + w, ref(obj{"summary": "Note: " + strings.ToUpper(w[:1]) + w[1:] + "."}), route.Defer, []string{route.CodeEvidenceMarksMissingInformation}})
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := decide(t, event(t, obj{"evidence_refs": []any{tt.ref}}))
			expect(t, d, tt.route, tt.blockers...)
			in := d.EvidenceIntegrity
			if in.HasErrors != (len(tt.blockers) > 0) || !slices.Equal(in.ErrorCodes, nonNil(tt.blockers)) {
				t.Errorf("integrity errors %v (has %v), want %v", in.ErrorCodes, in.HasErrors, tt.blockers)
			}
		})
	}
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// Every secret pattern in every text field of a ref is refused, even when
// the ref says it is redacted, and the secret is never echoed.
func TestEvidenceSecretLeak(t *testing.T) {
	t.Parallel()
	secrets := []string{"sk-abcdefghijklmnop", "AKIAIOSFODNN7EXAMPLE", "api_key=abcdefgh12", "password: hunter2hunter2",
		"secret=s3cr3tv4lue", "token:abcdefghij", "123-45-6789", "4111 1111 1111 1111", "4111-1111-1111-1111", "4111111111111"}
	for _, field := range []string{"source_id", "summary", "citation_url", "retrieval_url", "provenance"} {
		for _, s := range secrets {
			t.Run(field+"/"+s, func(t *testing.T) {
				d := decide(t, event(t, obj{"evidence_refs": []any{ref(obj{field: "see " + s})}}))
				expect(t, d, route.Refuse, route.CodeEvidenceSecretLeak)
				body, err := json.Marshal(envelope.From(d))
				if err != nil {
					t.Fatal(err)
				}
				if strings.Contains(string(body), s) {
					t.Errorf("the decision echoes the secret %q", s)
				}
			})
		}
	}
	// Near misses are not secrets.
	for _, s := range []string{"sk-short", "AKIA1234", "password reset", "2026-11-20", "order 123456"} {
		d := decide(t, event(t, obj{"evidence_refs": []any{ref(obj{"summary": s})}}))
		expect(t, d, route.Accept)
	}
}

// A ref without any source_id cannot pass the schema; Evaluate itself
// still defers it (for callers that build events directly).
func TestMissingSourceID(t *testing.T) {
	t.Parallel()
	ev := &route.Event{
		ToolName: "get_weather", ToolCategory: route.PublicRead, RiskDomain: "public_information",
		ProposedArguments: map[string]any{}, RecommendedRoute: route.Accept,
		EvidenceRefs: []route.EvidenceRef{{Kind: "other", TrustTier: "verified", RedactionStatus: "redacted",
			Freshness: route.Freshness{Status: "fresh"}, Provenance: "fixture"}},
	}
	e := contract.Evaluate(ev, route.PublicRead, fixedNow)
	o := route.Combine(e.Findings)
	if o.Route != route.Defer || !slices.Equal(o.HardBlockers, []string{route.CodeMissingSourceID}) {
		t.Errorf("outcome %+v", o)
	}
	if len(e.Integrity.Issues) == 0 || e.Integrity.Issues[0].Path != "$.evidence_refs[0]" {
		t.Errorf("issues %+v", e.Integrity.Issues)
	}
}

// Private reads, writes and unknown tools need refs; public reads do not.
func TestMissingEvidenceRefs(t *testing.T) {
	t.Parallel()
	tests := []struct {
		cat, state string
		route      route.Route
		blockers   []string
	}{
		{"public_read", "none", route.Accept, nil},
		{"private_read", "authenticated", route.Defer, []string{route.CodeMissingEvidenceRefs}},
		{"write", "confirmed", route.Defer, []string{route.CodeMissingEvidenceRefs}},
		{"unknown", "confirmed", route.Defer, []string{route.CodeUnknownToolCategory, route.CodeMissingEvidenceRefs}},
	}
	for _, tt := range tests {
		t.Run(tt.cat, func(t *testing.T) {
			d := decide(t, event(t, obj{"tool_name": "update_note", "tool_category": tt.cat, "authorization_state": tt.state,
				"evidence_refs": []any{}, "risk_domain": "personal_productivity", "recommended_route": "defer"}))
			expect(t, d, route.Stricter(tt.route, route.Defer), tt.blockers...)
			if d.Gate.Route != tt.route {
				t.Errorf("aana_route %s, want %s", d.Gate.Route, tt.route)
			}
		})
	}
}

// Warnings are reported and change no route.
func TestWarningsChangeNoRoute(t *testing.T) {
	t.Parallel()
	weak := ref(obj{"source_id": "auth.session", "kind": "auth_event", "trust_tier": "user_claimed",
		"redaction_status": "unknown", "freshness": obj{"status": "unknown"}})
	d := decide(t, event(t, obj{"tool_name": "get_statement", "tool_category": "private_read", "authorization_state": "authenticated",
		"evidence_refs": []any{weak}}))
	expect(t, d, route.Accept)
	want := []string{contract.WarnMissingTimestamp, contract.WarnWeakTrust, contract.WarnUnknownRedaction, contract.WarnUnknownFreshness}
	if in := d.EvidenceIntegrity; !in.HasWarnings || in.HasErrors || !slices.Equal(in.WarningCodes, want) {
		t.Errorf("integrity %+v, want warnings %v", in, want)
	}
	for _, w := range want {
		if !slices.Contains(d.Reasons, "evidence_warning:"+w) {
			t.Errorf("reasons %q lack %s", d.Reasons, w)
		}
	}
	// A public read without retrieved_at is not warned about it.
	d = decide(t, event(t, nil))
	if len(d.EvidenceIntegrity.WarningCodes) != 0 {
		t.Errorf("clean public read warned: %v", d.EvidenceIntegrity.WarningCodes)
	}
}

// An evidence error on one ref is located at that ref and lists its id.
func TestIntegrityLocatesRefs(t *testing.T) {
	t.Parallel()
	d := decide(t, event(t, obj{"evidence_refs": []any{ref(nil), ref(obj{"source_id": "doc.2", "summary": "conflicts with the order; record is missing"})}}))
	expect(t, d, route.Defer, route.CodeContradictoryEvidence, route.CodeEvidenceMarksMissingInformation)
	in := d.EvidenceIntegrity
	if !slices.Equal(in.ContradictoryEvidenceSourceIDs, []string{"doc.2"}) || !slices.Equal(in.MissingEvidenceSourceIDs, []string{"doc.2"}) {
		t.Errorf("integrity %+v", in)
	}
	for _, is := range in.Issues {
		if is.Level == "error" && is.Path != "$.evidence_refs[1]" {
			t.Errorf("issue %+v not at ref 1", is)
		}
	}
}
