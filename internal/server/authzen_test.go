package server_test

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gatedhq/gated/internal/approval/approvaltest"
	approvalpg "github.com/gatedhq/gated/internal/approval/postgres"
	"github.com/gatedhq/gated/internal/audit"
	"github.com/gatedhq/gated/internal/catalog"
	"github.com/gatedhq/gated/internal/gate"
	"github.com/gatedhq/gated/internal/kill"
	"github.com/gatedhq/gated/internal/pgtest"
	"github.com/gatedhq/gated/internal/policy"
	"github.com/gatedhq/gated/internal/server"
	"github.com/gatedhq/gated/internal/testtree"
)

// Bad input is a 400 with a message that says what is wrong, never a 5xx
// and never a decision.
func TestAuthZENBadInput(t *testing.T) {
	t.Parallel()
	f := authzenServer(t, nil, nil)
	one := `{"subject":{"type":"user","id":"alice"},"action":{"name":"read"},"resource":{"type":"record","id":"record-1"}}`
	many := `{"subject":{"type":"user","id":"alice"},"action":{"name":"read"},"evaluations":[` +
		strings.TrimSuffix(strings.Repeat(`{"resource":{"type":"record","id":"record-1"}},`, 65), ",") + `]}`
	deep := `{"subject":{"type":"user","id":"alice","properties":` + strings.Repeat(`{"a":`, 70) + `1` + strings.Repeat(`}`, 70) +
		`},"action":{"name":"read"},"resource":{"type":"record","id":"record-1"}}`
	for _, tt := range []struct {
		name, path, body, want string
	}{
		{"malformed", authzenEvaluation, `{"subject":`, "malformed JSON"},
		{"not an object", authzenEvaluation, `[` + one + `]`, "the body must be a JSON object, not an array"},
		{"trailing data", authzenEvaluation, one + `{}`, "unexpected data after the top-level value"},
		{"repeated key", authzenEvaluation, `{"subject":{"type":"user","id":"alice"},"subject":{"type":"user","id":"bob"},"action":{"name":"read"},"resource":{"type":"record","id":"r"}}`, `the body is ambiguous: the key "/subject" is given more than once, which another JSON reader (the sender's, or the tool's) may read otherwise than gated does`},
		{"wrong type", authzenEvaluation, `{"subject":{"type":"user","id":"alice"},"action":{"name":"read"},"resource":{"type":"record","id":["r"]}}`, "resource.id must be a string, not an array"},
		{"deep", authzenEvaluation, deep, "JSON nesting exceeds 64 levels"},
		{"huge batch", authzenEvaluations, many, "evaluations holds 65 evaluations; gated decides at most 64 in one request"},
		{"unknown semantic", authzenEvaluations, `{"options":{"evaluations_semantic":"all"},"evaluations":[` + one + `]}`, `options.evaluations_semantic "all" is none of`},
		{"evaluations not an array", authzenEvaluations, `{"evaluations":"all of them"}`, "evaluations must be an array, not a string"},
		{"no evaluations, no resource", authzenEvaluations, `{"subject":{"type":"user","id":"alice"},"action":{"name":"read"}}`, "resource is required"},
		{"bad context.gated", authzenEvaluation, `{"subject":{"type":"user","id":"alice"},"action":{"name":"read"},"resource":{"type":"record","id":"record-1"},"context":{"gated":{"authorization_state":"root"}}}`, "context.gated.authorization_state"},
		{"COAZ without a tool", authzenEvaluation, `{"subject":{"type":"identity","id":"alice"},"action":{"name":"tools/call"},"resource":{"type":"record","id":"record-1"}}`, "names its tool as the resource"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			res := f.authzen(tt.path, tt.body, nil)
			if res.status != http.StatusBadRequest || !strings.Contains(res.str("error"), tt.want) {
				t.Errorf("%d %s; want 400 saying %q", res.status, res.raw, tt.want)
			}
		})
	}
	// Too large a body: 413, as on every route.
	big := `{"subject":{"type":"user","id":"alice","properties":{"x":"` + strings.Repeat("a", 70<<10) + `"}},"action":{"name":"read"},"resource":{"type":"record","id":"r"}}`
	if res := f.authzen(authzenEvaluation, big, nil); res.status != http.StatusRequestEntityTooLarge {
		t.Errorf("a body over the limit: %d", res.status)
	}
}

// The routes are guarded as /pre-tool-check is: a token with scope
// pre_tool_check, and the rate limit.
func TestAuthZENAuthAndLimits(t *testing.T) {
	t.Parallel()
	one := `{"subject":{"type":"user","id":"alice"},"action":{"name":"read"},"resource":{"type":"record","id":"record-1"}}`
	f := authzenServer(t, nil, func(d *server.Deps) { d.RateLimit = 2 })
	for _, path := range []string{authzenEvaluation, authzenEvaluations} {
		if r := f.do(request{method: http.MethodPost, target: path, body: strings.NewReader(one)}); r.status != http.StatusUnauthorized {
			t.Errorf("%s without a token: %d", path, r.status)
		}
		if r := f.do(request{method: http.MethodPost, target: path, body: strings.NewReader(one), header: bearer(readerSecret)}); r.status != http.StatusForbidden {
			t.Errorf("%s with a token without pre_tool_check: %d", path, r.status)
		}
	}
	f.authzen(authzenEvaluation, one, nil)
	f.authzen(authzenEvaluations, one, nil)
	checkRateLimited(t, f.authzen(authzenEvaluation, one, nil))
	// GET is not the API.
	if r := f.do(request{method: http.MethodGet, target: authzenEvaluation, header: bearer(pepSecret)}); r.status != http.StatusMethodNotAllowed {
		t.Errorf("GET: %d", r.status)
	}
}

// Principals come from the subject only when the PEP's token vouches for
// its subjects: without trust_event_principals, alice is no principal,
// and the fixture's grants to user://alice do not apply.
func TestAuthZENSubjectPrincipalNeedsTrust(t *testing.T) {
	t.Parallel()
	f := authzenServer(t, nil, nil)
	one := `{"subject":{"type":"user","id":"alice"},"action":{"name":"read"},"resource":{"type":"record","id":"record-1"}}`
	res := f.do(request{method: http.MethodPost, target: authzenEvaluation, body: strings.NewReader(one), header: bearer(readerSecret)})
	if res.status != http.StatusForbidden {
		t.Fatalf("%d", res.status)
	}
	// The runtime token of the other tests holds pre_tool_check and no trust.
	g := authzenServer(t, nil, func(d *server.Deps) { d.Tokens = testTokens(t) })
	res = g.do(request{method: http.MethodPost, target: authzenEvaluation, body: strings.NewReader(one), header: bearer(runtimeSecret)})
	c, _ := res.body["context"].(map[string]any)
	if res.status != http.StatusOK || res.body["decision"] != false || !strings.Contains(string(res.raw), "policy_no_grant") {
		t.Errorf("an untrusted subject was granted: %d %v", res.status, c)
	}
}

// Short-circuiting semantics stop at the first deny or permit; a batch
// answers in request order.
func TestAuthZENSemantics(t *testing.T) {
	t.Parallel()
	f := authzenServer(t, nil, nil)
	body := func(sem string) string {
		return `{"subject":{"type":"user","id":"bob"},"resource":{"type":"record","id":"record-1"},"options":{"evaluations_semantic":"` + sem + `"},
			"evaluations":[{"action":{"name":"read"}},{"action":{"name":"write"}},{"action":{"name":"read"}},{}]}`
	}
	for sem, want := range map[string][]bool{
		"execute_all":            {true, false, true, false},
		"deny_on_first_deny":     {true, false},
		"permit_on_first_permit": {true},
	} {
		res := f.authzen(authzenEvaluations, body(sem), nil)
		if got := decisions(t, res); res.status != http.StatusOK || !equalBools(got, want) {
			t.Errorf("%s: %d %v, want %v", sem, res.status, got, want)
		}
	}
	// The failed item says why; a decided one carries gated's answer.
	res := f.authzen(authzenEvaluations, body("execute_all"), nil)
	evs := res.body["evaluations"].([]any)
	refused := evs[1].(map[string]any)["context"].(map[string]any)
	if refused["route"] != "refuse" || refused["decision_id"] == "" || !strings.Contains(string(res.raw), "fixture_not_a_writer") {
		t.Errorf("bob's write: %v", refused)
	}
	failed := evs[3].(map[string]any)["context"].(map[string]any)["error"].(map[string]any)
	if failed["message"] != "evaluations[3].action is required" || failed["status"] != json.Number("400") && failed["status"] != float64(400) {
		t.Errorf("the failed item: %v", failed)
	}
}

// A COAZ-MCP Draft 1 tools/call is read on the same endpoint: the tool is
// the resource, the person the subject, the agent context.agent.
func TestAuthZENCOAZMCPToolsCall(t *testing.T) {
	t.Parallel()
	f := authzenServer(t, nil, nil)
	call := func(tool, subject string) *response {
		return f.authzen(authzenEvaluation, `{"subject":{"type":"identity","id":"`+subject+`"},"action":{"name":"tools/call"},
			"resource":{"type":"tool","id":"`+tool+`","properties":{"arguments":{"id":"record-1"}}},"context":{"agent":"agent-app"}}`, nil)
	}
	// The fixture's read is granted to user://alice: an identity is a user.
	if r := call("read", "alice"); r.status != http.StatusOK || r.body["decision"] != true {
		t.Errorf("alice's tools/call of read: %d %s", r.status, r.raw)
	}
	if r := call("read", "mallory"); r.body["decision"] != false || !strings.Contains(string(r.raw), "policy_no_grant") {
		t.Errorf("mallory's tools/call of read: %s", r.raw)
	}
	// A tool no catalog describes: no action for a grant to name.
	if r := call("rm_rf", "alice"); r.body["decision"] != false || !strings.Contains(strings.Join(authzenBlockers(r.body), ","), "tool_not_in_catalog") {
		t.Errorf("an unknown tool: %s", r.raw)
	}
}

// Without --public-url the PDP is the URL the discovery request reached.
// Its Host is the client's (no Host guard on a listener that is neither
// loopback nor given --allowed-hosts), so the answer must not be cached
// and served to another client; with --public-url it may be.
func TestAuthZENDiscoveryWithoutPublicURL(t *testing.T) {
	t.Parallel()
	f := authzenServer(t, nil, func(d *server.Deps) { d.PublicURL = "" })
	res := f.do(request{method: http.MethodGet, target: "/.well-known/authzen-configuration", header: map[string]string{"X-Request-ID": "disc-1"}})
	if res.status != http.StatusOK || res.str("policy_decision_point") != "http://example.com" ||
		res.str("access_evaluation_endpoint") != "http://example.com/access/v1/evaluation" || res.header.Get("X-Request-ID") != "disc-1" ||
		res.header.Get("Cache-Control") != "no-store" {
		t.Errorf("%d %s %v", res.status, res.raw, res.header)
	}
	res = f.do(request{method: http.MethodGet, target: "/.well-known/authzen-configuration", host: "evil.example"})
	if res.str("policy_decision_point") != "http://evil.example" || res.header.Get("Cache-Control") != "no-store" {
		t.Errorf("a foreign Host: %s %v", res.raw, res.header)
	}
	// The Host guard (a loopback listener, or --allowed-hosts) refuses a
	// Host it does not allow before discovery answers.
	g := authzenServer(t, nil, func(d *server.Deps) {
		d.PublicURL, d.Hosts = "", server.Hosts{Enforce: true, Allowed: []string{"pdp.example.com"}}
	})
	if res := g.do(request{method: http.MethodGet, target: "/.well-known/authzen-configuration", host: "evil.example"}); res.status != http.StatusForbidden {
		t.Errorf("a foreign Host past the guard: %d %s", res.status, res.raw)
	}
	res = g.do(request{method: http.MethodGet, target: "/.well-known/authzen-configuration", host: "pdp.example.com"})
	if res.str("policy_decision_point") != "http://pdp.example.com" || res.header.Get("Cache-Control") != "no-store" {
		t.Errorf("an allowed Host: %s %v", res.raw, res.header)
	}
	// --public-url is the identifier whatever the Host: cacheable.
	h := authzenServer(t, nil, nil)
	res = h.do(request{method: http.MethodGet, target: "/.well-known/authzen-configuration", host: "evil.example"})
	if res.str("policy_decision_point") != authzenPDP || res.header.Get("Cache-Control") != "" {
		t.Errorf("with --public-url: %s %v", res.raw, res.header)
	}
}

// A PDP whose identifier has a path is discovered where RFC 8615 puts it:
// the well-known part before the path. gated serves it there, and only
// there, as well as at the root.
func TestAuthZENDiscoveryAtPublicURLPath(t *testing.T) {
	t.Parallel()
	const pdp = "https://gated.example.com/pdp"
	f := authzenServer(t, nil, func(d *server.Deps) { d.PublicURL = pdp })
	for _, target := range []string{"/.well-known/authzen-configuration/pdp", "/.well-known/authzen-configuration"} {
		res := f.do(request{method: http.MethodGet, target: target, header: map[string]string{"X-Request-ID": "disc-2"}})
		if res.status != http.StatusOK || res.str("policy_decision_point") != pdp ||
			res.str("access_evaluation_endpoint") != pdp+"/access/v1/evaluation" ||
			res.str("access_evaluations_endpoint") != pdp+"/access/v1/evaluations" || res.header.Get("X-Request-ID") != "disc-2" {
			t.Errorf("%s: %d %s %v", target, res.status, res.raw, res.header)
		}
	}
	for _, target := range []string{"/.well-known/authzen-configuration/other", "/.well-known/authzen-configuration/pdp/x"} {
		if res := f.do(request{method: http.MethodGet, target: target}); res.status != http.StatusNotFound {
			t.Errorf("%s: %d %s, want 404", target, res.status, res.raw)
		}
	}
	// A public URL without a path has no such route.
	g := authzenServer(t, nil, nil)
	if res := g.do(request{method: http.MethodGet, target: "/.well-known/authzen-configuration/pdp"}); res.status != http.StatusNotFound {
		t.Errorf("without a path: %d %s, want 404", res.status, res.raw)
	}
}

// A write is an ask: decision false, and the context says how to get a
// yes, the approval. Once a person approves it, the identical request is
// true, once; a PEP that knows gated may instead send the approval's
// evidence ref in context.gated.evidence_refs. Another subject's request
// does not use it.
func TestAuthZENAskApproval(t *testing.T) {
	t.Parallel()
	_, dbURL := approvaltest.Database(t, time.Now())
	rec := approvaltest.SyncRecorder(t, dbURL)
	store := approvalpg.New(pgtest.DB(t, dbURL))
	t.Cleanup(store.Close)
	f := authzenServer(t, []gate.Option{
		gate.WithClock(time.Now),
		gate.WithAudit(rec, audit.NewRedactor([]byte("0123456789abcdef0123456789abcdef")), "test"),
		gate.WithApprovals(store, authzenPDP),
	}, func(d *server.Deps) { d.Approvals = store })
	archive := func(subject, record string, gated string) string {
		ctx := ""
		if gated != "" {
			ctx = `,"context":{"gated":` + gated + `}`
		}
		return `{"subject":{"type":"user","id":"` + subject + `"},"action":{"name":"archive"},"resource":{"type":"record","id":"` + record + `"}` + ctx + `}`
	}
	ask := func(body string) (id string, ref any) {
		t.Helper()
		res := f.authzen(authzenEvaluation, body, nil)
		c, _ := res.body["context"].(map[string]any)
		a, _ := c["approval"].(map[string]any)
		if res.status != http.StatusOK || res.body["decision"] != false || c["route"] != "ask" || a == nil {
			t.Fatalf("want an ask with an approval: %d %s", res.status, res.raw)
		}
		if a["url"] != authzenPDP+"/ui/approvals/"+a["id"].(string) || c["approval_id"] != a["id"] {
			t.Errorf("approval %v", c)
		}
		return a["id"].(string), a["evidence_ref"]
	}
	decide := func(body string) map[string]any {
		t.Helper()
		res := f.authzen(authzenEvaluation, body, nil)
		if res.status != http.StatusOK {
			t.Fatalf("%d %s", res.status, res.raw)
		}
		return res.body
	}

	// The identical request retried.
	call := archive("alice", "record-1", "")
	id, _ := ask(call)
	if again, _ := ask(call); again != id {
		t.Errorf("the retry before anyone decided opened approval %s beside %s", again, id)
	}
	if r := f.decideApproval(id, "approve", aliceSecret, `{"reason":"ok"}`); r.status != http.StatusOK {
		t.Fatalf("approve: %d %s", r.status, r.raw)
	}
	// Another subject, another record, or another PEP: not this approval.
	if b := decide(archive("alice", "record-2", "")); b["decision"] != false {
		t.Errorf("another record used the approval: %v", b)
	}
	admin := `{"subject":{"type":"user","id":"alice","properties":{"role":"admin"}},"action":{"name":"archive"},"resource":{"type":"record","id":"record-1"}}`
	if b := decide(admin); b["decision"] != false {
		t.Errorf("the subject with other properties used the approval: %v", b)
	}
	other := f.do(request{method: http.MethodPost, target: authzenEvaluation, body: strings.NewReader(call), header: bearer(otherSecret)})
	if other.body["decision"] != false {
		t.Errorf("another PEP used the approval: %s", other.raw)
	}
	b := decide(call)
	if c := b["context"].(map[string]any); b["decision"] != true || c["route"] != "accept" || c["approval_id"] != id {
		t.Fatalf("the approved retry: %v", b)
	}
	if b := decide(call); b["decision"] != false {
		t.Errorf("the approval ran twice: %v", b)
	}

	// A gated approval ref the PEP made up is checked against the store.
	forged := `{"source_id":"gated-approval:01a21c72-4648-75d9-9306-3c4c9fb8d090","kind":"approval","trust_tier":"verified",` +
		`"redaction_status":"public","freshness":{"status":"fresh"},"provenance":"gated"}`
	if b := decide(archive("alice", "record-1", `{"evidence_refs":[`+forged+`]}`)); b["decision"] != false ||
		!strings.Contains(strings.Join(authzenBlockers(b), ","), "approval_unknown") {
		t.Errorf("a made-up approval ref: %v", b)
	}

	// The approval's evidence ref in context.gated.
	call = archive("alice", "record-2", "")
	id, ref := ask(call)
	if r := f.decideApproval(id, "approve", aliceSecret, `{}`); r.status != http.StatusOK {
		t.Fatalf("approve: %d %s", r.status, r.raw)
	}
	refJSON, _ := json.Marshal(ref)
	withRef := archive("alice", "record-2", `{"evidence_refs":[`+string(refJSON)+`]}`)
	if b := decide(withRef); b["decision"] != true || b["context"].(map[string]any)["approval_id"] != id {
		t.Errorf("the retry with the approval's ref: %v", b)
	}
	if b := decide(withRef); b["decision"] != false || !strings.Contains(strings.Join(authzenBlockers(b), ","), "approval_used") {
		t.Errorf("the ref used twice: %v", b)
	}
}

func authzenBlockers(body map[string]any) []string {
	c, _ := body["context"].(map[string]any)
	bs, _ := c["hard_blockers"].([]any)
	out := make([]string, len(bs))
	for i, b := range bs {
		out[i], _ = b.(string)
	}
	return out
}

// context.gated may declare the event's authorization state, but the
// evidence must support it: a PEP that claims confirmation without it
// still gets an ask.
func TestAuthZENClaimsNeedEvidence(t *testing.T) {
	t.Parallel()
	f := authzenServer(t, nil, nil)
	r := f.authzen(authzenEvaluation, `{"subject":{"type":"user","id":"alice"},"action":{"name":"archive"},
		"resource":{"type":"record","id":"record-1"},"context":{"gated":{"authorization_state":"confirmed"}}}`, nil)
	if r.body["decision"] != false || r.body["context"].(map[string]any)["route"] != "ask" ||
		!strings.Contains(strings.Join(authzenBlockers(r.body), ","), "authorization_state_not_supported_by_evidence") {
		t.Errorf("a claimed confirmation: %s", r.raw)
	}
}

// The kill switch stops AuthZEN calls as any other: by the agent in
// context.agent, by the subject's principal, by the action.
func TestAuthZENKillSwitch(t *testing.T) {
	t.Parallel()
	read := func(subject string) string {
		return `{"subject":{"type":"user","id":"` + subject + `"},"action":{"name":"read"},"resource":{"type":"record","id":"record-1"},"context":{"agent":"agent-7"}}`
	}
	for _, tc := range []struct {
		kill    kill.Kill
		subject string
		killed  bool
	}{
		{kill.Kill{ID: "k-agent", Scope: kill.ScopeAgent, Value: "agent-7"}, "alice", true},
		{kill.Kill{ID: "k-alice", Scope: kill.ScopePrincipal, Value: "user://alice"}, "alice", true},
		{kill.Kill{ID: "k-alice", Scope: kill.ScopePrincipal, Value: "user://alice"}, "bob", false},
		{kill.Kill{ID: "k-action", Scope: kill.ScopeAction, Value: "records:read"}, "bob", true},
	} {
		board := kill.NewBoard(time.Minute, func() time.Time { return fixedNow })
		board.Set([]kill.Kill{tc.kill}, fixedNow)
		f := authzenServer(t, []gate.Option{gate.WithKillSwitch(board)}, nil)
		r := f.authzen(authzenEvaluation, read(tc.subject), nil)
		killed := strings.Contains(strings.Join(authzenBlockers(r.body), ","), "kill_switch")
		if killed != tc.killed || r.body["decision"] == killed {
			t.Errorf("%s %s for %s: %s", tc.kill.Scope, tc.kill.Value, tc.subject, r.raw)
		}
	}
}

// A shadowed decision lets the call run, so its decision is true; the
// context says shadow and the would-be route.
func TestAuthZENShadow(t *testing.T) {
	t.Parallel()
	f := authzenServer(t, nil, func(d *server.Deps) { d.Tokens = testTokens(t) })
	body := `{"subject":{"type":"user","id":"bob"},"action":{"name":"write"},"resource":{"type":"record","id":"record-1"}}`
	for _, tc := range []struct {
		query string
		want  bool
	}{{"?shadow_mode=true", true}, {"", false}} {
		r := f.do(request{method: http.MethodPost, target: authzenEvaluation + tc.query, body: strings.NewReader(body), header: bearer(shadowSecret)})
		c, _ := r.body["context"].(map[string]any)
		if r.status != http.StatusOK || r.body["decision"] != tc.want || c["route"] != "refuse" || (c["shadow"] == true) != tc.want {
			t.Errorf("%q: %d %s", tc.query, r.status, r.raw)
		}
	}
}

// A request that fails the tool's input schema is refused arguments_invalid,
// and the context says where, as /pre-tool-check's argument_errors do:
// pointers into the request and the keyword, never the value.
func TestAuthZENArgumentErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	testtree.Write(t, dir, map[string]string{"tools/lookup/TOOL.md": `---
name: Records lookup
id: records.lookup
description: "A read of records that takes a bounded limit."
version: 1.0.0
implements: records:read
inputs:
  type: object
  properties:
    resource:
      type: object
      properties:
        properties:
          type: object
          required: [limit]
          properties:
            limit: { type: integer, maximum: 10 }
outputs: { type: object }
metadata:
  gated:
    aliases: [lookup]
---
`})
	cat, err := catalog.Load([]string{authzenCatalog, dir})
	if err != nil {
		t.Fatal(err)
	}
	pol, err := policy.Load([]string{authzenPolicy}, cat)
	if err != nil {
		t.Fatal(err)
	}
	f := authzenServer(t, nil, func(d *server.Deps) {
		d.Engine = gate.New(gate.WithClock(func() time.Time { return fixedNow }),
			gate.WithCatalog(func() *catalog.Catalog { return cat }, gate.UnknownDefer, catalog.ArgumentsEnforce),
			gate.WithPolicy(func() *policy.Set { return pol }, policy.NewLimiter()))
	})
	ask := func(limit string) map[string]any {
		t.Helper()
		res := f.authzen(authzenEvaluation, `{"subject":{"type":"user","id":"alice"},"action":{"name":"lookup"},`+
			`"resource":{"type":"record","id":"record-1","properties":{"limit":`+limit+`}}}`, nil)
		c, _ := res.body["context"].(map[string]any)
		if res.status != http.StatusOK || c == nil {
			t.Fatalf("limit %s: %d %s", limit, res.status, res.raw)
		}
		if strings.Contains(string(res.raw), "hunter2-canary") {
			t.Errorf("the context quotes an argument value: %s", res.raw)
		}
		return res.body
	}
	bad := ask(`"hunter2-canary"`)
	c := bad["context"].(map[string]any)
	errs, _ := c["argument_errors"].([]any)
	if bad["decision"] != false || !slices.Contains(authzenBlockers(bad), "arguments_invalid") || len(errs) != 1 {
		t.Fatalf("a limit of the wrong type: %v", bad)
	}
	if e := errs[0].(map[string]any); e["path"] != "/resource/properties/limit" || e["keyword"] != "type" || e["message"] == "" {
		t.Errorf("argument error %v", e)
	}
	if good := ask(`5`); good["context"].(map[string]any)["argument_errors"] != nil ||
		slices.Contains(authzenBlockers(good), "arguments_invalid") {
		t.Errorf("a valid limit: %v", good)
	}
}
