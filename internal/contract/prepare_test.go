package contract_test

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/gatedhq/gated/internal/contract"
	"github.com/gatedhq/gated/internal/route"
)

const versioned = route.ContractVersion

// 1.1: without schema_version a forbidden runtime accept is lowered,
// judged on the declared state; with it, nothing is lowered and the schema
// refuses.
func TestLowerForbiddenAccept(t *testing.T) {
	t.Parallel()
	tests := []struct {
		cat, state string
		refs       []any
		runtime    string // the normalised runtime route
	}{
		{"write", "none", []any{ref(nil)}, "ask"},
		{"write", "user_claimed", []any{claimRef}, "ask"},
		{"write", "authenticated", []any{authRef}, "ask"},
		{"write", "validated", []any{validRef}, "accept"},
		{"write", "confirmed", []any{approvalRef}, "accept"},
		{"private_read", "none", []any{ref(nil)}, "ask"},
		{"private_read", "user_claimed", []any{claimRef}, "ask"},
		{"private_read", "authenticated", []any{authRef}, "accept"},
		{"private_read", "validated", []any{validRef}, "accept"},
		{"unknown", "confirmed", []any{approvalRef}, "defer"},
		{"unknown", "none", []any{ref(nil)}, "defer"},
		{"public_read", "none", []any{ref(nil)}, "accept"},
	}
	for _, tt := range tests {
		t.Run(tt.cat+"/"+tt.state, func(t *testing.T) {
			over := obj{"tool_name": "update_note", "tool_category": tt.cat, "authorization_state": tt.state,
				"evidence_refs": tt.refs, "risk_domain": "personal_productivity"}
			p := contract.Prepare(event(t, over))
			if p.Event == nil {
				t.Fatalf("unversioned event refused: %+v %+v", p.Findings, p.ValidationErrors)
			}
			if p.RuntimeRoute != tt.runtime || p.Event.RecommendedRoute.String() != tt.runtime {
				t.Errorf("runtime route = %s / %s, want %s", p.RuntimeRoute, p.Event.RecommendedRoute, tt.runtime)
			}
			if p.Lifted || p.Event.AuthorizationState.String() != tt.state {
				t.Errorf("state = %s (lifted %v), want the declared %s", p.Event.AuthorizationState, p.Lifted, tt.state)
			}
			d := decide(t, event(t, over))
			if d.RuntimeRecommendedRoute == nil || d.RuntimeRecommendedRoute.String() != tt.runtime {
				t.Errorf("runtime_recommended_route = %v, want %s", d.RuntimeRecommendedRoute, tt.runtime)
			}

			// The same event with schema_version keeps its accept; where that
			// is forbidden the schema refuses it.
			over["schema_version"] = versioned
			p = contract.Prepare(event(t, over))
			if tt.runtime == "accept" {
				if p.Event == nil {
					t.Fatalf("versioned allowed accept refused: %+v", p.ValidationErrors)
				}
				return
			}
			if p.Event != nil || p.RuntimeRoute != "accept" {
				t.Fatalf("versioned forbidden accept was not refused: runtime %s", p.RuntimeRoute)
			}
			expect(t, decide(t, event(t, over)), route.Refuse, route.CodeSchemaValidationFailed)
		})
	}
}

// 1.1: in the unversioned branch the enums are checked exactly and
// proposed_arguments must be an object; with schema_version the same
// values fail the schema instead.
func TestNormalizationEnumsExact(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		over obj
		path string // of the schema error in the versioned branch
	}{
		{"tool_category case", obj{"tool_category": "Public_Read"}, "$.tool_category"},
		{"tool_category unknown", obj{"tool_category": "read"}, "$.tool_category"},
		{"tool_category number", obj{"tool_category": 1}, "$.tool_category"},
		{"authorization_state", obj{"authorization_state": "admin"}, "$.authorization_state"},
		{"authorization_state null", obj{"authorization_state": nil}, "$.authorization_state"},
		{"recommended_route", obj{"recommended_route": "allow"}, "$.recommended_route"},
		{"recommended_route padded", obj{"recommended_route": "accept "}, "$.recommended_route"},
		{"risk_domain", obj{"risk_domain": "weather"}, "$.risk_domain"},
		{"risk_domain bool", obj{"risk_domain": true}, "$.risk_domain"},
		{"proposed_arguments array", obj{"proposed_arguments": []any{"a"}}, "$.proposed_arguments"},
		{"proposed_arguments string", obj{"proposed_arguments": "city=Lisbon"}, "$.proposed_arguments"},
		{"proposed_arguments null", obj{"proposed_arguments": nil}, "$.proposed_arguments"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := decide(t, event(t, tt.over))
			expect(t, d, route.Refuse, route.CodeContractNormalizationFailed)

			tt.over["schema_version"] = versioned
			p := contract.Prepare(event(t, tt.over))
			if p.Event != nil {
				t.Fatal("versioned event with a bad enum was accepted")
			}
			if !hasPath(p.ValidationErrors, tt.path) {
				t.Errorf("validation errors %+v lack %s", p.ValidationErrors, tt.path)
			}
			expect(t, decide(t, event(t, tt.over)), route.Refuse, route.CodeSchemaValidationFailed)
		})
	}
}

// A missing required field is left to the schema, in both branches.
func TestRequiredFields(t *testing.T) {
	t.Parallel()
	for _, f := range []string{"tool_name", "tool_category", "authorization_state", "evidence_refs",
		"risk_domain", "proposed_arguments", "recommended_route"} {
		for _, v := range []string{"", versioned} {
			over := obj{f: absent}
			if v != "" {
				over["schema_version"] = v
			}
			p := contract.Prepare(event(t, over))
			if p.Event != nil {
				t.Fatalf("event without %s accepted", f)
			}
			found := false
			for _, e := range p.ValidationErrors {
				found = found || e.Path == "$" && e.Keyword == "required"
			}
			if !found {
				t.Errorf("without %s (version %q): errors %+v lack a required error at $", f, v, p.ValidationErrors)
			}
			expect(t, decide(t, event(t, over)), route.Refuse, route.CodeSchemaValidationFailed)
		}
	}
}

// 1.2: string refs and object refs get the reference's defaults.
func TestEvidenceRefDefaults(t *testing.T) {
	t.Parallel()
	p := contract.Prepare(event(t, obj{"evidence_refs": []any{
		"draft_id:123",
		obj{"source_id": "only.id"},
		obj{"source_id": "full", "kind": "policy", "trust_tier": "runtime", "redaction_status": "public",
			"freshness": obj{"status": "stale"}, "provenance": "connector"},
	}}))
	if p.Event == nil {
		t.Fatalf("refused: %+v", p.ValidationErrors)
	}
	want := []route.EvidenceRef{
		{SourceID: "draft_id:123", Kind: "other", TrustTier: "runtime", RedactionStatus: "redacted",
			Freshness: route.Freshness{Status: "fresh"}, Provenance: "runtime_quickstart"},
		{SourceID: "only.id", Kind: "other", TrustTier: "unknown", RedactionStatus: "unknown",
			Freshness: route.Freshness{Status: "unknown"}, Provenance: "runtime"},
		{SourceID: "full", Kind: "policy", TrustTier: "runtime", RedactionStatus: "public",
			Freshness: route.Freshness{Status: "stale"}, Provenance: "connector"},
	}
	if !reflect.DeepEqual(p.Event.EvidenceRefs, want) {
		t.Errorf("refs =\n %+v\nwant\n %+v", p.Event.EvidenceRefs, want)
	}
}

// Refs that are neither strings nor objects, or objects the defaults
// cannot repair, are schema errors located at the ref.
func TestEvidenceRefSchemaErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		ref  any
		path string
	}{
		{"number", 7, "$.evidence_refs[0]"},
		{"null", nil, "$.evidence_refs[0]"},
		{"array", []any{"x"}, "$.evidence_refs[0]"},
		{"no source_id", obj{"kind": "policy"}, "$.evidence_refs[0]"},
		{"empty source_id", obj{"source_id": ""}, "$.evidence_refs[0].source_id"},
		{"bad kind", obj{"source_id": "x", "kind": "email"}, "$.evidence_refs[0].kind"},
		{"bad trust", obj{"source_id": "x", "trust_tier": "high"}, "$.evidence_refs[0].trust_tier"},
		{"bad redaction", obj{"source_id": "x", "redaction_status": "none"}, "$.evidence_refs[0].redaction_status"},
		{"freshness string", obj{"source_id": "x", "freshness": "fresh"}, "$.evidence_refs[0].freshness"},
		{"freshness status", obj{"source_id": "x", "freshness": obj{"status": "new"}}, "$.evidence_refs[0].freshness.status"},
		{"freshness extra", obj{"source_id": "x", "freshness": obj{"status": "fresh", "ttl": 1}}, "$.evidence_refs[0].freshness"},
		{"empty provenance", obj{"source_id": "x", "provenance": ""}, "$.evidence_refs[0].provenance"},
		{"extra field", obj{"source_id": "x", "raw_text": "hello"}, "$.evidence_refs[0]"},
		{"contradicts not strings", obj{"source_id": "x", "contradicts": []any{1}}, "$.evidence_refs[0].contradicts[0]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			doc := event(t, obj{"evidence_refs": []any{tt.ref}})
			p := contract.Prepare(doc)
			if p.Event != nil {
				t.Fatal("accepted")
			}
			if !hasPath(p.ValidationErrors, tt.path) {
				t.Errorf("validation errors %+v lack %s", p.ValidationErrors, tt.path)
			}
			d := decide(t, doc)
			expect(t, d, route.Refuse, route.CodeSchemaValidationFailed)
			if len(d.ValidationErrors) == 0 {
				t.Error("decision carries no validation_errors")
			}
		})
	}
}

// 1.4: the schema's other rules, each located by a JSON path.
func TestSchemaValidation(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		over    obj
		path    string
		keyword string
	}{
		{"extra top-level field", obj{"raw_prompt": "x"}, "$", "additionalProperties"},
		{"empty tool_name", obj{"tool_name": ""}, "$.tool_name", "minLength"},
		{"tool_name number", obj{"tool_name": 3}, "$.tool_name", "type"},
		{"schema_version other", obj{"schema_version": "aana.agent_tool_precheck.v2"}, "$.schema_version", "const"},
		{"evidence_refs object", obj{"evidence_refs": obj{}}, "$.evidence_refs", "type"},
		{"request_id number", obj{"request_id": 5}, "$.request_id", "type"},
		{"user_intent array", obj{"user_intent": []any{}}, "$.user_intent", "type"},
		{"subject extra field", obj{"authorization_subject": obj{"subject_ref": "u", "name": "Ann"}}, "$.authorization_subject", "additionalProperties"},
		{"subject type", obj{"authorization_subject": obj{"subject_type": "robot"}}, "$.authorization_subject.subject_type", "enum"},
		{"write accept below validated", obj{"schema_version": versioned, "tool_category": "write",
			"authorization_state": "authenticated", "evidence_refs": []any{authRef}}, "$.authorization_state", "enum"},
		{"private_read accept below authenticated", obj{"schema_version": versioned, "tool_category": "private_read",
			"authorization_state": "user_claimed", "evidence_refs": []any{claimRef}}, "$.authorization_state", "enum"},
		{"unknown accept", obj{"schema_version": versioned, "tool_category": "unknown"}, "$.recommended_route", "enum"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := contract.Prepare(event(t, tt.over))
			if p.Event != nil {
				t.Fatal("accepted")
			}
			found := false
			for _, e := range p.ValidationErrors {
				found = found || e.Path == tt.path && e.Keyword == tt.keyword && e.Message != ""
			}
			if !found {
				t.Errorf("validation errors %+v lack %s %s", p.ValidationErrors, tt.path, tt.keyword)
			}
			expect(t, decide(t, event(t, tt.over)), route.Refuse, route.CodeSchemaValidationFailed)
		})
	}
}

// Every violation is reported, sorted by path.
func TestValidationErrorsSortedAndComplete(t *testing.T) {
	t.Parallel()
	p := contract.Prepare(event(t, obj{"schema_version": versioned, "tool_name": "", "risk_domain": "weather",
		"evidence_refs": []any{obj{"source_id": "x", "kind": "bad"}, obj{"source_id": ""}}}))
	var paths []string
	for _, e := range p.ValidationErrors {
		paths = append(paths, e.Path)
	}
	for _, want := range []string{"$.evidence_refs[0].kind", "$.evidence_refs[1].source_id", "$.risk_domain", "$.tool_name"} {
		if !slices.Contains(paths, want) {
			t.Errorf("paths %q lack %s", paths, want)
		}
	}
	if !slices.IsSorted(paths) {
		t.Errorf("paths not sorted: %q", paths)
	}
}

// 1.3: a runtime accept on a state too low for it is lifted to what the
// evidence supports when that is enough, and the lifted state is used.
func TestLiftAuthorization(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		over      obj
		lifted    bool
		state     string // effective state after Prepare, when valid
		route     route.Route
		blockers  []string
		schemaErr bool
	}{
		{"write user_claimed lifted to confirmed", obj{"tool_category": "write", "authorization_state": "user_claimed",
			"evidence_refs": []any{approvalRef}}, true, "confirmed", route.Accept, nil, false},
		{"write none lifted to validated", obj{"tool_category": "write", "authorization_state": "none",
			"evidence_refs": []any{validRef}}, true, "validated", route.Ask, []string{route.CodeWriteMissingExplicitConfirmation}, false},
		{"write user_claimed: authenticated evidence too weak", obj{"tool_category": "write", "authorization_state": "user_claimed",
			"evidence_refs": []any{authRef}}, false, "", route.Refuse, []string{route.CodeSchemaValidationFailed}, true},
		{"private_read none lifted to authenticated", obj{"tool_category": "private_read", "authorization_state": "none",
			"evidence_refs": []any{authRef}}, true, "authenticated", route.Accept, nil, false},
		{"private_read user_claimed: evidence too weak", obj{"tool_category": "private_read", "authorization_state": "user_claimed",
			"evidence_refs": []any{claimRef}}, false, "", route.Refuse, []string{route.CodeSchemaValidationFailed}, true},
		{"public_read never lifted", obj{"authorization_state": "none", "evidence_refs": []any{approvalRef}},
			false, "none", route.Accept, nil, false},
		{"runtime ask never lifted", obj{"tool_category": "write", "authorization_state": "none", "recommended_route": "ask",
			"evidence_refs": []any{approvalRef}}, false, "none", route.Ask, nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.over["schema_version"] = versioned
			tt.over["tool_name"] = "update_note"
			tt.over["risk_domain"] = "personal_productivity"
			p := contract.Prepare(event(t, tt.over))
			if p.Lifted != tt.lifted {
				t.Errorf("lifted = %v, want %v", p.Lifted, tt.lifted)
			}
			if (p.Event == nil) != tt.schemaErr {
				t.Fatalf("valid = %v, want %v: %+v", p.Event != nil, !tt.schemaErr, p.ValidationErrors)
			}
			if p.Event != nil && p.Event.AuthorizationState.String() != tt.state {
				t.Errorf("state = %s, want %s", p.Event.AuthorizationState, tt.state)
			}
			expect(t, decide(t, event(t, tt.over)), tt.route, tt.blockers...)
		})
	}
}

// Unversioned, lowering runs first, so there is nothing left to lift: the
// declared state stands and only section 2's rules apply to it.
func TestLoweringPrecedesLifting(t *testing.T) {
	t.Parallel()
	// write user_claimed + approval: lowered to ask; effective stays
	// user_claimed (only a declared none is raised by evidence).
	doc := event(t, obj{"tool_name": "update_note", "tool_category": "write", "authorization_state": "user_claimed",
		"evidence_refs": []any{approvalRef}, "risk_domain": "personal_productivity"})
	p := contract.Prepare(doc)
	if p.Lifted || p.RuntimeRoute != "ask" {
		t.Fatalf("lifted %v, runtime %s", p.Lifted, p.RuntimeRoute)
	}
	expect(t, decide(t, doc), route.Ask, route.CodeWriteMissingValidationOrConfirmation)

	// private_read none + auth_event: lowered to ask; evidence raises the
	// declared none to authenticated, so the gate accepts and the runtime's
	// ask is the final route, with no hard blocker.
	doc = event(t, obj{"tool_name": "get_statement", "tool_category": "private_read", "authorization_state": "none",
		"evidence_refs": []any{authRef}, "risk_domain": "personal_productivity"})
	d := decide(t, doc)
	expect(t, d, route.Ask)
	if d.Gate.Route != route.Accept || d.AuthorizationState != route.AuthAuthenticated {
		t.Errorf("aana_route %s, state %s", d.Gate.Route, d.AuthorizationState)
	}
}

// Prepare never changes the caller's document.
func TestPrepareDoesNotMutate(t *testing.T) {
	t.Parallel()
	doc := event(t, obj{"tool_category": "write", "authorization_state": "none", "evidence_refs": []any{"draft:1", obj{"source_id": "x"},
		// Complete (shared, not copied), and lacking one default (copied).
		obj{"source_id": "y", "kind": "approval", "trust_tier": "verified", "redaction_status": "redacted", "provenance": "p", "freshness": obj{"status": "fresh"}},
		obj{"source_id": "z", "kind": "approval", "trust_tier": "verified", "redaction_status": "redacted", "provenance": "p"}}})
	before := roundTrip(t, doc)
	contract.Prepare(doc)
	if !reflect.DeepEqual(doc, before) {
		t.Errorf("Prepare mutated its input:\n%v\n%v", before, doc)
	}
}

func hasPath(errs []contract.ValidationError, path string) bool {
	for _, e := range errs {
		if e.Path == path {
			return true
		}
	}
	return false
}

// Validation errors name paths and rules, never the offending values, so a
// secret sent in the wrong field is not echoed.
func TestValidationErrorsEchoNoValues(t *testing.T) {
	t.Parallel()
	const secret = "sk-abcdefghijklmnopqrstuv"
	for _, over := range []obj{
		{"schema_version": secret},
		{"schema_version": versioned, "risk_domain": secret},
		{"schema_version": versioned, "proposed_arguments": secret},
		{"schema_version": versioned, "tool_category": "unknown", "recommended_route": "accept", "agent_id": 1},
		{"evidence_refs": []any{obj{"source_id": "x", "kind": secret}}},
		{"evidence_refs": []any{obj{"source_id": "x", "freshness": obj{"status": secret}}}},
		{"authorization_subject": obj{"subject_type": secret}},
	} {
		p := contract.Prepare(event(t, over))
		if len(p.ValidationErrors) == 0 {
			t.Fatalf("%v: no validation errors", over)
		}
		for _, e := range p.ValidationErrors {
			if strings.Contains(e.Message, secret) || strings.Contains(e.Path, secret) {
				t.Errorf("validation error echoes the value: %+v", e)
			}
		}
	}
}

// Free text in an enum field is never echoed, logged or stored: the
// declared value becomes a marker with its length and fingerprint.
func TestInvalidEnumValuesBecomeMarkers(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("secret-free-text ", 1800)
	for _, versioned := range []bool{false, true} {
		doc := map[string]any{"tool_name": "x", "tool_category": long, "authorization_state": "root",
			"risk_domain": "finance", "recommended_route": "maybe", "evidence_refs": []any{}, "proposed_arguments": map[string]any{}}
		if versioned {
			doc["schema_version"] = "aana.agent_tool_precheck.v1"
		}
		p := contract.Prepare(doc)
		d := p.Declared
		if p.Event != nil || strings.Contains(d.ToolCategory, "secret") || !strings.HasPrefix(d.ToolCategory, "invalid:len=30600:sha256=") ||
			!strings.HasPrefix(d.AuthorizationState, "invalid:len=4:") || !strings.HasPrefix(d.RecommendedRoute, "invalid:") || d.RiskDomain != "finance" {
			t.Fatalf("versioned %v: declared %+v", versioned, d)
		}
	}
}

// Confirmed must be what preparing the event again with
// authorization_state confirmed gives, for every event an approval can be
// used on: the decision path no longer prepares it twice.
func TestConfirmedIsTheEventPreparedConfirmed(t *testing.T) {
	t.Parallel()
	tests := map[string]obj{
		"public read accepted":               {},
		"write accept lowered for its state": {"tool_category": "write", "authorization_state": "user_claimed"},
		"private read accept lowered":        {"tool_category": "private_read", "authorization_state": "none", "tool_name": "get_order"},
		"unknown category accept":            {"tool_category": "unknown", "recommended_route": "accept"},
		"write asked":                        {"tool_category": "write", "recommended_route": "ask", "authorization_state": "validated"},
		"versioned write lifted by evidence": {"schema_version": versioned, "tool_category": "write", "authorization_state": "user_claimed", "evidence_refs": []any{validRef}},
		"versioned write deferred":           {"schema_version": versioned, "tool_category": "write", "recommended_route": "defer", "authorization_state": "none"},
		"quickstart string refs":             {"tool_category": "write", "evidence_refs": []any{"note.1"}, "recommended_route": "ask"},
	}
	for name, over := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			doc := event(t, over)
			p := contract.Prepare(doc)
			if p.Event == nil {
				t.Fatalf("the event does not prepare: %+v", p.ValidationErrors)
			}
			got := p.Confirmed()
			want := contract.Prepare(override(doc, obj{"authorization_state": "confirmed"}))
			if !reflect.DeepEqual(got.Event, want.Event) || got.RuntimeRoute != want.RuntimeRoute ||
				len(got.Findings) != len(want.Findings) || len(got.ValidationErrors) != len(want.ValidationErrors) || got.Lifted != want.Lifted {
				t.Errorf("confirmed\n%+v (route %q)\nprepared confirmed\n%+v (route %q)", got.Event, got.RuntimeRoute, want.Event, want.RuntimeRoute)
			}
			if !reflect.DeepEqual(got.Declared, p.Declared) {
				t.Errorf("declared %+v, want what was sent %+v", got.Declared, p.Declared)
			}
			if p.Event.AuthorizationState == route.AuthConfirmed && over["authorization_state"] != "confirmed" {
				t.Error("Confirmed changed the event it was made from")
			}
		})
	}
	if contract.Prepare(obj{"tool_name": 1}).Confirmed() != nil {
		t.Error("an invalid event was confirmed")
	}
}
