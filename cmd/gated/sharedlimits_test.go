package main

import (
	"context"
	"errors"
	"io"
	"net/http"
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
