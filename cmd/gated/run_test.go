package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/gatedhq/gated/internal/redact/redacttest"
)

// env returns a getenv over a fixed map, so tests never see the real environment.
func env(kv map[string]string) func(string) string { return func(k string) string { return kv[k] } }

// syncBuffer is a goroutine-safe log sink.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// startServe runs `gated serve` through run and waits for /healthz.
func startServe(t *testing.T, args []string, kv map[string]string) (base string, logs *syncBuffer) {
	t.Helper()
	addr := freeAddr(t)
	dir := t.TempDir()
	args = append([]string{"--audit-file", filepath.Join(dir, "audit.jsonl"), "--spool-dir", filepath.Join(dir, "spool")}, args...)
	ctx, cancel := context.WithCancel(context.Background())
	logs = &syncBuffer{}
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, append([]string{"gated", "serve", "--addr", addr}, args...), env(kv), strings.NewReader(""), io.Discard, logs)
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("serve returned %v", err)
			}
		case <-time.After(20 * time.Second):
			t.Error("serve did not shut down")
		}
	})
	base = "http://" + addr
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case err := <-done:
			t.Fatalf("serve exited early: %v\n%s", err, logs)
		default:
		}
		if resp, err := http.Get(base + "/healthz"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return base, logs
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("gated did not become healthy\n%s", logs)
	return "", nil
}

func post(t *testing.T, url, body string, hdr map[string]string) (int, map[string]any) {
	t.Helper()
	return call(t, http.MethodPost, url, strings.NewReader(body), hdr)
}

func get(t *testing.T, url string, hdr map[string]string) (int, map[string]any) {
	t.Helper()
	return call(t, http.MethodGet, url, nil, hdr)
}

// call sends one request and decodes the JSON object it answers.
func call(t *testing.T, method, url string, body io.Reader, hdr map[string]string) (int, map[string]any) {
	t.Helper()
	status, raw := send(t, method, url, body, hdr)
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatalf("%s %s: decode answer: %v", method, url, err)
	}
	return status, m
}

// send sends one request and returns its status and body.
func send(t *testing.T, method, url string, body io.Reader, hdr map[string]string) (int, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, url, body)
	if err != nil {
		t.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s %s: read answer: %v", method, url, err)
	}
	return resp.StatusCode, raw
}

func readExample(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "examples", "events", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestServeDecidesAndShutsDown(t *testing.T) {
	t.Parallel()
	base, logs := startServe(t, []string{"--log-level", "debug", "--allow-request-shadow"}, nil)
	code, d := post(t, base+"/pre-tool-check", readExample(t, "send_email_ask.json"), nil)
	if code != http.StatusOK || d["route"] != "ask" || d["execute"] != false {
		t.Fatalf("got %d %v %v", code, d["route"], d["execute"])
	}
	code, d = post(t, base+"/v1/pre-tool-check?shadow_mode=true", readExample(t, "send_email_ask.json"), nil)
	if code != http.StatusOK || d["route"] != "ask" || d["execute"] != true || d["shadow"] != true {
		t.Fatalf("shadow: got %d %v %v %v", code, d["route"], d["execute"], d["shadow"])
	}
	code, d = post(t, base+"/pre-tool-check", "[1,2]", nil)
	if code != http.StatusBadRequest || d["route"] != "refuse" {
		t.Fatalf("array body: got %d %v", code, d)
	}
	// One debug line per decision, without the argument value.
	if n := strings.Count(logs.String(), `"msg":"decision"`); n != 2 {
		t.Errorf("want 2 decision log lines, got %d", n)
	}
	if strings.Contains(logs.String(), "customer@example.com") {
		t.Error("an argument value reached the logs")
	}
}

func TestServeShadowFlagFromEnvironment(t *testing.T) {
	t.Parallel()
	base, _ := startServe(t, nil, map[string]string{"GATED_SHADOW": "true"})
	_, d := post(t, base+"/pre-tool-check", readExample(t, "delete_database_refuse.json"), nil)
	if d["route"] != "refuse" || d["execute"] != true || d["shadow"] != true {
		t.Fatalf("GATED_SHADOW not applied: %v %v %v", d["route"], d["execute"], d["shadow"])
	}
}

func TestServeWithTokens(t *testing.T) {
	t.Parallel()
	tokens := tokensFile(t, token{"agent", "s3cret-agent-token", "[pre_tool_check]", ""},
		token{"reader", "reader-token", "[catalog_read]", ""})
	base, logs := startServe(t, nil, map[string]string{"GATED_TOKENS": tokens})
	ev := readExample(t, "search_docs_accept.json")
	for _, c := range []struct {
		hdr  map[string]string
		want int
	}{
		{nil, http.StatusUnauthorized},
		{map[string]string{"Authorization": "Bearer wrong"}, http.StatusUnauthorized},
		{map[string]string{"Authorization": "Bearer reader-token"}, http.StatusForbidden},
		{map[string]string{"Authorization": "Bearer s3cret-agent-token"}, http.StatusOK},
		{map[string]string{"X-AANA-Token": "s3cret-agent-token"}, http.StatusOK},
	} {
		code, d := post(t, base+"/pre-tool-check", ev, c.hdr)
		if code != c.want || d["route"] == nil {
			t.Errorf("%v: got %d route %v, want %d", c.hdr, code, d["route"], c.want)
		}
	}
	if strings.Contains(logs.String(), "s3cret-agent-token") {
		t.Error("a token reached the logs")
	}
}

func TestServeRefusesOpenNonLoopback(t *testing.T) {
	t.Parallel()
	err := run(context.Background(), []string{"gated", "serve", "--addr", "0.0.0.0:0"}, env(nil), nil, io.Discard, io.Discard)
	var ex exitError
	if !errors.As(err, &ex) || ex.code != exitUsage || !strings.Contains(ex.msg, "--insecure-no-auth") {
		t.Fatalf("got %v", err)
	}
}

func TestServeBadFlags(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{
		{"gated", "serve", "--no-such-flag"},
		{"gated", "serve", "--log-level", "loud"},
		{"gated", "serve", "--trusted-proxy", "not-a-cidr"},
		{"gated", "serve", "extra"},
		{"gated", "frobnicate"},
		{"gated"},
	} {
		err := run(context.Background(), args, env(nil), nil, io.Discard, io.Discard)
		var ex exitError
		if !errors.As(err, &ex) || ex.code != exitUsage {
			t.Errorf("%v: got %v, want a usage error", args, err)
		}
	}
	err := run(context.Background(), []string{"gated", "serve"}, env(map[string]string{"GATED_RATE_LIMIT": "lots"}), nil, io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "GATED_RATE_LIMIT") {
		t.Errorf("a bad environment value must name its variable, got %v", err)
	}
}

func TestCheckExitCodes(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		file  string
		code  int
		route string
	}{
		{"search_docs_accept.json", 0, "accept"},
		{"send_refund_accept.json", 0, "accept"},
		{"send_email_ask.json", exitBlocked, "ask"},
		{"transactions_defer.json", exitBlocked, "defer"},
		{"delete_database_refuse.json", exitBlocked, "refuse"},
	} {
		t.Run(c.file, func(t *testing.T) {
			var out bytes.Buffer
			path := filepath.Join("..", "..", "examples", "events", c.file)
			err := run(context.Background(), []string{"gated", "check", path}, env(nil), nil, &out, io.Discard)
			if got := exitCode(err); got != c.code {
				t.Fatalf("exit %d, want %d (%v)", got, c.code, err)
			}
			var d map[string]any
			if err := json.Unmarshal(out.Bytes(), &d); err != nil || d["route"] != c.route {
				t.Fatalf("route %v, want %s (%v)", d["route"], c.route, err)
			}
		})
	}
}

func TestCheckFromStdinAndUsage(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	err := run(context.Background(), []string{"gated", "check"}, env(nil), strings.NewReader(readExample(t, "search_docs_accept.json")), &out, io.Discard)
	if err != nil || !strings.Contains(out.String(), `"route": "accept"`) {
		t.Fatalf("stdin check: %v %s", err, out.String())
	}
	for _, c := range []struct {
		args  []string
		stdin string
	}{
		{[]string{"gated", "check", "a", "b"}, ""},
		{[]string{"gated", "check", "/no/such/file"}, ""},
		{[]string{"gated", "check"}, "not json"},
		{[]string{"gated", "check"}, "[]"},
	} {
		err := run(context.Background(), c.args, env(nil), strings.NewReader(c.stdin), io.Discard, io.Discard)
		if got := exitCode(err); got != exitUsage {
			t.Errorf("%v %q: exit %d, want %d", c.args, c.stdin, got, exitUsage)
		}
	}
	// An invalid event is decided (refused), not a usage error.
	err = run(context.Background(), []string{"gated", "check"}, env(nil), strings.NewReader(`{"tool_name":"x"}`), io.Discard, io.Discard)
	if got := exitCode(err); got != exitBlocked {
		t.Errorf("invalid event: exit %d, want %d", got, exitBlocked)
	}
}

func TestVersion(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	if err := run(context.Background(), []string{"gated", "version"}, env(nil), nil, &out, io.Discard); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(out.String(), "gated ") {
		t.Fatalf("got %q", out.String())
	}
}

func exitCode(err error) int {
	var ex exitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ex):
		return ex.code
	}
	return 1
}

// The example policy's own decision tests run in make test, through the
// real decision path, exactly as an operator runs them.
func TestExamplePolicyTests(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	err := run(context.Background(), []string{"gated", "policy", "test", "--catalog", "../../examples/catalog", "../../examples/policy"},
		env(nil), nil, &out, io.Discard)
	if err != nil || !strings.Contains(out.String(), " passed, 0 failed") {
		t.Fatalf("%v\n%s", err, out.String())
	}
}

func TestExampleCatalogAndPolicyLint(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	if err := run(context.Background(), []string{"gated", "catalog", "lint", "../../examples/catalog"}, env(nil), nil, &out, io.Discard); err != nil {
		t.Fatalf("catalog lint: %v\n%s", err, out.String())
	}
	out.Reset()
	if err := run(context.Background(), []string{"gated", "policy", "lint", "--catalog", "../../examples/catalog", "../../examples/policy"}, env(nil), nil, &out, io.Discard); err != nil {
		t.Fatalf("policy lint: %v\n%s", err, out.String())
	}
	// A broken catalog is reported, one problem per line, with exit 1.
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "ACTION.md"), []byte("---\nid: Not An Id\nrisk_level: 9\n---\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	if got := exitCode(run(context.Background(), []string{"gated", "catalog", "lint", dir}, env(nil), nil, &out, io.Discard)); got != 1 || out.Len() == 0 {
		t.Fatalf("broken catalog: exit %d, output %q", got, out.String())
	}
}

// gated's logger masks a secret in whatever a log site writes (issue 25 §3).
func TestLoggerMasksSecrets(t *testing.T) {
	t.Parallel()
	var buf strings.Builder
	log, err := newLogger(&buf, "debug")
	if err != nil {
		t.Fatal(err)
	}
	c := redacttest.Canaries[0]
	log.Warn("upstream said "+c.Text, zap.String("tool", c.Text), zap.Error(errors.New(c.Text)))
	if out := buf.String(); strings.Contains(out, c.Secret) || strings.Count(out, "[secret:"+c.Kind) != 3 {
		t.Errorf("the log line shows the token, or not three masks: %s", out)
	}
}
