package strictjson

import "testing"

func BenchmarkCheck(b *testing.B) {
	event := []byte(`{"tool_name":"get_weather","tool_category":"public_read","authorization_state":"none",` +
		`"evidence_refs":[{"source_id":"doc.weather","kind":"other","trust_tier":"verified","redaction_status":"redacted",` +
		`"freshness":{"status":"fresh"},"provenance":"fixture"}],"risk_domain":"public_information",` +
		`"proposed_arguments":{"city":"Lisbon"},"recommended_route":"accept"}`)
	b.ReportAllocs()
	for b.Loop() {
		if err := Check(event); err != nil {
			b.Fatal(err)
		}
	}
}
