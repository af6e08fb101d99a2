package server_test

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gatedhq/gated/internal/approval/approvaltest"
	"github.com/gatedhq/gated/internal/audit"
	"github.com/gatedhq/gated/internal/audit/postgres"
	"github.com/gatedhq/gated/internal/auth"
	"github.com/gatedhq/gated/internal/catalog"
	"github.com/gatedhq/gated/internal/gate"
	"github.com/gatedhq/gated/internal/metrics"
	"github.com/gatedhq/gated/internal/pgtest"
	"github.com/gatedhq/gated/internal/server"
)

// outputCanary is planted in every output sent; it must never be stored.
const outputCanary = "canary-output-3f9e1d"

// outcomeServer is the real handler over a fresh PostgreSQL: decisions are
// recorded synchronously, so an answered decision is stored. tokens nil
// runs open; opts add to the engine's. It returns the database's URL too.
func outcomeServer(t *testing.T, tokens *auth.Tokens, mod func(*server.Deps), opts ...gate.Option) (*fixture, string) {
	t.Helper()
	_, dbURL := approvaltest.Database(t, fixedNow)
	rec := approvaltest.SyncRecorder(t, dbURL)
	store := postgres.NewStore(pgtest.DB(t, dbURL))
	red := audit.NewRedactor([]byte("0123456789abcdef0123456789abcdef"))
	f := newServer(t, func(d *server.Deps) {
		d.Engine = gate.New(append([]gate.Option{gate.WithClock(func() time.Time { return fixedNow }), gate.WithAudit(rec, red, "test")}, opts...)...)
		d.Tokens, d.Decisions, d.Redactor = tokens, store, red
		if mod != nil {
			mod(d)
		}
	})
	return f, dbURL
}

// decide sends event with hdr and returns the decision's id and route.
func (f *fixture) decide(event string, hdr map[string]string) (id, route string) {
	f.t.Helper()
	res := f.do(request{method: http.MethodPost, target: "/pre-tool-check", body: strings.NewReader(event), header: hdr})
	if res.status != http.StatusOK || res.str("decision_id") == "" {
		f.t.Fatalf("decide: %d %.300s", res.status, res.raw)
	}
	return res.str("decision_id"), res.str("route")
}

// outcome posts body as decision id's outcome with hdr.
func (f *fixture) outcome(id, body string, hdr map[string]string) *response {
	f.t.Helper()
	return f.do(request{method: http.MethodPost, target: "/v1/decisions/" + id + "/outcome", body: strings.NewReader(body), header: hdr})
}

func TestOutcomes(t *testing.T) {
	t.Parallel()
	m := metrics.New("test")
	f, dbURL := outcomeServer(t, testTokens(t), func(d *server.Deps) { d.Metrics = m })
	runtime := map[string]string{"Authorization": "Bearer " + runtimeSecret}
	other := map[string]string{"Authorization": "Bearer " + otherSecret} // pre_tool_check and decisions_read
	id, route := f.decide(validEvent, runtime)
	if route != "accept" {
		t.Fatalf("the fixture event was not accepted: %s", route)
	}
	asked, route := f.decide(eventWith(t, map[string]string{"tool_category": `"write"`, "authorization_state": `"user_claimed"`}), runtime)
	if route == "accept" {
		t.Fatal("the write was accepted; the not-executed case would prove nothing")
	}

	// Bodies gated will not store, each with a precise 4xx; nothing is stored.
	for _, c := range []struct {
		name, body string
		status     int
		ctype      string
	}{
		{"no status", `{"verification":{"ok":true}}`, http.StatusBadRequest, ""},
		{"unknown status", `{"status":"done"}`, http.StatusBadRequest, ""},
		{"status not a string", `{"status":true}`, http.StatusBadRequest, ""},
		{"unknown field", `{"status":"succeeded","colour":"red"}`, http.StatusBadRequest, ""},
		{"half a block", `{"status":"reverted","rollback":{"attempted":true}}`, http.StatusBadRequest, ""},
		{"verification without ok", `{"status":"succeeded","verification":{}}`, http.StatusBadRequest, ""},
		{"not an object", `["succeeded"]`, http.StatusBadRequest, ""},
		{"trailing data", `{"status":"succeeded"} {}`, http.StatusBadRequest, ""},
		{"too deep", `{"status":"succeeded","output":` + strings.Repeat("[", 100) + strings.Repeat("]", 100) + `}`, http.StatusBadRequest, ""},
		{"too large", `{"status":"succeeded","output":"` + strings.Repeat("x", server.DefaultMaxBodyBytes) + `"}`, http.StatusRequestEntityTooLarge, ""},
		{"error_class on a success", `{"status":"succeeded","error_class":"ValueError"}`, http.StatusBadRequest, ""},
		{"error_class that is a message", `{"status":"failed","error_class":"connect failed: password=hunter2"}`, http.StatusBadRequest, ""},
		{"error_class not a string", `{"status":"failed","error_class":5}`, http.StatusBadRequest, ""},
		{"form post", `status=succeeded`, http.StatusUnsupportedMediaType, "application/x-www-form-urlencoded"},
	} {
		hdr := map[string]string{"Authorization": runtime["Authorization"]}
		if c.ctype != "" {
			hdr["Content-Type"] = c.ctype
		}
		if res := f.outcome(id, c.body, hdr); res.status != c.status || res.str("route") != "refuse" {
			t.Errorf("%s: %d %.200s, want %d", c.name, res.status, res.raw, c.status)
		}
	}
	if res := f.outcome(id, `{"status":"succeeded"}`, other); res.status != http.StatusForbidden || res.str("code") != "decision_not_yours" {
		t.Errorf("another token: %d %.200s, want 403", res.status, res.raw)
	}
	if res := f.outcome(id, `{"status":"succeeded"}`, nil); res.status != http.StatusUnauthorized {
		t.Errorf("no token: %d, want 401", res.status)
	}
	if res := f.outcome("01a1fafc-0000-7000-8000-000000000000", `{"status":"succeeded"}`, runtime); res.status != http.StatusNotFound || res.str("code") != "decision_unknown" {
		t.Errorf("unknown decision: %d %.200s, want 404", res.status, res.raw)
	}
	if res := f.outcome(asked, `{"status":"succeeded"}`, runtime); res.status != http.StatusConflict || res.str("code") != "decision_not_executed" {
		t.Errorf("a decision that did not let the tool run: %d %.200s, want 409", res.status, res.raw)
	}
	if n := pgtest.QueryInt(t, dbURL, "SELECT count(*) FROM decision_outcomes"); n != 0 {
		t.Fatalf("%d outcomes stored by refused requests", n)
	}

	// The outcome: stored once, answered without the output.
	body := `{"status":"succeeded","verification":{"ok":true},"repair":{"attempted":false,"ok":false},
		"rollback":{"attempted":false,"ok":false},"output":{"forecast":"` + outputCanary + `","temp_c":21.5}}`
	res := f.outcome(id, body, runtime)
	if res.status != http.StatusCreated || res.str("decision_id") != id || res.str("status") != "succeeded" ||
		res.str("token_name") != "runtime" || !strings.HasPrefix(res.str("output_fingerprint"), "hmac-sha256:") ||
		res.body["output_conforms"] != nil {
		t.Fatalf("outcome: %d %.400s", res.status, res.raw)
	}
	if strings.Contains(string(res.raw), outputCanary) {
		t.Error("the answer carries the output")
	}
	if again := f.outcome(id, `{"status":"failed"}`, runtime); again.status != http.StatusConflict || again.str("code") != "outcome_exists" {
		t.Errorf("a second outcome: %d %.200s, want 409", again.status, again.raw)
	}

	// The decision links it; the stored outcome is the first one.
	got := f.do(request{method: http.MethodGet, target: "/v1/decisions/" + id, header: other})
	o, _ := got.body["outcome"].(map[string]any)
	if got.status != http.StatusOK || o["status"] != "succeeded" || o["output_fingerprint"] != res.str("output_fingerprint") ||
		o["verification"].(map[string]any)["ok"] != true {
		t.Fatalf("GET decision: %d %.400s", got.status, got.raw)
	}
	if got := f.do(request{method: http.MethodGet, target: "/v1/decisions/" + asked, header: other}); got.body["outcome"] != nil {
		t.Errorf("a decision without outcome shows one: %.300s", got.raw)
	}
	// The list shows each decision's outcome status, and none without one.
	list := f.do(request{method: http.MethodGet, target: "/v1/decisions", header: other})
	statuses := map[string]any{}
	records, _ := list.body["records"].([]any)
	for _, r := range records {
		r := r.(map[string]any)
		statuses[r["decision_id"].(string)] = r["outcome_status"]
	}
	if list.status != http.StatusOK || len(statuses) != 2 || statuses[id] != "succeeded" || statuses[asked] != nil {
		t.Fatalf("GET decisions: %d %.600s", list.status, list.raw)
	}
	if n := pgtest.QueryInt(t, dbURL, "SELECT count(*) FROM decision_outcomes"); n != 1 {
		t.Fatalf("%d outcomes stored, want 1", n)
	}
	if n := pgtest.QueryInt(t, dbURL, "SELECT count(*) FROM decision_outcomes o WHERE row_to_json(o)::text LIKE '%' || $1 || '%'", outputCanary); n != 0 {
		t.Error("the output is stored")
	}

	scraped := f.do(request{method: http.MethodGet, target: "/metrics", header: map[string]string{"Authorization": "Bearer " + scraperSecret}})
	for _, want := range []string{`gated_outcomes_total{status="succeeded"} 1`, `gated_outcomes_total{status="failed"} 0`} {
		if !strings.Contains(string(scraped.raw), want) {
			t.Errorf("metrics lack %s", want)
		}
	}
}

// A page on another site cannot report an outcome, even for a gated that
// runs open: the Host/Origin guard refuses it before anything is read.
func TestOutcomeCrossSiteRefused(t *testing.T) {
	t.Parallel()
	f, dbURL := outcomeServer(t, nil, func(d *server.Deps) {
		d.Hosts = server.Hosts{Enforce: true, Allowed: []string{"example.com"}} // httptest's Host
	})
	id, route := f.decide(validEvent, nil)
	if route != "accept" {
		t.Fatalf("the fixture event was not accepted: %s", route)
	}
	res := f.outcome(id, `{"status":"succeeded"}`, map[string]string{"Origin": "https://evil.example"})
	if res.status != http.StatusForbidden || !strings.Contains(res.str("error"), "forbidden origin") {
		t.Fatalf("cross-site outcome: %d %.200s, want 403", res.status, res.raw)
	}
	if n := pgtest.QueryInt(t, dbURL, "SELECT count(*) FROM decision_outcomes"); n != 0 {
		t.Fatal("a cross-site request stored an outcome")
	}
	// Open, decisions carry no token: a same-site caller may report.
	if res := f.outcome(id, `{"status":"reverted","rollback":{"attempted":true,"ok":true}}`, map[string]string{"Origin": "http://localhost:3000"}); res.status != http.StatusCreated || res.str("token_name") != "" {
		t.Fatalf("open outcome: %d %.200s", res.status, res.raw)
	}
}

func TestOutcomeNeedsTheStore(t *testing.T) {
	t.Parallel()
	f := newServer(t, nil)
	res := f.outcome("x", `{"status":"succeeded"}`, map[string]string{"Authorization": "Bearer " + runtimeSecret})
	if res.status != http.StatusNotFound || !strings.Contains(res.str("error"), "--database-url") {
		t.Fatalf("without a database: %d %.200s, want 404", res.status, res.raw)
	}
}

// weatherActions catalogs validEvent's tool with an RFC-001 outputSchema,
// and a second tool without one.
const weatherActions = `actions:
  - name: get_weather
    description: The forecast for a city
    command: [weather, "{{city}}"]
    inputSchema: {type: object, properties: {city: {type: string}}}
    outputSchema:
      type: object
      required: [forecast]
      properties: {forecast: {type: string}, temp_c: {type: number}}
    annotations: {readOnlyHint: true}
  - name: get_time
    description: The time in a city
    command: [clock, "{{city}}"]
    inputSchema: {type: object, properties: {city: {type: string}}}
    annotations: {readOnlyHint: true}
`

// TestOutcomeOutputConformance: with an outputSchema in the catalog, gated
// stores whether the output met it, and the output's fingerprint only.
func TestOutcomeOutputConformance(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "ACTIONS.yaml"), []byte(weatherActions), 0o644); err != nil {
		t.Fatal(err)
	}
	cat, err := catalog.Load([]string{dir})
	if err != nil {
		t.Fatal(err)
	}
	f, dbURL := outcomeServer(t, testTokens(t), nil,
		gate.WithCatalog(func() *catalog.Catalog { return cat }, gate.UnknownDefer, catalog.ArgumentsEnforce))
	runtime := map[string]string{"Authorization": "Bearer " + runtimeSecret}
	clock := eventWith(t, map[string]string{"tool_name": `"get_time"`})
	for _, c := range []struct {
		name, event, output string
		want                any // output_conforms: true, false or nil
	}{
		{"conforming output", validEvent, `{"forecast":"` + outputCanary + `","temp_c":21.5}`, true},
		{"a required field missing", validEvent, `{"temp_c":21.5,"note":"` + outputCanary + `"}`, false},
		{"a field of the wrong type", validEvent, `{"forecast":"sun","temp_c":"` + outputCanary + `"}`, false},
		{"not an object", validEvent, `"` + outputCanary + `"`, false},
		{"a number gated will not validate", validEvent, `{"forecast":"` + outputCanary + `","temp_c":1e999999}`, false},
		{"more values than gated checks", validEvent, `{"forecast":"sun","extra":[` + strings.Repeat("0,", catalog.MaxArgumentValues) + `0]}`, false},
		{"no output", validEvent, "", nil},
		{"a tool without outputSchema", clock, `{"anything":"` + outputCanary + `"}`, nil},
	} {
		id, route := f.decide(c.event, runtime)
		if route != "accept" {
			t.Fatalf("%s: the event was not accepted: %s", c.name, route)
		}
		body := `{"status":"succeeded"}`
		if c.output != "" {
			body = `{"status":"succeeded","output":` + c.output + `}`
		}
		res := f.outcome(id, body, runtime)
		if res.status != http.StatusCreated || res.body["output_conforms"] != c.want {
			t.Errorf("%s: %d %.300s, want output_conforms %v", c.name, res.status, res.raw, c.want)
		}
		if stored := pgtest.QueryInt(t, dbURL, "SELECT count(*) FROM decision_outcomes WHERE decision_id = $1 AND output_conforms IS NOT DISTINCT FROM $2", id, c.want); stored != 1 {
			t.Errorf("%s: output_conforms is not stored as %v", c.name, c.want)
		}
	}
	if n := pgtest.QueryInt(t, dbURL, "SELECT count(*) FROM decision_outcomes o WHERE row_to_json(o)::text LIKE '%' || $1 || '%'", outputCanary); n != 0 {
		t.Error("an output is stored")
	}
}

// TestOutcomeErrorClass: a failed call's error class (what the SDKs'
// guard reports) is stored and shown, screened like a record's fields.
func TestOutcomeErrorClass(t *testing.T) {
	t.Parallel()
	f, dbURL := outcomeServer(t, nil, nil)
	for _, c := range []struct{ status, class, want string }{
		{"failed", "requests.exceptions.ConnectionError", "requests.exceptions.ConnectionError"},
		{"reverted", "*url.Error", "*url.Error"},
		{"failed", "AKIAIOSFODNN7EXAMPLE", "hmac-sha256:"}, // looks like an AWS key: fingerprinted
	} {
		id, route := f.decide(validEvent, nil)
		if route != "accept" {
			t.Fatalf("the fixture event was not accepted: %s", route)
		}
		res := f.outcome(id, `{"status":"`+c.status+`","error_class":"`+c.class+`"}`, nil)
		if res.status != http.StatusCreated || !strings.HasPrefix(res.str("error_class"), c.want) {
			t.Fatalf("%s: %d %.300s", c.class, res.status, res.raw)
		}
		got := f.do(request{method: http.MethodGet, target: "/v1/decisions/" + id})
		if o, _ := got.body["outcome"].(map[string]any); o["error_class"] != res.str("error_class") {
			t.Errorf("%s: GET decision shows %.300s", c.class, got.raw)
		}
	}
	if n := pgtest.QueryInt(t, dbURL, "SELECT count(*) FROM decision_outcomes WHERE error_class LIKE '%AKIA%'"); n != 0 {
		t.Error("a secret-looking error class is stored as sent")
	}
}

// specResult is the spec's result envelope example, word for word.
const specResult = `{
"status": "succeeded",
"actionType": "diagnose_error",
"riskTier": "R1",
"output": {},
"verification": {
"ok": true,
"checks": []
},
"repair": {
"attempted": false,
"ok": false
},
"rollback": {
"attempted": false,
"ok": false
},
"feedback": {}
}`

// The LTS result envelope is taken whole: what gated stores is stored, the
// rest is checked or named as not kept, and actionType must be the
// decision's own.
func TestOutcomeSpecResultEnvelope(t *testing.T) {
	t.Parallel()
	f, _ := actionServer(t)
	runtime := map[string]string{"Authorization": "Bearer " + runtimeSecret}
	planned := func() string {
		t.Helper()
		res := f.plan(jsonWith(t, specPlan, map[string]string{"gated": confirmed}))
		if res.str("route") != "accept" {
			t.Fatalf("the spec's plan was not accepted: %.300s", res.raw)
		}
		return res.str("decisionId")
	}

	id := planned()
	for _, c := range []struct{ name, body, code string }{
		{"unknown tier", jsonWith(t, specResult, map[string]string{"riskTier": `"R9"`}), "bad_request"},
		{"empty actionType", jsonWith(t, specResult, map[string]string{"actionType": `""`}), "bad_request"},
		{"unknown field", jsonWith(t, specResult, map[string]string{"colour": `"red"`}), "bad_request"},
	} {
		if res := f.outcome(id, c.body, runtime); res.status != http.StatusBadRequest || res.str("code") != c.code {
			t.Errorf("%s: %d %.200s, want 400 %s", c.name, res.status, res.raw, c.code)
		}
	}
	other := jsonWith(t, specResult, map[string]string{"actionType": `"example_action"`})
	if res := f.outcome(id, other, map[string]string{"Authorization": "Bearer " + otherSecret}); res.status != http.StatusForbidden {
		t.Errorf("another token's mismatched actionType: %d %.200s, want 403 (the tool is not theirs to learn)", res.status, res.raw)
	}
	if res := f.outcome(id, other, runtime); res.status != http.StatusConflict || res.str("code") != "outcome_action_mismatch" {
		t.Errorf("another action's result: %d %.200s, want 409 outcome_action_mismatch", res.status, res.raw)
	}

	res := f.outcome(id, specResult, runtime)
	if res.status != http.StatusCreated || res.str("status") != "succeeded" || res.body["output_conforms"] != nil {
		t.Fatalf("the spec's result envelope: %d %.400s", res.status, res.raw)
	}
	notKept, _ := res.body["not_kept"].([]any)
	if len(notKept) != 4 || notKept[0] != "actionType" || notKept[1] != "riskTier" || notKept[2] != "verification.checks" || notKept[3] != "feedback" {
		t.Errorf("not_kept %v, want actionType, riskTier, verification.checks, feedback", notKept)
	}

	// Feedback and checks are free text: accepted, never stored.
	id = planned()
	withText := jsonWith(t, specResult, map[string]string{"feedback": `{"note":"` + outputCanary + `"}`,
		"verification": `{"ok":false,"checks":["` + outputCanary + `"]}`, "status": `"failed"`})
	if res := f.outcome(id, withText, runtime); res.status != http.StatusCreated || strings.Contains(string(res.raw), outputCanary) {
		t.Fatalf("feedback: %d %.400s", res.status, res.raw)
	}
	got := f.do(request{method: http.MethodGet, target: "/v1/decisions/" + id, header: map[string]string{"Authorization": "Bearer " + otherSecret}})
	if o, _ := got.body["outcome"].(map[string]any); o["status"] != "failed" || strings.Contains(string(got.raw), outputCanary) {
		t.Errorf("stored outcome: %.400s", got.raw)
	}
}
