package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/gatedhq/gated/internal/audit"
	"github.com/gatedhq/gated/internal/auth"
	"github.com/gatedhq/gated/internal/catalog"
	"github.com/gatedhq/gated/internal/gate"
	"github.com/gatedhq/gated/internal/policy"
	"github.com/gatedhq/gated/internal/server"
)

var updateGolden = flag.Bool("update", false, "rewrite testdata/answers.golden from the current answers")

const answersGolden = "testdata/answers.golden"

// TestAnswerWireFormGolden pins the wire form of decisions byte for byte:
// field names, order and values of every answer a representative set of
// events gets over /pre-tool-check, /tool-precheck and MCP (contract-only,
// with the example catalog and policy, shadow, malformed and invalid
// events, audit written and failed, a fault in the path). Only
// decision_id, which is new in every answer, is normalised. A change here
// is a change to what every client reads: regenerate (go test
// ./internal/server -run TestAnswerWireFormGolden -update) only when it is
// meant, and say so in the changelog. Editing examples/ changes answers
// too: read the diff before regenerating.
func TestAnswerWireFormGolden(t *testing.T) {
	t.Parallel()
	var got bytes.Buffer
	add := func(name string, answer []byte) {
		t.Helper()
		if len(answer) == 0 || answer[0] != '{' {
			t.Fatalf("%s: not a JSON object: %q", name, answer)
		}
		fmt.Fprintf(&got, "# %s\n%s\n", name, decisionIDs.ReplaceAll(bytes.TrimSpace(answer), []byte(`"decision_id":"<decision_id>"`)))
	}
	runtime := map[string]string{"Authorization": "Bearer " + runtimeSecret}
	post := func(f *fixture, target string, header map[string]string, body string) []byte {
		t.Helper()
		res := f.do(request{method: http.MethodPost, target: target, body: strings.NewReader(body), header: header})
		if res.status != http.StatusOK {
			t.Fatalf("%s: %d %s", target, res.status, res.raw)
		}
		return res.raw
	}

	// Contract only, as gated serve runs without a catalog.
	f := newServer(t, nil)
	for _, path := range globFiles(t, "../../examples/events/*.json") {
		add("events/"+filepath.Base(path), post(f, "/pre-tool-check", runtime, readFile(t, path)))
	}
	var cases struct {
		Cases []struct {
			Name  string          `json:"name"`
			Event json.RawMessage `json:"event"`
		} `json:"cases"`
	}
	if err := json.Unmarshal([]byte(readFile(t, "../gate/testdata/aana-canonical-cases.json")), &cases); err != nil {
		t.Fatal(err)
	}
	for _, c := range cases.Cases {
		add("canonical/"+c.Name, post(f, "/pre-tool-check", runtime, string(c.Event)))
	}
	const search = `{"tool_name":"search_docs","tool_category":"public_read","authorization_state":"none","evidence_refs":[],"risk_domain":"research","proposed_arguments":{},"recommended_route":"accept"}`
	for _, c := range [][2]string{
		{"invalid/empty_object", `{}`},
		{"invalid/wrong_type", `{"tool_name":1}`},
		{"invalid/unknown_enum", strings.Replace(search, `"public_read"`, `"banana"`, 1)},
		{"invalid/runtime_route", strings.Replace(search, `"recommended_route":"accept"`, `"recommended_route":"maybe"`, 1)},
		{"valid/request_id_echoed", strings.Replace(search, `{`, `{"request_id":"req-7f3a",`, 1)},
		{"valid/stale_evidence_runtime_ask", `{"tool_name":"get_profile","tool_category":"private_read","authorization_state":"authenticated","evidence_refs":[{"source_id":"auth.1","kind":"auth_event","trust_tier":"verified","redaction_status":"redacted","freshness":{"status":"stale"},"provenance":"connector"}],"risk_domain":"commerce","proposed_arguments":{},"recommended_route":"ask"}`},
		{"valid/secret_source_id", `{"tool_name":"get_profile","tool_category":"private_read","authorization_state":"authenticated","evidence_refs":[{"source_id":"sk-abcdefghijklmnop","kind":"auth_event","trust_tier":"verified","redaction_status":"redacted","freshness":{"status":"fresh"},"provenance":"connector"}],"risk_domain":"commerce","proposed_arguments":{},"recommended_route":"accept"}`},
		{"valid/runtime_refuses", strings.Replace(search, `"recommended_route":"accept"`, `"recommended_route":"refuse"`, 1)},
		{"valid/declared_state_lifted", `{"tool_name":"get_account","tool_category":"private_read","authorization_state":"none","evidence_refs":[{"source_id":"auth.session","kind":"auth_event","trust_tier":"verified","redaction_status":"redacted","provenance":"test","freshness":{"status":"fresh"}}],"risk_domain":"finance","proposed_arguments":{},"recommended_route":"accept"}`},
	} {
		add(c[0], post(f, "/pre-tool-check", runtime, c[1]))
	}
	add("path/tool-precheck", post(f, "/tool-precheck", runtime, search))
	refused := readFile(t, "../../examples/events/delete_database_refuse.json")
	add("shadow/granted", post(f, "/pre-tool-check?shadow_mode=true", map[string]string{"Authorization": "Bearer " + shadowSecret}, refused))
	add("shadow/ignored", post(f, "/pre-tool-check?shadow_mode=true", runtime, refused))
	add("mcp/structured_content", mcpStructuredContent(t, f, refused))

	// serve --shadow: every decision shadowed, so a refused request is not reported.
	f = newServer(t, func(d *server.Deps) {
		d.Engine = gate.New(gate.WithClock(func() time.Time { return fixedNow }), gate.WithShadow(true))
	})
	add("shadow/serve_flag", post(f, "/pre-tool-check?shadow_mode=true", runtime, refused))

	// The example catalog and policy, with their tokens, recorded.
	cat, err := catalog.Load([]string{"../../examples/catalog"})
	if err != nil {
		t.Fatal(err)
	}
	pol, err := policy.Load([]string{"../../examples/policy"}, cat)
	if err != nil {
		t.Fatal(err)
	}
	tokens, err := auth.Parse([]byte(readFile(t, "../../examples/tokens.yaml")))
	if err != nil {
		t.Fatal(err)
	}
	examples := func(rec audit.Recorder) *fixture {
		return newServer(t, func(d *server.Deps) {
			d.Engine = gate.New(gate.WithClock(func() time.Time { return fixedNow }),
				gate.WithCatalog(func() *catalog.Catalog { return cat }, gate.UnknownDefer, catalog.ArgumentsEnforce),
				gate.WithPolicy(func() *policy.Set { return pol }, policy.NewLimiter()),
				gate.WithAudit(rec, audit.NewRedactor([]byte("0123456789abcdef0123456789abcdef")), "test"))
			d.Tokens = tokens
		})
	}
	f = examples(fixedRecorder{res: audit.Result{Sink: audit.SinkFile, Status: audit.StatusWritten}})
	demo := func(name string) map[string]string { return map[string]string{"Authorization": "Bearer demo-" + name} }
	for _, c := range [][2]string{
		{"lookup_customer_accept", "support-agent"}, {"send_email_ask", "support-agent"}, {"lookup_customer_defer", "support-agent"},
		{"drop_database_refuse", "oncall"}, {"search_docs_refuse", "support-agent"},
	} {
		add("tour/"+c[0], post(f, "/v1/pre-tool-check", demo(c[1]), readFile(t, "../../examples/events/tour/"+c[0]+".json")))
	}
	sendEmail := readFile(t, "../../examples/events/tour/send_email_ask.json")
	add("catalog/arguments_invalid", post(f, "/v1/pre-tool-check", demo("support-agent"),
		strings.Replace(sendEmail, `"to": "customer@example.com"`, `"to": 5`, 1)))
	f = examples(fixedRecorder{err: errors.New("disk full")})
	add("audit/unavailable", post(f, "/v1/pre-tool-check", demo("support-agent"), sendEmail))

	// A fault inside the decision path.
	f = newServer(t, func(d *server.Deps) {
		d.Engine = gate.New(gate.WithClock(func() time.Time { return fixedNow }),
			gate.WithCatalog(func() *catalog.Catalog { panic("catalog snapshot corrupted") }, gate.UnknownAllow, catalog.ArgumentsEnforce))
	})
	add("fault/internal_error", post(f, "/pre-tool-check", runtime, search))

	if *updateGolden {
		if err := os.WriteFile(answersGolden, got.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want := readFile(t, answersGolden)
	if got.String() != want {
		gl, wl := strings.Split(got.String(), "\n"), strings.Split(want, "\n")
		for i := 0; i < len(gl) || i < len(wl); i++ {
			if g, w := at(gl, i), at(wl, i); g != w {
				n := 0
				for n < len(g) && n < len(w) && g[n] == w[n] {
					n++
				}
				from := max(n-200, 0)
				t.Fatalf("answers differ from %s at line %d, byte %d:\n got  …%.400s\n want …%.400s", answersGolden, i+1, n, g[min(from, len(g)):], w[min(from, len(w)):])
			}
		}
	}
}

var decisionIDs = regexp.MustCompile(`"decision_id":"[^"]*"`)

// mcpStructuredContent calls the MCP tool with event and returns the
// structured content exactly as served.
func mcpStructuredContent(t *testing.T, f *fixture, event string) []byte {
	t.Helper()
	hdr := map[string]string{"Authorization": "Bearer " + runtimeSecret, "Content-Type": "application/json",
		"Accept": "application/json, text/event-stream", "Mcp-Protocol-Version": "2025-06-18"}
	call := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"aana_pre_tool_check","arguments":` + event + `}}`
	res := f.do(request{method: http.MethodPost, target: "/mcp", body: strings.NewReader(call), header: hdr})
	var rpc struct {
		Result struct {
			StructuredContent json.RawMessage `json:"structuredContent"`
		} `json:"result"`
	}
	if err := json.Unmarshal(res.raw, &rpc); err != nil || rpc.Result.StructuredContent == nil {
		t.Fatalf("mcp tools/call: %d %s", res.status, res.raw)
	}
	return rpc.Result.StructuredContent
}

// fixedRecorder answers every record with res, or fails with err.
type fixedRecorder struct {
	res audit.Result
	err error
}

func (r fixedRecorder) Record(context.Context, *audit.Record) (audit.Result, error) {
	return r.res, r.err
}
func (fixedRecorder) Close(context.Context) error { return nil }
func (fixedRecorder) Ready() bool                 { return true }
func (fixedRecorder) Stored(*audit.Record) audit.Result {
	return audit.Result{Sink: audit.SinkPostgres, Status: audit.StatusWritten}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func globFiles(t *testing.T, pattern string) []string {
	t.Helper()
	paths, err := filepath.Glob(pattern)
	if err != nil || len(paths) == 0 {
		t.Fatalf("%s: %v %v", pattern, paths, err)
	}
	return paths
}

func at(lines []string, i int) string {
	if i < len(lines) {
		return lines[i]
	}
	return "(end)"
}
