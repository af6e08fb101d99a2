package authzen

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/gatedhq/gated/internal/route"
)

func decode(t *testing.T, s string) map[string]any {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader([]byte(s)))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		t.Fatal(err)
	}
	return m
}

const alice = `"subject":{"type":"user","id":"alice"}`

func TestParseEvaluationErrors(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ body, want string }{
		{`{"action":{"name":"read"},"resource":{"type":"record","id":"r"}}`, "subject is required"},
		{`{` + alice + `,"resource":{"type":"record","id":"r"}}`, "action is required"},
		{`{` + alice + `,"action":{"name":"read"}}`, "resource is required"},
		{`{"subject":null,"action":{"name":"read"},"resource":{"type":"record","id":"r"}}`, "subject is required"},
		{`{"subject":"alice","action":{"name":"read"},"resource":{"type":"record","id":"r"}}`, "subject must be an object, not a string"},
		{`{"subject":{"id":"alice"},"action":{"name":"read"},"resource":{"type":"record","id":"r"}}`, "subject.type is required"},
		{`{"subject":{"type":"user","id":""},"action":{"name":"read"},"resource":{"type":"record","id":"r"}}`, "subject.id must not be empty"},
		{`{` + alice + `,"action":{"name":123},"resource":{"type":"record","id":"r"}}`, "action.name must be a string, not a number"},
		{`{` + alice + `,"action":{},"resource":{"type":"record","id":"r"}}`, "action.name is required"},
		{`{` + alice + `,"action":{"name":"read","properties":[]},"resource":{"type":"record","id":"r"}}`, "action.properties must be an object, not an array"},
		{`{` + alice + `,"action":{"name":"read"},"resource":{"type":"record","id":true}}`, "resource.id must be a string, not a boolean"},
		{`{` + alice + `,"action":{"name":"read"},"resource":{"type":"record","id":"r"},"context":"x"}`, "context must be an object, not a string"},
	} {
		_, err := ParseEvaluation(decode(t, tt.body))
		if err == nil || err.Error() != tt.want {
			t.Errorf("%s: error %v, want %q", tt.body, err, tt.want)
		}
	}
}

// Unknown fields are ignored wherever they are, and properties are kept
// as sent.
func TestParseEvaluationIgnoresUnknownFields(t *testing.T) {
	t.Parallel()
	e, err := ParseEvaluation(decode(t, `{"subject":{"type":"user","id":"alice","extra":1,"properties":{"role":"admin"}},
		"action":{"name":"read","x":[]},"resource":{"type":"record","id":"r","y":{}},"foo":"bar","futureField":{"nested":true}}`))
	if err != nil {
		t.Fatal(err)
	}
	if e.Subject.ID != "alice" || e.Subject.Properties["role"] != "admin" || e.Action.Name != "read" || e.Resource.ID != "r" || e.Context != nil {
		t.Errorf("%+v", e)
	}
}

func TestParseEvaluationsDefaults(t *testing.T) {
	t.Parallel()
	b, err := ParseEvaluations(decode(t, `{`+alice+`,"action":{"name":"write"},
		"resource":{"type":"record","id":"record-1","properties":{"status":"active"}},"context":{"time":"t0"},
		"evaluations":[{}, {"resource":{"type":"record","id":"record-2"},"context":{"source":"override"}},
			{"subject":{"type":"user","id":"bob"}}, "nope", {"resource":{"type":"record"}}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if b.Single || b.Semantic != ExecuteAll || len(b.Items) != 5 {
		t.Fatalf("%+v", b)
	}
	first := b.Items[0].Evaluation
	if first.Subject.ID != "alice" || first.Action.Name != "write" || first.Resource.Properties["status"] != "active" || first.Context["time"] != "t0" {
		t.Errorf("item 0 did not inherit every default: %+v", first)
	}
	// A key the item carries replaces the default whole: no status, and
	// the context is the item's only.
	second := b.Items[1].Evaluation
	if second.Resource.ID != "record-2" || second.Resource.Properties != nil || !reflect.DeepEqual(second.Context, map[string]any{"source": "override"}) {
		t.Errorf("item 1 merged inside an entity: %+v %+v", second.Resource, second.Context)
	}
	if b.Items[2].Evaluation.Subject.ID != "bob" || b.Items[2].Evaluation.Resource.ID != "record-1" {
		t.Errorf("item 2: %+v", b.Items[2])
	}
	if err := b.Items[3].Err; err == nil || err.Error() != "evaluations[3] must be an object, not a string" {
		t.Errorf("item 3: %v", err)
	}
	if err := b.Items[4].Err; err == nil || err.Error() != "evaluations[4].resource.id is required" {
		t.Errorf("item 4: %v", err)
	}
}

func TestParseEvaluationsMissingWithoutDefault(t *testing.T) {
	t.Parallel()
	b, err := ParseEvaluations(decode(t, `{`+alice+`,"action":{"name":"read"},"evaluations":[{"resource":{"type":"record","id":"r"}},{}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if b.Items[0].Err != nil {
		t.Errorf("item 0: %v", b.Items[0].Err)
	}
	if err := b.Items[1].Err; err == nil || err.Error() != "evaluations[1].resource is required" {
		t.Errorf("item 1: %v", err)
	}
}

func TestParseEvaluationsSingle(t *testing.T) {
	t.Parallel()
	for _, evs := range []string{``, `,"evaluations":[]`, `,"evaluations":null`} {
		b, err := ParseEvaluations(decode(t, `{`+alice+`,"action":{"name":"read"},"resource":{"type":"record","id":"r"}`+evs+`}`))
		if err != nil || !b.Single || len(b.Items) != 1 || b.Items[0].Evaluation.Resource.ID != "r" {
			t.Errorf("%q: %+v %v", evs, b, err)
		}
		// Without evaluations the top level is the request: it must be whole.
		if _, err := ParseEvaluations(decode(t, `{`+alice+`,"action":{"name":"read"}`+evs+`}`)); err == nil || err.Error() != "resource is required" {
			t.Errorf("%q without resource: %v", evs, err)
		}
	}
}

func TestParseEvaluationsErrors(t *testing.T) {
	t.Parallel()
	many := strings.TrimSuffix(strings.Repeat(`{},`, MaxEvaluations+1), ",")
	for _, tt := range []struct{ body, want string }{
		{`{"evaluations":{}}`, "evaluations must be an array, not an object"},
		{`{"evaluations":[` + many + `]}`, fmt.Sprintf("evaluations holds %d evaluations; gated decides at most %d in one request", MaxEvaluations+1, MaxEvaluations)},
		{`{"options":[],"evaluations":[{}]}`, "options must be an object, not an array"},
		{`{"options":{"evaluations_semantic":1},"evaluations":[{}]}`, "options.evaluations_semantic must be a string, not a number"},
		{`{"options":{"evaluations_semantic":"first_deny"},"evaluations":[{}]}`, `options.evaluations_semantic "first_deny" is none of execute_all, deny_on_first_deny, permit_on_first_permit`},
		// A malformed default pertains to the whole request.
		{`{"subject":"alice","evaluations":[{}]}`, "subject must be an object, not a string"},
		{`{"subject":{"type":"user"},"evaluations":[{}]}`, "subject.id is required"},
	} {
		_, err := ParseEvaluations(decode(t, tt.body))
		if err == nil || err.Error() != tt.want {
			t.Errorf("%.80s: error %v, want %q", tt.body, err, tt.want)
		}
	}
	// Exactly the bound is fine; unknown options are ignored.
	b, err := ParseEvaluations(decode(t, `{"options":{"evaluations_semantic":"deny_on_first_deny","later":1},"evaluations":[`+
		strings.TrimSuffix(strings.Repeat(`{},`, MaxEvaluations), ",")+`]}`))
	if err != nil || len(b.Items) != MaxEvaluations || b.Semantic != DenyOnFirstDeny {
		t.Errorf("%v", err)
	}
}

// Run answers in request order, a failed item false, and stops where the
// semantic says, counting a failure as a deny.
func TestRunSemantics(t *testing.T) {
	t.Parallel()
	items := func(ds ...string) []Item {
		out := make([]Item, len(ds))
		for i, d := range ds {
			if d == "x" {
				out[i].Err = errors.New("broken")
				continue
			}
			out[i].Evaluation.Action = &Action{Name: d}
		}
		return out
	}
	decide := func(e Evaluation) Result { return Result{Decision: e.Action.Name == "t"} }
	for _, tt := range []struct {
		sem   Semantic
		items []Item
		want  []bool
	}{
		{ExecuteAll, items("t", "f", "x", "t"), []bool{true, false, false, true}},
		{DenyOnFirstDeny, items("t", "t", "f", "t"), []bool{true, true, false}},
		{DenyOnFirstDeny, items("t", "x", "t"), []bool{true, false}},
		{DenyOnFirstDeny, items("t", "t"), []bool{true, true}},
		{PermitOnFirstPermit, items("f", "x", "t", "f"), []bool{false, false, true}},
		{PermitOnFirstPermit, items("f", "f"), []bool{false, false}},
	} {
		b := &Batch{Items: tt.items, Semantic: tt.sem}
		got := b.Run(decide)
		var ds []bool
		for _, r := range got {
			ds = append(ds, r.Decision)
		}
		if !reflect.DeepEqual(ds, tt.want) {
			t.Errorf("%s: %v, want %v", tt.sem, ds, tt.want)
		}
	}
	r := (&Batch{Items: items("x")}).Run(decide)[0]
	if c, ok := r.Context.(ErrorContext); !ok || c.Error.Status != 400 || c.Error.Message != "broken" {
		t.Errorf("a failed item's context: %+v", r.Context)
	}
}

func call(t *testing.T, body string) (*Call, error) {
	t.Helper()
	e, err := ParseEvaluation(decode(t, body))
	if err != nil {
		t.Fatal(err)
	}
	return e.Call()
}

// The generic mapping: the action is the tool, the subject the event's
// authorization subject, the request less context.gated the arguments.
func TestCallGeneric(t *testing.T) {
	t.Parallel()
	c, err := call(t, `{"subject":{"type":"user","id":"alice","properties":{"role":"admin"}},"action":{"name":"write","properties":{"soft":true}},
		"resource":{"type":"record","id":"record-1"},"context":{"ip":"192.0.2.1","agent":"agent-7","gated":{"risk_domain":"finance","user_intent":"tidy up"}}}`)
	if err != nil {
		t.Fatal(err)
	}
	doc := c.Event(route.PrivateRead)
	want := map[string]any{
		"subject":  map[string]any{"type": "user", "id": "alice", "properties": map[string]any{"role": "admin"}},
		"action":   map[string]any{"name": "write", "properties": map[string]any{"soft": true}},
		"resource": map[string]any{"type": "record", "id": "record-1"},
		"context":  map[string]any{"ip": "192.0.2.1", "agent": "agent-7"},
	}
	if !reflect.DeepEqual(doc["proposed_arguments"], want) {
		t.Errorf("arguments %v", doc["proposed_arguments"])
	}
	want["profile"] = ProfileAuthZEN
	if !reflect.DeepEqual(c.Request, want) {
		t.Errorf("request %v", c.Request)
	}
	if doc["tool_name"] != "write" || doc["tool_category"] != "private_read" || doc["agent_id"] != "agent-7" ||
		doc["authorization_state"] != "authenticated" || doc["risk_domain"] != "finance" || doc["user_intent"] != "tidy up" ||
		doc["recommended_route"] != "accept" {
		t.Errorf("event %v", doc)
	}
	if s := doc["authorization_subject"].(map[string]any); s["subject_type"] != "user" || s["subject_ref"] != "alice" {
		t.Errorf("subject %v", s)
	}
	refs := doc["evidence_refs"].([]any)
	ref := refs[0].(map[string]any)
	if len(refs) != 1 || ref["kind"] != "auth_event" || strings.Contains(fmt.Sprint(ref), "alice") ||
		!strings.HasPrefix(ref["source_id"].(string), "authzen.subject.sha256-") {
		t.Errorf("the subject's evidence ref %v", refs)
	}
	if c.Binds != nil {
		t.Errorf("binds %v: the arguments bind the subject already", c.Binds)
	}
	// A tool no catalog describes is declared unknown: at least defer.
	if doc := c.Event(route.Unknown); doc["tool_category"] != "unknown" || doc["recommended_route"] != "defer" {
		t.Errorf("unknown tool: %v %v", doc["tool_category"], doc["recommended_route"])
	}
}

func TestCallSubjects(t *testing.T) {
	t.Parallel()
	c, err := call(t, `{"subject":{"type":"agent","id":"bot-1"},"action":{"name":"read"},"resource":{"type":"record","id":"r"}}`)
	if err != nil || c.AgentID != "bot-1" || c.Subject != nil {
		t.Errorf("agent subject: %+v %v", c, err)
	}
	if _, err := call(t, `{"subject":{"type":"agent","id":"bot-1"},"action":{"name":"read"},"resource":{"type":"record","id":"r"},"context":{"agent":"bot-2"}}`); err == nil {
		t.Error("an agent subject and another context.agent were accepted")
	}
	c, _ = call(t, `{"subject":{"type":"spaceship","id":"x"},"action":{"name":"read"},"resource":{"type":"record","id":"r"}}`)
	if c.Subject.SubjectType != "unknown" {
		t.Errorf("type %q", c.Subject.SubjectType)
	}
}

func TestCallGatedContext(t *testing.T) {
	t.Parallel()
	ref := `{"source_id":"gated-approval:0193","kind":"approval","trust_tier":"runtime","redaction_status":"public","freshness":{"status":"fresh"},"provenance":"gated"}`
	c, err := call(t, `{`+alice+`,"action":{"name":"read"},"resource":{"type":"record","id":"r"},
		"context":{"gated":{"evidence_refs":[`+ref+`],"authorization_state":"validated","recommended_route":"ask","later":1}}}`)
	if err != nil {
		t.Fatal(err)
	}
	doc := c.Event(route.Write)
	if refs := doc["evidence_refs"].([]any); len(refs) != 2 || refs[1].(map[string]any)["source_id"] != "gated-approval:0193" {
		t.Errorf("refs %v", refs)
	}
	if doc["authorization_state"] != "validated" || doc["recommended_route"] != "ask" {
		t.Errorf("event %v", doc)
	}
	if _, ok := doc["proposed_arguments"].(map[string]any)["context"]; ok {
		t.Errorf("context.gated reached the arguments: %v", doc["proposed_arguments"])
	}
	for _, tt := range []struct{ gated, want string }{
		{`[]`, "context.gated must be an object, not an array"},
		{`{"evidence_refs":{}}`, "context.gated.evidence_refs must be an array, not an object"},
		{`{"authorization_state":"root"}`, `context.gated.authorization_state "root" is no authorization state (none, user_claimed, authenticated, validated, confirmed)`},
		{`{"recommended_route":"maybe"}`, `context.gated.recommended_route "maybe" is none of accept, ask, defer, refuse`},
		{`{"risk_domain":7}`, "context.gated.risk_domain must be a string, not a number"},
		{`{"user_intent":false}`, "context.gated.user_intent must be a string, not a boolean"},
	} {
		_, err := call(t, `{`+alice+`,"action":{"name":"read"},"resource":{"type":"record","id":"r"},"context":{"gated":`+tt.gated+`}}`)
		if err == nil || err.Error() != tt.want {
			t.Errorf("%s: %v, want %q", tt.gated, err, tt.want)
		}
	}
	if _, err := call(t, `{`+alice+`,"action":{"name":"read"},"resource":{"type":"record","id":"r"},"context":{"agent":7}}`); err == nil ||
		err.Error() != "context.agent must be a string, not a number" {
		t.Errorf("agent: %v", err)
	}
}

// COAZ-MCP Draft 1's default tools/call mapping: the person is the
// subject, the agent context.agent, the tool the resource.
func TestCallCOAZMCPToolsCall(t *testing.T) {
	t.Parallel()
	c, err := call(t, `{"subject":{"type":"identity","id":"alice@example.com"},"action":{"name":"tools/call"},
		"resource":{"type":"tool","id":"get_customer","properties":{"arguments":{"id":"cust-12345"}}},
		"context":{"agent":"http://agentprovider.com/agent-app-id","case":"case-67890"}}`)
	if err != nil {
		t.Fatal(err)
	}
	doc := c.Event(route.PrivateRead)
	if doc["tool_name"] != "get_customer" || doc["agent_id"] != "http://agentprovider.com/agent-app-id" ||
		!reflect.DeepEqual(doc["proposed_arguments"], map[string]any{"id": "cust-12345"}) {
		t.Errorf("event %v", doc)
	}
	if s := doc["authorization_subject"].(map[string]any); s["subject_type"] != "user" || s["subject_ref"] != "alice@example.com" {
		t.Errorf("subject %v", s)
	}
	// Policy reads the request as input.authzen, apart from the tool's
	// arguments; an approval binds all of it, as the arguments are the
	// tool's own.
	want := map[string]any{
		"profile": ProfileCOAZMCP,
		"subject": map[string]any{"type": "identity", "id": "alice@example.com"},
		"action":  map[string]any{"name": "tools/call"},
		"resource": map[string]any{"type": "tool", "id": "get_customer",
			"properties": map[string]any{"arguments": map[string]any{"id": "cust-12345"}}},
		"context": map[string]any{"agent": "http://agentprovider.com/agent-app-id", "case": "case-67890"},
	}
	if !reflect.DeepEqual(c.Request, want) {
		t.Errorf("request %v", c.Request)
	}
	if !reflect.DeepEqual(c.Binds, map[string]any{"authzen": want}) {
		t.Errorf("binds %v", c.Binds)
	}
	// The draft's default mapping sends no arguments: the tool is checked
	// as called with none.
	c, err = call(t, `{"subject":{"type":"identity","id":"a"},"action":{"name":"tools/call"},"resource":{"type":"tool","id":"get_weather"}}`)
	if err != nil || !reflect.DeepEqual(c.Event(route.PublicRead)["proposed_arguments"], map[string]any{}) {
		t.Errorf("%v %v", c, err)
	}
	for _, tt := range []struct{ resource, want string }{
		{`{"type":"mcp_server","id":"x"}`, `a COAZ-MCP tools/call names its tool as the resource, of type "tool", not "mcp_server"`},
		{`{"type":"tool","id":"x","properties":{"arguments":"a=1"}}`, "resource.properties.arguments must be an object, not a string"},
	} {
		_, err := call(t, `{"subject":{"type":"identity","id":"a"},"action":{"name":"tools/call"},"resource":`+tt.resource+`}`)
		if err == nil || err.Error() != tt.want {
			t.Errorf("%s: %v, want %q", tt.resource, err, tt.want)
		}
	}
}
