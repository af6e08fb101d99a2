package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/legacy"

	"github.com/gatedhq/gated/api"
	"github.com/gatedhq/gated/internal/auth"
	"github.com/gatedhq/gated/internal/gate"
	"github.com/gatedhq/gated/internal/server"
)

// fixedNow is the decision clock: evidence freshness depends on it.
var fixedNow = time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC)

// The tokens of every authenticated test server.
const (
	runtimeSecret = "runtime-secret-0123456789"
	otherSecret   = "other-runtime-secret-0123"
	readerSecret  = "reader-secret-0123456789"
	shadowSecret  = "shadow-secret-0123456789"
	scraperSecret = "scraper-secret-012345678"
)

func testTokens(t testing.TB) *auth.Tokens {
	t.Helper()
	ts, err := auth.Parse([]byte(`
- name: runtime
  sha256: ` + auth.Hash(runtimeSecret) + `
  scopes: [pre_tool_check]
- name: other
  sha256: ` + auth.Hash(otherSecret) + `
  scopes: [pre_tool_check, decisions_read]
- name: reader
  sha256: ` + auth.Hash(readerSecret) + `
  scopes: [catalog_read, policy_read]
- name: observer
  sha256: ` + auth.Hash(shadowSecret) + `
  scopes: [pre_tool_check, shadow]
- name: scraper
  sha256: ` + auth.Hash(scraperSecret) + `
  scopes: [metrics]
`))
	if err != nil {
		t.Fatal(err)
	}
	return ts
}

// fixture is one gated HTTP handler under test.
type fixture struct {
	t testing.TB
	h http.Handler
}

// newServer builds the real handler: a real engine with a fixed clock, the
// embedded OpenAPI document, and the test tokens unless mod changes them.
func newServer(t testing.TB, mod func(*server.Deps)) *fixture {
	d := server.Deps{
		Engine:  gate.New(gate.WithClock(func() time.Time { return fixedNow })),
		Tokens:  testTokens(t),
		OpenAPI: api.OpenAPI,
	}
	if mod != nil {
		mod(&d)
	}
	return &fixture{t: t, h: server.New(d)}
}

// request is one HTTP request to send.
type request struct {
	method, target string
	body           io.Reader
	header         map[string]string
	remote         string // peer address, host:port
	host           string // the Host header, example.com when empty
}

// response is a recorded answer, decoded when it is JSON.
type response struct {
	status int
	header http.Header
	raw    []byte
	body   map[string]any
}

func (r *response) str(k string) string { s, _ := r.body[k].(string); return s }

// post sends body to /pre-tool-check with the runtime token.
func (f *fixture) post(body string) *response {
	return f.do(request{method: http.MethodPost, target: "/pre-tool-check", body: strings.NewReader(body),
		header: map[string]string{"Authorization": "Bearer " + runtimeSecret}})
}

// do sends one request, then checks what every answer must keep: it
// conforms to the OpenAPI document (status, headers, body), a
// pre-tool-check answer always carries a route and is never a 5xx, and an
// accept always means execute with no hard blockers.
func (f *fixture) do(rq request) *response {
	f.t.Helper()
	if rq.body == nil {
		rq.body = http.NoBody
	}
	req := httptest.NewRequest(rq.method, rq.target, rq.body)
	if rq.body != http.NoBody {
		req.Header.Set("Content-Type", "application/json") // a test may override it below
	}
	for k, v := range rq.header {
		req.Header.Set(k, v)
	}
	if rq.remote != "" {
		req.RemoteAddr = rq.remote
	}
	if rq.host != "" {
		req.Host = rq.host
	}
	rec := httptest.NewRecorder()
	f.h.ServeHTTP(rec, req)
	res := &response{status: rec.Code, header: rec.Header(), raw: rec.Body.Bytes()}
	if strings.HasPrefix(res.header.Get("Content-Type"), "application/json") {
		if err := json.Unmarshal(res.raw, &res.body); err != nil {
			f.t.Fatalf("%s %s: answer is not a JSON object: %v: %q", rq.method, rq.target, err, res.raw)
		}
	}
	conform(f.t, rq, res)
	if p := req.URL.Path; p == "/pre-tool-check" || p == "/v1/pre-tool-check" || p == "/tool-precheck" {
		checkDecisionInvariants(f.t, res)
	}
	return res
}

func checkDecisionInvariants(t testing.TB, res *response) {
	t.Helper()
	if res.status >= 500 {
		t.Errorf("pre-tool-check answered %d: %s", res.status, res.raw)
	}
	rt := res.str("route")
	switch rt {
	case "accept", "ask", "defer", "refuse":
	default:
		t.Fatalf("status %d answer carries no route: %s", res.status, res.raw)
	}
	if res.status != http.StatusOK && rt != "refuse" {
		t.Errorf("status %d with route %s", res.status, rt)
	}
	execute, _ := res.body["execute"].(bool)
	blockers, _ := res.body["hard_blockers"].([]any)
	shadow, _ := res.body["shadow"].(bool)
	if rt == "accept" && (!execute || len(blockers) > 0) {
		t.Errorf("accept with execute %v and hard blockers %v", execute, blockers)
	}
	if rt != "accept" && execute && !shadow {
		t.Errorf("route %s executes outside shadow mode", rt)
	}
}

// openAPI is the embedded document, loaded and validated once.
var openAPI = sync.OnceValues(func() (*openapi3.T, error) {
	doc, err := openapi3.NewLoader().LoadFromData(api.OpenAPI)
	if err != nil {
		return nil, err
	}
	return doc, doc.Validate(context.Background())
})

var openAPIRouter = sync.OnceValues(func() (routers.Router, error) {
	doc, err := openAPI()
	if err != nil {
		return nil, err
	}
	return legacy.NewRouter(doc)
})

// conform validates one answer against the OpenAPI document. A method or
// path the document does not describe (405, 404) must still answer the
// document's Error schema.
func conform(t testing.TB, rq request, res *response) {
	t.Helper()
	doc, err := openAPI()
	if err != nil {
		t.Fatalf("openapi document: %v", err)
	}
	router, err := openAPIRouter()
	if err != nil {
		t.Fatalf("openapi router: %v", err)
	}
	// Route on the document's own server URL; the test request's host is
	// httptest's.
	u, _ := url.Parse(doc.Servers[0].URL + rq.target)
	route, params, err := router.FindRoute(&http.Request{Method: rq.method, URL: u})
	if err != nil {
		if res.status != http.StatusNotFound && res.status != http.StatusMethodNotAllowed {
			t.Fatalf("%s %s answered %d but the document has no such operation: %v", rq.method, rq.target, res.status, err)
		}
		if err := doc.Components.Schemas["Error"].Value.VisitJSON(res.body); err != nil {
			t.Errorf("%s %s (%d): body is not an Error: %v", rq.method, rq.target, res.status, err)
		}
		return
	}
	in := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: &openapi3filter.RequestValidationInput{
			Request: httptest.NewRequest(rq.method, rq.target, nil), PathParams: params, Route: route,
		},
		Status:  res.status,
		Header:  res.header,
		Options: &openapi3filter.Options{IncludeResponseStatus: true, MultiError: true},
	}
	in.SetBodyBytes(bytes.Clone(res.raw))
	if err := openapi3filter.ValidateResponse(context.Background(), in); err != nil {
		t.Errorf("%s %s (%d) does not conform to the OpenAPI document: %v\nbody: %.600s", rq.method, rq.target, res.status, err, res.raw)
	}
}

// validEvent is a public read gated accepts.
const validEvent = `{"tool_name":"get_weather","tool_category":"public_read","authorization_state":"none",` +
	`"evidence_refs":[{"source_id":"doc.weather","kind":"other","trust_tier":"verified","redaction_status":"redacted",` +
	`"freshness":{"status":"fresh"},"provenance":"fixture"}],"risk_domain":"public_information",` +
	`"proposed_arguments":{"city":"Lisbon"},"recommended_route":"accept"}`

// eventWith is validEvent with fields replaced (raw JSON values) or, for
// an empty value, removed.
func eventWith(t testing.TB, fields map[string]string) string {
	t.Helper()
	return jsonWith(t, validEvent, fields)
}

// jsonWith is the JSON object body with top-level fields replaced (raw
// JSON values) or, for an empty value, removed.
func jsonWith(t testing.TB, body string, fields map[string]string) string {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal([]byte(body), &m); err != nil {
		t.Fatal(err)
	}
	for k, v := range fields {
		if v == "" {
			delete(m, k)
		} else {
			m[k] = json.RawMessage(v)
		}
	}
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatalf("jsonWith: %v", err)
	}
	return string(b)
}
