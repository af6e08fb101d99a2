package server_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/gatedhq/gated/internal/eventcodec"
	"github.com/gatedhq/gated/internal/server"
)

// Bodies that are not one JSON object are answered 400 with route refuse.
func TestMalformedBodies(t *testing.T) {
	t.Parallel()
	f := newServer(t, nil)
	tests := map[string]string{
		"empty":             "",
		"whitespace":        " \n\t ",
		"not JSON":          "hello",
		"array":             "[]",
		"array of event":    "[" + validEvent + "]",
		"string":            `"event"`,
		"number":            "42",
		"null":              "null",
		"boolean":           "true",
		"trailing garbage":  validEvent + " x",
		"two objects":       validEvent + validEvent,
		"trailing comma":    strings.TrimSuffix(validEvent, "}") + ",}",
		"truncated":         validEvent[:len(validEvent)/2],
		"single quotes":     `{'tool_name':'x'}`,
		"raw invalid UTF-8": "{\"tool_name\":\"x\"\xff}",
		"10,000 deep":       strings.Repeat("[", 10000) + strings.Repeat("]", 10000),
		"10,000 deep args": strings.TrimSuffix(eventWith(t, map[string]string{"proposed_arguments": `{}`}), "}") +
			`,"x":` + strings.Repeat(`{"a":`, 10000) + "1" + strings.Repeat("}", 10000) + "}",
		"unclosed deep": strings.Repeat("{", 10000),
	}
	for name, body := range tests {
		t.Run(name, func(t *testing.T) {
			res := f.post(body)
			if res.status != http.StatusBadRequest {
				t.Fatalf("status %d, want 400: %.300s", res.status, res.raw)
			}
			if res.str("error") == "" {
				t.Error("no error message")
			}
		})
	}
}

// Trailing whitespace after the object is fine.
func TestTrailingWhitespace(t *testing.T) {
	t.Parallel()
	f := newServer(t, nil)
	if res := f.post(validEvent + "\n\r\n  "); res.status != http.StatusOK || res.str("route") != "accept" {
		t.Errorf("%d %s", res.status, res.raw)
	}
}

// The nesting limit counts arrays and objects, not brackets inside strings.
func TestNestingLimit(t *testing.T) {
	t.Parallel()
	f := newServer(t, nil)
	nested := func(depth int) string {
		// The event object is level 1, proposed_arguments level 2.
		inner := strings.Repeat(`{"a":`, depth-1) + "1" + strings.Repeat("}", depth-1)
		return eventWith(t, map[string]string{"proposed_arguments": inner})
	}
	if res := f.post(nested(eventcodec.DefaultMaxDepth)); res.status != http.StatusOK {
		t.Errorf("depth %d: %d %s", eventcodec.DefaultMaxDepth, res.status, res.raw)
	}
	if res := f.post(nested(eventcodec.DefaultMaxDepth + 1)); res.status != http.StatusBadRequest {
		t.Errorf("depth %d: %d", eventcodec.DefaultMaxDepth+1, res.status)
	}
	brackets := eventWith(t, map[string]string{"proposed_arguments": `{"q":"` + strings.Repeat(`[{\"`, 5000) + `"}`})
	if res := f.post(brackets); res.status != http.StatusOK || res.str("route") != "accept" {
		t.Errorf("brackets in a string: %d %.300s", res.status, res.raw)
	}
	// validEvent itself reaches level 4 (evidence_refs[0].freshness).
	custom := newServer(t, func(d *server.Deps) { d.MaxDepth = 5 })
	if res := custom.post(nested(5)); res.status != http.StatusOK {
		t.Errorf("custom depth 5: %d", res.status)
	}
	if res := custom.post(nested(6)); res.status != http.StatusBadRequest {
		t.Errorf("custom depth 6: %d", res.status)
	}
}

// Issue 26 §1: /mcp decoded a call's arguments without the body's checks,
// so an event nested deeper than the limit was decided. It is now refused
// as a body is: a tool error with route refuse, and no decision.
func TestMCPNestingLimit(t *testing.T) {
	t.Parallel()
	f := newServer(t, func(d *server.Deps) { d.MaxDepth = 5 })
	call := func(depth int) map[string]any {
		inner := strings.Repeat(`{"a":`, depth-1) + "1" + strings.Repeat("}", depth-1)
		event := eventWith(t, map[string]string{"proposed_arguments": inner})
		res := f.do(request{method: http.MethodPost, target: "/mcp",
			body: strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"aana_pre_tool_check","arguments":` + event + `}}`),
			header: map[string]string{"Authorization": "Bearer " + runtimeSecret, "Accept": "application/json, text/event-stream",
				"Mcp-Protocol-Version": "2025-06-18"}})
		result, _ := res.body["result"].(map[string]any)
		if res.status != http.StatusOK || result == nil {
			t.Fatalf("depth %d: %d %.300s", depth, res.status, res.raw)
		}
		return result
	}
	decided := call(5)
	if d, _ := decided["structuredContent"].(map[string]any); decided["isError"] == true || d["route"] != "accept" || d["decision_id"] == nil {
		t.Errorf("depth 5: %v", decided)
	}
	refused := call(6)
	d, _ := refused["structuredContent"].(map[string]any)
	if refused["isError"] != true || d["route"] != "refuse" || d["execute"] != false || d["decision_id"] != nil ||
		!strings.Contains(fmt.Sprint(d["error"]), "nesting exceeds 5 levels") {
		t.Errorf("depth 6: %v", refused)
	}
}

// countingReader counts what the server reads of an endless body.
type countingReader struct {
	n, limit int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	if c.n >= c.limit {
		return 0, io.EOF
	}
	p = p[:min(int64(len(p)), c.limit-c.n)]
	for i := range p {
		p[i] = ' '
	}
	c.n += int64(len(p))
	return len(p), nil
}

// A body over the limit is answered 413 without reading it all.
func TestBodyLimit(t *testing.T) {
	t.Parallel()
	f := newServer(t, nil)
	big := &countingReader{limit: 10 << 20}
	res := f.do(request{method: http.MethodPost, target: "/pre-tool-check", body: io.MultiReader(strings.NewReader("{"), big),
		header: map[string]string{"Authorization": "Bearer " + runtimeSecret}})
	if res.status != http.StatusRequestEntityTooLarge {
		t.Fatalf("status %d: %s", res.status, res.raw)
	}
	if big.n > 2*server.DefaultMaxBodyBytes {
		t.Errorf("the server read %d bytes of a 10 MB body", big.n)
	}

	// Exactly at the limit is decided; one byte over is not.
	at := padTo(t, server.DefaultMaxBodyBytes)
	if res := f.post(at); res.status != http.StatusOK || res.str("route") != "accept" {
		t.Errorf("body of %d bytes: %d", len(at), res.status)
	}
	if res := f.post(at + " "); res.status != http.StatusRequestEntityTooLarge {
		t.Errorf("body of %d bytes: %d", len(at)+1, res.status)
	}
	small := newServer(t, func(d *server.Deps) { d.MaxBodyBytes = 100 })
	if res := small.post(validEvent); res.status != http.StatusRequestEntityTooLarge {
		t.Errorf("custom limit: %d", res.status)
	}
}

// padTo returns validEvent grown to exactly n bytes by an argument.
func padTo(t *testing.T, n int) string {
	t.Helper()
	base := eventWith(t, map[string]string{"proposed_arguments": `{"pad":""}`})
	body := strings.Replace(base, `"pad":""`, `"pad":"`+strings.Repeat("x", n-len(base))+`"`, 1)
	if len(body) != n {
		t.Fatalf("padded to %d, want %d", len(body), n)
	}
	return body
}

var (
	notString = []string{`1`, `true`, `null`, `[]`, `{}`}
	notObject = []string{`1`, `true`, `null`, `[]`, `"x"`}
	notArray  = []string{`1`, `true`, `null`, `{}`, `"x"`}
)

// Objects that are not valid events are decided: 200, route refuse, the
// normalisation or schema blocker, never an accept and never a 5xx.
func TestInvalidEvents(t *testing.T) {
	t.Parallel()
	f := newServer(t, nil)
	type tc struct{ field, value string }
	var cases []tc
	for _, field := range []string{"tool_name", "tool_category", "authorization_state", "risk_domain", "recommended_route",
		"schema_version", "request_id", "agent_id", "user_intent"} {
		for _, v := range notString {
			cases = append(cases, tc{field, v})
		}
	}
	for _, field := range []string{"tool_category", "authorization_state", "risk_domain", "recommended_route", "schema_version"} {
		cases = append(cases, tc{field, `"bogus"`}, tc{field, `""`})
	}
	for _, v := range notObject {
		cases = append(cases, tc{"proposed_arguments", v}, tc{"authorization_subject", v})
	}
	for _, v := range notArray {
		cases = append(cases, tc{"evidence_refs", v})
	}
	for _, field := range []string{"tool_name", "tool_category", "authorization_state", "evidence_refs",
		"risk_domain", "proposed_arguments", "recommended_route"} {
		cases = append(cases, tc{field, ""}) // missing
	}
	cases = append(cases,
		tc{"tool_name", `""`},
		tc{"extra_field", `"x"`},
		tc{"authorization_subject", `{"subject_type":"user","extra":1}`},
		tc{"authorization_subject", `{"subject_type":"alien"}`},
	)
	// Evidence ref fields.
	// refWith is a valid ref with k set to v: replaced, not repeated, since
	// a repeated key is refused before the contract sees the event.
	refWith := func(k, v string) string {
		return "[" + jsonWith(t, `{"source_id":"doc.1","kind":"other","trust_tier":"verified","redaction_status":"redacted",`+
			`"freshness":{"status":"fresh"},"provenance":"fixture"}`, map[string]string{k: v}) + "]"
	}
	for _, k := range []string{"source_id", "kind", "trust_tier", "redaction_status", "summary", "retrieved_at",
		"citation_url", "retrieval_url", "provenance"} {
		for _, v := range notString {
			cases = append(cases, tc{"evidence_refs", refWith(k, v)})
		}
	}
	for _, k := range []string{"kind", "trust_tier", "redaction_status"} {
		cases = append(cases, tc{"evidence_refs", refWith(k, `"bogus"`)})
	}
	for _, v := range notObject {
		cases = append(cases, tc{"evidence_refs", refWith("freshness", v)})
	}
	for _, v := range []string{`1`, `"x"`, `{}`, `[1]`, `[null]`} {
		cases = append(cases, tc{"evidence_refs", refWith("supports", v)}, tc{"evidence_refs", refWith("contradicts", v)})
	}
	cases = append(cases,
		tc{"evidence_refs", refWith("extra", `"x"`)},
		tc{"evidence_refs", refWith("freshness", `{"status":"bogus"}`)},
		tc{"evidence_refs", refWith("freshness", `{"status":"fresh","extra":1}`)},
		tc{"evidence_refs", refWith("freshness", `{"status":"fresh","age_hours":"1"}`)},
		tc{"evidence_refs", refWith("freshness", `{}`)},
		tc{"evidence_refs", `[1]`}, tc{"evidence_refs", `[null]`}, tc{"evidence_refs", `[[]]`}, tc{"evidence_refs", `[true]`},
		tc{"evidence_refs", `[{}]`}, tc{"evidence_refs", `[""]`},
	)
	for _, c := range cases {
		t.Run(c.field+"="+c.value, func(t *testing.T) {
			res := f.post(eventWith(t, map[string]string{c.field: c.value}))
			if res.status != http.StatusOK || res.str("route") != "refuse" {
				t.Fatalf("%d %.400s", res.status, res.raw)
			}
			bl, _ := res.body["hard_blockers"].([]any)
			if !slices.Equal(bl, []any{"contract_normalization_failed"}) && !slices.Equal(bl, []any{"schema_validation_failed"}) {
				t.Errorf("hard_blockers %v", bl)
			}
		})
	}
}

// Numbers too large for float64 are kept as written, not a failure.
func TestHugeNumbers(t *testing.T) {
	t.Parallel()
	f := newServer(t, nil)
	res := f.post(eventWith(t, map[string]string{"proposed_arguments": `{"n":1e400,"m":-1e-400,"k":123456789012345678901234567890}`}))
	if res.status != http.StatusOK || res.str("route") != "accept" {
		t.Errorf("%d %.300s", res.status, res.raw)
	}
	res = f.post(eventWith(t, map[string]string{"evidence_refs": `[{"source_id":"doc.1","kind":"other","trust_tier":"verified",` +
		`"redaction_status":"redacted","freshness":{"status":"fresh","age_hours":1e400},"provenance":"fixture"}]`}))
	if res.status != http.StatusOK {
		t.Errorf("age_hours 1e400: %d %.300s", res.status, res.raw)
	}
}

// JSON text must be UTF-8 (RFC 8259 §8.1). encoding/json silently replaces
// invalid bytes inside strings by U+FFFD, so gated decides on text the
// caller never sent.
func TestInvalidUTF8InString(t *testing.T) {
	t.Parallel()
	f := newServer(t, nil)
	body := strings.Replace(validEvent, `"Lisbon"`, "\"Lis\xffbon\"", 1)
	if res := f.post(body); res.status != http.StatusBadRequest {
		t.Errorf("%d %.300s", res.status, res.raw)
	}
}

// A body that parsers read differently is refused, not decided on
// encoding/json's reading: it keeps the last of a repeated key (gjson and
// cJSON the first) and turns a lone surrogate into U+FFFD (JavaScript keeps
// it), so {"command": "rm -rf /", "command": "ls"} was decided as ls.
func TestAmbiguousBodies(t *testing.T) {
	t.Parallel()
	f := newServer(t, nil)
	for name, c := range map[string]struct{ body, msg string }{
		"a top-level key twice": {strings.Replace(validEvent, `{"tool_name":"get_weather",`, `{"tool_name":"delete_account","tool_name":"get_weather",`, 1),
			`the key "/tool_name" is given more than once`},
		"an argument twice": {strings.Replace(validEvent, `{"city":"Lisbon"}`, `{"city":"Paris","city":"Lisbon"}`, 1),
			`the key "/proposed_arguments/city" is given more than once`},
		"an argument twice, escaped": {strings.Replace(validEvent, `{"city":"Lisbon"}`, `{"city":"Paris","\u0063ity":"Lisbon"}`, 1),
			`the key "/proposed_arguments/city" is given more than once`},
		"a lone surrogate": {strings.Replace(validEvent, `"Lisbon"`, `"Lisbon\ud800"`, 1), "malformed JSON"},
	} {
		t.Run(name, func(t *testing.T) {
			res := f.post(c.body)
			if res.status != http.StatusBadRequest || res.str("route") != "refuse" || !strings.Contains(res.str("error"), c.msg) {
				t.Errorf("%d %.300s, want 400 with %q", res.status, res.raw, c.msg)
			}
		})
	}
	// The MCP tool reads its arguments as the body: no one event.
	dup := strings.Replace(validEvent, `{"city":"Lisbon"}`, `{"city":"Paris","city":"Lisbon"}`, 1)
	var answer struct{ Route string }
	if err := json.Unmarshal(mcpStructuredContent(t, f, dup), &answer); err != nil || answer.Route != "refuse" {
		t.Errorf("/mcp decided an argument given twice as %q (%v), want refuse", answer.Route, err)
	}
	// A surrogate pair is one character, read alike by every parser.
	if res := f.post(strings.Replace(validEvent, `"Lisbon"`, `"Lisbon\ud83d\ude00"`, 1)); res.status != http.StatusOK {
		t.Errorf("a surrogate pair: %d %.300s", res.status, res.raw)
	}
}

// An event whose runtime route is not a contract route is refused, and
// the envelope says the runtime's route is unknown (null).
func TestUnknownRuntimeRouteIsNull(t *testing.T) {
	t.Parallel()
	f := newServer(t, nil)
	res := f.post(eventWith(t, map[string]string{"recommended_route": `"allow"`}))
	if res.status != http.StatusOK || res.str("route") != "refuse" {
		t.Fatalf("%d %.300s", res.status, res.raw)
	}
	if v, ok := res.body["runtime_recommended_route"]; !ok || v != nil {
		t.Errorf("runtime_recommended_route = %v (present %v), want null", v, ok)
	}
}
