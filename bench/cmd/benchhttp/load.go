package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// sample is one round against one server.
type sample struct {
	rps      float64       // answered requests per second, as wrk counts them
	p50, p99 time.Duration // latency percentiles from wrk's histogram
	cpuPerOp time.Duration // the server process's user+system CPU per request
	requests int
	// serverCores and loadCores are the CPU the server process and the
	// load generator each used over the round, in cores (CPU time over
	// wall time): beside each other they say which of the two set the pace.
	serverCores, loadCores float64
	// pgCores and pgCPUPerOp are the local PostgreSQL cluster's CPU over
	// the round, in cores and per request (0 for servers that do not write
	// to it): the audit's cost beyond gated's own process.
	pgCores    float64
	pgCPUPerOp time.Duration
	// notAccepted counts the decisions gated's metrics show with a route
	// other than accept during the round (0 for servers without them): an
	// overloaded gated that refused would otherwise look fast.
	notAccepted int
}

// loadGen is the load generator: wrk, with its threads.
type loadGen struct {
	bin     string
	threads int
}

// wrkScript is the Lua script wrk runs: it posts the body file as JSON and,
// once the run is over, prints wrk's own counters on one line. The counters
// are exact where wrk's text report rounds (latency to two decimals in
// changing units) and prints its error lines only when they are not zero.
const wrkScript = `wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
local f = assert(io.open(%s, "rb"))
wrk.body = f:read("*a")
f:close()

function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format("` + wrkLinePrefix + ` requests=%%d duration_us=%%d p50_us=%%d p99_us=%%d connect=%%d read=%%d write=%%d status=%%d timeout=%%d\n",
    summary.requests, summary.duration, latency:percentile(50), latency:percentile(99),
    e.connect, e.read, e.write, e.status, e.timeout))
end
`

// wrkLinePrefix starts the line wrkScript's done prints.
const wrkLinePrefix = "benchhttp:"

// writeWrkScript writes the script that posts body into dir and returns its
// path. The body's path goes into a Lua long string, whose level is chosen
// so that the path cannot close it.
func writeWrkScript(dir, name, body string) (string, error) {
	abs, err := filepath.Abs(body)
	if err != nil {
		return "", err
	}
	eq := ""
	for strings.Contains(abs, "]"+eq+"]") {
		eq += "="
	}
	path := filepath.Join(dir, name+".lua")
	return path, os.WriteFile(path, fmt.Appendf(nil, wrkScript, "["+eq+"["+abs+"]"+eq+"]"), 0o644)
}

// wrkResult is what the harness reads from the line wrkScript prints.
type wrkResult struct {
	requests                              int // responses read, whatever their status
	duration                              time.Duration
	p50, p99                              time.Duration
	connect, read, write, status, timeout int
}

// errors is every request that was not answered below 400: wrk's status
// count is of answers of 400 and more, and its socket errors are requests
// that got no answer (refused or broken connections, timeouts).
func (r wrkResult) errors() int { return r.connect + r.read + r.write + r.status + r.timeout }

// drive runs wrk against s for d at concurrency c and measures the CPU the
// server process and wrk itself spent meanwhile.
func drive(ctx context.Context, g loadGen, s *server, d time.Duration, c int) (sample, error) {
	pid := s.cmd.Process.Pid
	before, err := procCPU(pid)
	if err != nil {
		return sample{}, err
	}
	var pgBefore, pgAfter time.Duration
	if s.postmaster != 0 {
		if pgBefore, err = clusterCPU("/proc", s.postmaster); err != nil {
			return sample{}, err
		}
	}
	decided, err := notAccepted(s.metrics)
	if err != nil {
		return sample{}, err
	}
	// wrk needs a connection per thread at least.
	threads := min(g.threads, c)
	cmd := exec.CommandContext(ctx, g.bin, "-t", strconv.Itoa(threads), "-c", strconv.Itoa(c),
		"-d", strconv.Itoa(int(d/time.Second))+"s", "--timeout", "20s", "--latency", "-s", s.script, s.url)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	t0 := time.Now()
	err = cmd.Run()
	wall := time.Since(t0)
	if err != nil {
		return sample{}, fmt.Errorf("wrk: %w: %s", err, strings.TrimSpace(stderr.String()+"\n"+stdout.String()))
	}
	after, err := procCPU(pid)
	if err != nil {
		return sample{}, err
	}
	if s.postmaster != 0 {
		if pgAfter, err = clusterCPU("/proc", s.postmaster); err != nil {
			return sample{}, err
		}
	}
	decidedAfter, err := notAccepted(s.metrics)
	if err != nil {
		return sample{}, err
	}
	r, err := parseWrk(stdout.String())
	if err != nil {
		return sample{}, err
	}
	// Everything must have been answered below 400 (the start checked the
	// answer is 200 with the expected decision): a server that refuses or
	// drops requests would look fast for the wrong reason.
	if r.requests == 0 || r.errors() > 0 {
		return sample{}, fmt.Errorf("%s: %d requests answered, %d with status 400 or more; socket errors: connect %d, read %d, write %d, timeout %d",
			s.url, r.requests, r.status, r.connect, r.read, r.write, r.timeout)
	}
	loadCPU := cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	return sample{
		rps:         float64(r.requests) / r.duration.Seconds(),
		p50:         r.p50,
		p99:         r.p99,
		cpuPerOp:    (after - before) / time.Duration(r.requests),
		requests:    r.requests,
		serverCores: float64(after-before) / float64(wall),
		loadCores:   float64(loadCPU) / float64(wall),
		pgCores:     float64(pgAfter-pgBefore) / float64(wall),
		pgCPUPerOp:  (pgAfter - pgBefore) / time.Duration(r.requests),
		notAccepted: decidedAfter - decided,
	}, nil
}

// wrkFields are the counters wrkScript's line carries, each key=value.
var wrkFields = []string{"requests", "duration_us", "p50_us", "p99_us", "connect", "read", "write", "status", "timeout"}

// parseWrk reads the line wrkScript's done printed from wrk's output.
func parseWrk(out string) (wrkResult, error) {
	for line := range strings.Lines(out) {
		rest, ok := strings.CutPrefix(strings.TrimSpace(line), wrkLinePrefix)
		if !ok {
			continue
		}
		line = strings.TrimSpace(line)
		v := map[string]int64{}
		for _, kv := range strings.Fields(rest) {
			k, num, _ := strings.Cut(kv, "=")
			n, err := strconv.ParseInt(num, 10, 64)
			if err != nil || n < 0 {
				return wrkResult{}, fmt.Errorf("wrk's counters: %q in %q is not a count", kv, line)
			}
			v[k] = n
		}
		for _, k := range wrkFields {
			if _, ok := v[k]; !ok {
				return wrkResult{}, fmt.Errorf("wrk's counters: %q has no %s", line, k)
			}
		}
		if v["duration_us"] == 0 {
			return wrkResult{}, fmt.Errorf("wrk's counters: %q: a run of no time", line)
		}
		us := func(k string) time.Duration { return time.Duration(v[k]) * time.Microsecond }
		return wrkResult{
			requests: int(v["requests"]), duration: us("duration_us"), p50: us("p50_us"), p99: us("p99_us"),
			connect: int(v["connect"]), read: int(v["read"]), write: int(v["write"]), status: int(v["status"]), timeout: int(v["timeout"]),
		}, nil
	}
	return wrkResult{}, fmt.Errorf("wrk printed no %q line (was it run with the harness's script?):\n%s", wrkLinePrefix, out)
}

// clockTick is the unit of utime and stime in /proc/<pid>/stat: USER_HZ,
// 100 on every Linux architecture Go runs on.
const clockTick = 10 * time.Millisecond

// procCPU is the user+system CPU time process pid has used so far, all
// threads together (fields 14 and 15 of /proc/<pid>/stat).
func procCPU(pid int) (time.Duration, error) {
	st, err := readStat("/proc", pid)
	if err != nil {
		return 0, fmt.Errorf("the server's CPU time: %w (the harness needs Linux's /proc)", err)
	}
	return st.cpu, nil
}

// peakRSS is process pid's peak resident memory (VmHWM in
// /proc/<pid>/status), in bytes; 0 when it cannot be read.
func peakRSS(pid int) int64 {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for line := range strings.Lines(string(raw)) {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			f := strings.Fields(rest) // "123456 kB"
			if n, err := strconv.ParseInt(f[0], 10, 64); err == nil && len(f) == 2 && f[1] == "kB" {
				return n << 10
			}
		}
	}
	return 0
}

// notAccepted reads gated's /metrics at url and sums gated_decisions_total
// over every route but accept; an empty url (not gated) reads as 0.
func notAccepted(url string) (int, error) {
	if url == "" {
		return 0, nil
	}
	resp, err := http.Get(url)
	if err != nil {
		return 0, fmt.Errorf("read the decision counts: %w", err)
	}
	defer func() { _ = resp.Body.Close() }()
	raw, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("read the decision counts from %s: status %d, %v", url, resp.StatusCode, err)
	}
	return sumNotAccepted(string(raw))
}

// sumNotAccepted sums the gated_decisions_total samples of a Prometheus
// text exposition whose route label is not accept.
func sumNotAccepted(text string) (int, error) {
	n := 0
	for line := range strings.Lines(text) {
		rest, ok := strings.CutPrefix(line, "gated_decisions_total{")
		if !ok || strings.Contains(rest, `route="accept"`) {
			continue
		}
		f := strings.Fields(rest)
		v, err := strconv.ParseFloat(f[len(f)-1], 64)
		if err != nil {
			return 0, fmt.Errorf("unreadable decision count %q: %w", strings.TrimSpace(line), err)
		}
		n += int(v)
	}
	return n, nil
}

// wrkVersion is wrk's name and version as `wrk -v` prints them first ("wrk
// debian/4.1.0-3+b2"), for the report, or "" when it prints something else.
// wrk -v exits with status 1, so the status says nothing.
func wrkVersion(ctx context.Context, bin string) string {
	out, _ := exec.CommandContext(ctx, bin, "-v").CombinedOutput()
	f := strings.Fields(string(out))
	if len(f) < 2 || f[0] != "wrk" {
		return ""
	}
	return f[0] + " " + f[1]
}
