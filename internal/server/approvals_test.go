package server_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gatedhq/gated/internal/approval/approvaltest"
	approvalpg "github.com/gatedhq/gated/internal/approval/postgres"
	"github.com/gatedhq/gated/internal/audit"
	"github.com/gatedhq/gated/internal/auth"
	"github.com/gatedhq/gated/internal/catalog"
	"github.com/gatedhq/gated/internal/gate"
	"github.com/gatedhq/gated/internal/pgtest"
	"github.com/gatedhq/gated/internal/server"
)

// The tokens of the approvals tests: a runtime that asks, two approvers,
// and one approver who is also the runtime's operator.
const (
	askerSecret    = "asker-secret-0123456789ab"
	aliceSecret    = "alice-secret-0123456789ab"
	carolSecret    = "carol-secret-0123456789ab"
	operatorSecret = "operator-secret-012345678"
)

func approvalTokens(t testing.TB) *auth.Tokens {
	t.Helper()
	ts, err := auth.Parse([]byte(`
- name: asker
  sha256: ` + auth.Hash(askerSecret) + `
  scopes: [pre_tool_check]
  principals: [bot://agent-7, operator://bob]
- name: alice
  sha256: ` + auth.Hash(aliceSecret) + `
  scopes: [approve]
  principals: [operator://alice, group://payments-leads]
- name: carol
  sha256: ` + auth.Hash(carolSecret) + `
  scopes: [approve]
  principals: [operator://carol]
- name: bob-console
  sha256: ` + auth.Hash(operatorSecret) + `
  scopes: [approve, pre_tool_check]
  principals: [operator://bob, group://payments-leads]
- name: other
  sha256: ` + auth.Hash(otherSecret) + `
  scopes: [pre_tool_check]
`))
	if err != nil {
		t.Fatal(err)
	}
	return ts
}

func bearer(secret string) map[string]string {
	return map[string]string{"Authorization": "Bearer " + secret}
}

// refundTool asks for confirmation (risk 2) and names its approvers.
const refundTool = "---\nname: payments.refund\nid: payments.refund\ndescription: refund\nversion: 1.0.0\ninputs: {type: object}\noutputs: {type: object}\n" +
	"risk_level: 2\nmutates: [payments:refunds]\nmetadata: {gated: {aliases: [refund], approvers: [group://payments-leads]}}\n---\n"

const refundAsk = `{"tool_name":"refund","tool_category":"write","authorization_state":"validated",
	"evidence_refs":[{"source_id":"policy.refunds","kind":"policy","trust_tier":"verified","redaction_status":"redacted",
		"summary":"refund eligible","freshness":{"status":"fresh"},"provenance":"connector"}],
	"risk_domain":"commerce","agent_id":"agent-7","proposed_arguments":{"order_id":"A-17","amount":12.5},"recommended_route":"accept"}`

// approvalsServer is the real handler with a real engine, audit recorder
// and approval store on a PostgreSQL database of its own, which links
// approvals at publicURL; opts are more of the engine's (a clock).
func approvalsServer(t *testing.T, stopping chan struct{}, publicURL string, opts ...gate.Option) *fixture {
	t.Helper()
	_, dbURL := approvaltest.Database(t, time.Now())
	rec := approvaltest.SyncRecorder(t, dbURL)
	store := approvalpg.New(pgtest.DB(t, dbURL))
	t.Cleanup(store.Close)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "TOOL.md"), []byte(refundTool), 0o644); err != nil {
		t.Fatal(err)
	}
	cat, err := catalog.Load([]string{dir})
	if err != nil {
		t.Fatal(err)
	}
	return newServer(t, func(d *server.Deps) {
		d.Engine = gate.New(append(opts,
			gate.WithCatalog(func() *catalog.Catalog { return cat }, gate.UnknownDefer, catalog.ArgumentsEnforce),
			gate.WithAudit(rec, audit.NewRedactor([]byte("0123456789abcdef0123456789abcdef")), "test"),
			gate.WithApprovals(store, publicURL))...)
		d.Tokens = approvalTokens(t)
		d.Approvals = store
		d.Stopping = stopping
	})
}

func (f *fixture) ask(t *testing.T) (id string, ref any) {
	t.Helper()
	res := f.do(request{method: http.MethodPost, target: "/pre-tool-check", body: strings.NewReader(refundAsk), header: bearer(askerSecret)})
	a, _ := res.body["approval"].(map[string]any)
	if res.str("route") != "ask" || a == nil {
		t.Fatalf("ask: %d %.600s", res.status, res.raw)
	}
	if a["url"] != "/ui/approvals/"+a["id"].(string) {
		t.Errorf("url %v: without --public-url it is the path", a["url"])
	}
	return a["id"].(string), a["evidence_ref"]
}

func (f *fixture) decideApproval(id, verb, secret, body string) *response {
	hdr := bearer(secret)
	return f.do(request{method: http.MethodPost, target: "/v1/approvals/" + id + "/" + verb, body: strings.NewReader(body), header: hdr})
}

// Every approvals route answers as the OpenAPI document says (checked by
// fixture.do), with the status codes of docs/approvals.md.
func TestApprovalsAPI(t *testing.T) {
	t.Parallel()
	f := approvalsServer(t, nil, "")
	id, _ := f.ask(t)

	// Reading: an approver sees everything, the requester its own without
	// preview and findings, anyone else nothing.
	full := f.do(request{method: http.MethodGet, target: "/v1/approvals/" + id, header: bearer(aliceSecret)})
	if full.status != http.StatusOK || full.body["preview"] == nil || full.body["findings"] == nil || full.str("status") != "pending" {
		t.Fatalf("approver's view: %d %.400s", full.status, full.raw)
	}
	own := f.do(request{method: http.MethodGet, target: "/v1/approvals/" + id, header: bearer(askerSecret)})
	if own.status != http.StatusOK || own.body["preview"] != nil || own.body["findings"] != nil || own.str("id") != id {
		t.Fatalf("requester's view: %d %.400s", own.status, own.raw)
	}
	if r := f.do(request{method: http.MethodGet, target: "/v1/approvals/" + id, header: bearer(otherSecret)}); r.status != http.StatusNotFound || r.str("code") != "approval_unknown" {
		t.Fatalf("someone else's approval: %d %.300s", r.status, r.raw)
	}
	// A wait whose status differs already answers at once.
	if r := f.do(request{method: http.MethodGet, target: "/v1/approvals/" + id + "?wait=30s&status=approved", header: bearer(askerSecret)}); r.status != http.StatusOK || r.str("status") != "pending" {
		t.Fatalf("wait on another status: %d %.300s", r.status, r.raw)
	}
	for _, q := range []string{"wait=61s", "wait=-1s", "wait=soon", "status=maybe"} {
		if r := f.do(request{method: http.MethodGet, target: "/v1/approvals/" + id + "?" + q, header: bearer(aliceSecret)}); r.status != http.StatusBadRequest {
			t.Errorf("%s: %d", q, r.status)
		}
	}
	list := f.do(request{method: http.MethodGet, target: "/v1/approvals?status=pending&limit=10", header: bearer(aliceSecret)})
	if items, _ := list.body["approvals"].([]any); list.status != http.StatusOK || len(items) != 1 {
		t.Fatalf("list: %d %.300s", list.status, list.raw)
	}
	for _, q := range []string{"status=maybe", "limit=0", "cursor=garbage"} {
		if r := f.do(request{method: http.MethodGet, target: "/v1/approvals?" + q, header: bearer(aliceSecret)}); r.status != http.StatusBadRequest {
			t.Errorf("list %s: %d %.200s", q, r.status, r.raw)
		}
	}
	f.do(request{method: http.MethodGet, target: "/v1/approvals", header: bearer(askerSecret)}) // 403: no scope approve
	f.do(request{method: http.MethodGet, target: "/v1/approvals"})                              // 401

	// Deciding: JSON only, nothing but a reason, never the requester.
	for body, want := range map[string]int{
		`{"reason":"ok","approver":"operator://alice"}`: http.StatusBadRequest,
		`{"reason":"ok"} {}`:                            http.StatusBadRequest,
		`[]`:                                            http.StatusBadRequest,
		``:                                              http.StatusBadRequest,
	} {
		if r := f.decideApproval(id, "approve", aliceSecret, body); r.status != want {
			t.Errorf("body %q: %d, want %d", body, r.status, want)
		}
	}
	if r := f.do(request{method: http.MethodPost, target: "/v1/approvals/" + id + "/approve", body: strings.NewReader(`{}`),
		header: map[string]string{"Authorization": "Bearer " + aliceSecret, "Content-Type": "text/plain"}}); r.status != http.StatusUnsupportedMediaType {
		t.Errorf("text/plain: %d", r.status)
	}
	// bob-console holds operator://bob, a principal of the requester.
	if r := f.decideApproval(id, "approve", operatorSecret, `{}`); r.status != http.StatusForbidden || r.str("code") != "approval_self_approval" {
		t.Errorf("self-approval: %d %.300s", r.status, r.raw)
	}
	if r := f.decideApproval(id, "approve", carolSecret, `{}`); r.status != http.StatusForbidden || r.str("code") != "approval_approver_not_allowed" {
		t.Errorf("approver not allowed: %d %.300s", r.status, r.raw)
	}
	ok := f.decideApproval(id, "approve", aliceSecret, `{"reason":"refund checked"}`)
	if approver, _ := ok.body["approver"].(map[string]any); ok.status != http.StatusOK || ok.str("status") != "approved" || approver["token_name"] != "alice" || ok.str("reason") != "refund checked" {
		t.Fatalf("approve: %d %.400s", ok.status, ok.raw)
	}
	if r := f.decideApproval(id, "deny", aliceSecret, `{}`); r.status != http.StatusConflict || r.str("code") != "approval_decided" {
		t.Errorf("deciding twice: %d %.300s", r.status, r.raw)
	}
	if r := f.decideApproval("0193a5b4-7c3e-7a1b-8f00-000000000001", "deny", aliceSecret, `{}`); r.status != http.StatusNotFound || r.str("code") != "approval_unknown" {
		t.Errorf("unknown: %d %.300s", r.status, r.raw)
	}
	second, _ := f.ask(t)
	if r := f.decideApproval(second, "deny", aliceSecret, `{"reason":"no"}`); r.status != http.StatusOK || r.str("status") != "denied" {
		t.Errorf("deny: %d %.300s", r.status, r.raw)
	}
	if r := f.do(request{method: http.MethodGet, target: "/v1/approvals/" + second + "?wait=5s", header: bearer(askerSecret)}); r.str("status") != "denied" {
		t.Errorf("a decided approval's wait: %.300s", r.raw)
	}
}

// Without tokens every approvals route answers 403: the approver and the
// requester are tokens. Without a store, 404.
func TestApprovalsNeedTokens(t *testing.T) {
	t.Parallel()
	open := newServer(t, func(d *server.Deps) { d.Tokens = nil })
	off := newServer(t, func(d *server.Deps) { d.Tokens = approvalTokens(t) })
	for _, rq := range []request{
		{method: http.MethodGet, target: "/v1/approvals"},
		{method: http.MethodGet, target: "/v1/approvals/events"},
		{method: http.MethodGet, target: "/v1/approvals/x"},
		{method: http.MethodPost, target: "/v1/approvals/x/approve", body: strings.NewReader(`{}`)},
		{method: http.MethodPost, target: "/v1/approvals/x/deny", body: strings.NewReader(`{}`)},
	} {
		if r := open.do(rq); r.status != http.StatusForbidden || r.str("code") != "approvals_need_tokens" || r.str("route") != "refuse" {
			t.Errorf("%s %s without tokens: %d %.200s", rq.method, rq.target, r.status, r.raw)
		}
		rq.header = bearer(aliceSecret)
		if rq.body != nil {
			rq.body = strings.NewReader(`{}`)
		}
		if r := off.do(rq); r.status != http.StatusNotFound || r.str("code") != "approvals_off" {
			t.Errorf("%s %s without approvals: %d %.200s", rq.method, rq.target, r.status, r.raw)
		}
	}
}

// Once gated is shutting down, a long poll answers at once and an event
// stream ends, so a graceful shutdown does not wait for them.
func TestApprovalsEndAtShutdown(t *testing.T) {
	t.Parallel()
	stopping := make(chan struct{})
	f := approvalsServer(t, stopping, "")
	id, _ := f.ask(t)
	close(stopping)
	if r := f.do(request{method: http.MethodGet, target: "/v1/approvals/" + id + "?wait=60s", header: bearer(askerSecret)}); r.status != http.StatusOK || r.str("status") != "pending" {
		t.Fatalf("long poll at shutdown: %d %.300s", r.status, r.raw)
	}
	srv := httptest.NewServer(f.h)
	defer srv.Close()
	req, _ := http.NewRequest(http.MethodGet, srv.URL+"/v1/approvals/events", nil)
	req.Header.Set("Authorization", "Bearer "+aliceSecret)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body) // returns because the stream ends
	if err != nil || resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "text/event-stream" || !strings.HasPrefix(string(body), ":") {
		t.Fatalf("event stream at shutdown: %d %v %q", resp.StatusCode, err, body)
	}
}
