package server_test

import (
	"net/http"
	"strings"
	"testing"
)

// An AuthZEN subject's id is scoped to its type (AuthZEN 1.0 section 5.1):
// a service account, client or group that a PEP names "alice" is not the
// person alice, and gets none of her grants (docs/policy.md, principals).
func TestAuthZENSubjectTypeIsNoPersonsPrincipal(t *testing.T) {
	t.Parallel()
	f := authzenServer(t, nil, nil)
	for _, typ := range []string{"service", "client", "group", "account", "case", "unknown"} {
		res := f.authzen(authzenEvaluation, `{"subject":{"type":"`+typ+`","id":"alice"},"action":{"name":"read"},"resource":{"type":"record","id":"record-1"}}`, nil)
		if res.body["decision"] != false || !strings.Contains(string(res.raw), "policy_no_grant") {
			t.Errorf("a %s named alice has alice's grants: %s", typ, res.raw)
		}
	}
	// The person types are persons: an employee alice is user://alice.
	for _, typ := range []string{"user", "identity", "employee", "student", "patient"} {
		res := f.authzen(authzenEvaluation, `{"subject":{"type":"`+typ+`","id":"alice"},"action":{"name":"read"},"resource":{"type":"record","id":"record-1"}}`, nil)
		if res.body["decision"] != true {
			t.Errorf("the %s alice has not her grants: %s", typ, res.raw)
		}
	}
}

// A COAZ-MCP tools/call's tool arguments are the agent's, never the PEP's
// request: policy reads the request from input.authzen, which nothing in
// the arguments reaches. bob, no writer, cannot write by naming alice
// inside the arguments, nor hard-delete by claiming role admin and a soft
// delete there.
func TestAuthZENToolArgumentsCannotPassForTheRequest(t *testing.T) {
	t.Parallel()
	f := authzenServer(t, nil, nil)
	for name, body := range map[string]string{
		"write as alice": `{"subject":{"type":"identity","id":"bob"},"action":{"name":"tools/call"},
			"resource":{"type":"tool","id":"write","properties":{"arguments":{"id":"record-1","subject":{"id":"alice"}}}}}`,
		"delete as an admin": `{"subject":{"type":"identity","id":"bob"},"action":{"name":"tools/call"},
			"resource":{"type":"tool","id":"delete","properties":{"arguments":{"subject":{"properties":{"role":"admin"}},"action":{"properties":{"soft":true}}}}}}`,
		"authzen in the arguments": `{"subject":{"type":"identity","id":"bob"},"action":{"name":"tools/call"},
			"resource":{"type":"tool","id":"write","properties":{"arguments":{"authzen":{"subject":{"id":"alice"}}}}}}`,
	} {
		if res := f.authzen(authzenEvaluation, body, nil); res.body["decision"] != false || !strings.Contains(string(res.raw), "fixture_") {
			t.Errorf("%s: bob's tool arguments passed for the request: %s", name, res.raw)
		}
	}
	// The same request's subject, sent as the subject, is alice's.
	if res := f.authzen(authzenEvaluation, `{"subject":{"type":"identity","id":"alice"},"action":{"name":"tools/call"},
		"resource":{"type":"tool","id":"write","properties":{"arguments":{"id":"record-1"}}}}`, nil); res.body["decision"] != true {
		t.Errorf("alice's tools/call of write: %s", res.raw)
	}
}

// input.authzen is set by the AuthZEN surface only: a /pre-tool-check
// event cannot set it, neither as a member of its own (the contract's
// schema has none) nor inside its arguments, where the fixture's rules,
// which read input.authzen, see no request and refuse alice's write.
func TestPreToolCheckCannotSetInputAuthZEN(t *testing.T) {
	t.Parallel()
	f := authzenServer(t, nil, nil)
	doc := `{"profile":"authzen-1.0","subject":{"type":"user","id":"alice"},"action":{"name":"write"},"resource":{"type":"record","id":"record-1"},"context":{}}`
	for name, tt := range map[string]struct {
		fields map[string]string
		code   string
	}{
		"a member of the event": {map[string]string{"authzen": doc}, "schema_validation_failed"},
		"in the arguments":      {map[string]string{"proposed_arguments": `{"authzen":` + doc + `}`}, "fixture_not_a_writer"},
	} {
		tt.fields["tool_name"], tt.fields["tool_category"], tt.fields["authorization_state"] = `"write"`, `"private_read"`, `"authenticated"`
		tt.fields["authorization_subject"] = `{"subject_type":"user","subject_ref":"alice"}`
		res := f.do(request{method: http.MethodPost, target: "/pre-tool-check", body: strings.NewReader(eventWith(t, tt.fields)),
			header: bearer(pepSecret)})
		if res.status != http.StatusOK || res.str("route") != "refuse" || !strings.Contains(string(res.raw), `"`+tt.code+`"`) {
			t.Errorf("%s: %d %s", name, res.status, res.raw)
		}
	}
}
