package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/gatedhq/gated/internal/redistest"
	"github.com/gatedhq/gated/internal/testwait"
)

func TestServeLimitFlagErrors(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--limits-fail", "maybe"}, "--limits-fail"},
		{[]string{"--redis-timeout", "0s"}, "--redis-timeout"},
		{[]string{"--redis-url", "http://user:hunter2@redis:6379"}, "--redis-url"},
	} {
		err := run(context.Background(), append([]string{"gated", "serve", "--addr", freeAddr(t)}, c.args...), env(nil), nil, io.Discard, io.Discard)
		var ex exitError
		if !errors.As(err, &ex) || ex.code != exitUsage || !strings.Contains(ex.msg, c.want) || strings.Contains(ex.msg, "hunter2") {
			t.Errorf("%v: got %v, want a usage error naming %s and no password", c.args, err, c.want)
		}
	}
}

// Three gated processes counting in one Redis: a rate limit of N a minute
// admits N requests across them, not 3N. Through a Redis restart they
// refuse limited requests naming rate_limit_unavailable (limits fail
// closed by default), count each, and count again once Redis is back.
func TestThreeProcessesShareLimits(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("process-level test")
	}
	const perMinute = 5
	srv := redistest.Start(t)
	args := []string{"--redis-url", srv.URL, "--redis-key-prefix", redistest.Prefix(t), "--rate-limit", strconv.Itoa(perMinute), "--log-level", "warn"}
	// Metrics on a listener of their own: /metrics on --addr is a limited
	// request like any other.
	metricsAddr := freeAddr(t)
	procs := []*gatedProcess{startProcess(t, append(args, "--metrics-addr", metricsAddr)...), startProcess(t, args...), startProcess(t, args...)}
	ev := readExample(t, "search_docs_accept.json")

	// ask sends one event to process i and says how it was answered.
	ask := func(i int) (admitted, unavailable bool) {
		status, raw := send(t, http.MethodPost, procs[i%len(procs)].base+"/pre-tool-check", strings.NewReader(ev), nil)
		switch {
		case status == http.StatusOK:
			return true, false
		case status == http.StatusTooManyRequests:
			return false, strings.Contains(string(raw), "rate_limit_unavailable")
		}
		t.Fatalf("process %d answered %d: %s", i%len(procs), status, raw)
		return false, false
	}
	// round sends 4N events round the processes, skipping answers that say
	// Redis is unreachable, and returns how many were admitted.
	round := func() int {
		admitted, counted, i := 0, 0, 0
		testwait.Until(t, "answers that counted in Redis", func() bool {
			ok, unavailable := ask(i)
			i++
			if !unavailable {
				counted++
				if ok {
					admitted++
				}
			}
			return counted == 4*perMinute
		})
		return admitted
	}

	if got := round(); got != perMinute {
		t.Fatalf("three processes admitted %d requests, want the limit's %d in total", got, perMinute)
	}

	srv.Kill()
	for i := range procs {
		if ok, unavailable := ask(i); ok || !unavailable {
			t.Fatalf("Redis down, process %d: admitted %v, unavailable %v; want refused naming rate_limit_unavailable", i, ok, unavailable)
		}
	}
	if n := refusedCount(t, "http://"+metricsAddr); n < 1 {
		t.Fatalf("gated_limit_backend_errors_total refused = %v, want at least 1", n)
	}

	// A restarted Redis is empty: the limit starts over, shared as before.
	srv.Restart(t)
	if got := round(); got != perMinute {
		t.Fatalf("after the Redis restart three processes admitted %d requests, want %d", got, perMinute)
	}
}

// POLICY.md limits too: a rate-tool-calls limit of 3 a minute admits three
// calls of one caller and action across three processes, keyed by the
// token and action as in one process.
func TestThreeProcessesSharePolicyLimits(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("process-level test")
	}
	policyDir := t.TempDir()
	err := os.WriteFile(filepath.Join(policyDir, "POLICY.md"), []byte(`---
schema: policy/v1
id: "@test/shared-limits"
grants:
  - {principal: "bot://support-agent", actions: [{action: "crm:read-customer"}]}
  - {principal: "group://support-leads", actions: [{action: "crm:read-customer"}]}
limits:
  - {kind: rate-tool-calls, value: 3, per: minute}
---
`), 0o600)
	if err != nil {
		t.Fatal(err)
	}
	args := []string{"--redis-url", redistest.URL(), "--redis-key-prefix", redistest.Prefix(t), "--log-level", "warn",
		"--catalog", "../../examples/catalog", "--policy", policyDir, "--tokens", "../../examples/tokens.yaml"}
	procs := []*gatedProcess{startProcess(t, args...), startProcess(t, args...), startProcess(t, args...)}
	ev, err := os.ReadFile("../../examples/events/tour/lookup_customer_accept.json")
	if err != nil {
		t.Fatal(err)
	}
	agent := map[string]string{"Authorization": "Bearer demo-support-agent"}
	accepted := 0
	for i := range 9 {
		status, d := post(t, procs[i%3].base+"/v1/pre-tool-check", string(ev), agent)
		switch {
		case status != http.StatusOK:
			t.Fatalf("call %d: %d %v", i, status, d)
		case d["route"] == "accept":
			accepted++
		case d["route"] != "defer" || !strings.Contains(fmt.Sprint(d["hard_blockers"]), "policy_limit_exceeded"):
			t.Fatalf("call %d: %v; want accept, or defer with policy_limit_exceeded", i, d)
		}
	}
	if accepted != 3 {
		t.Fatalf("three processes accepted %d calls, want the limit's 3 in total", accepted)
	}
	// Another token is another caller, with a budget of its own.
	status, d := post(t, procs[0].base+"/v1/pre-tool-check", string(ev), map[string]string{"Authorization": "Bearer demo-support-lead"})
	if status != http.StatusOK || d["route"] != "accept" {
		t.Fatalf("another token: %d %v; want accept", status, d)
	}
}

var refusedLine = regexp.MustCompile(`(?m)^gated_limit_backend_errors_total\{backend="redis",outcome="refused"\} (\d+)$`)

// refusedCount scrapes how many limited calls a process refused because
// Redis could not answer.
func refusedCount(t *testing.T, base string) int {
	t.Helper()
	status, raw := send(t, http.MethodGet, base+"/metrics", nil, nil)
	m := refusedLine.FindSubmatch(raw)
	if status != http.StatusOK || m == nil {
		t.Fatalf("/metrics: %d, no refused count in\n%s", status, raw)
	}
	n, _ := strconv.Atoi(string(m[1]))
	return n
}
