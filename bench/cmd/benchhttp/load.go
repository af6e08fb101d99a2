package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

// sample is one round against one server.
type sample struct {
	rps      float64       // answered requests per second, as hey counts them
	p50, p99 time.Duration // latency percentiles from hey's distribution
	cpuPerOp time.Duration // the server process's user+system CPU per request
	requests int
	// notAccepted counts the decisions gated's metrics show with a route
	// other than accept during the round (0 for servers without them): an
	// overloaded gated that refused would otherwise look fast.
	notAccepted int
}

// heyResult is what the harness reads from hey's text report.
type heyResult struct {
	rps       float64
	p50, p99  time.Duration
	responses map[int]int // status code → count
	errors    int         // requests that got no response at all
}

// drive runs hey against url for d at concurrency c, posting the file body,
// and measures the CPU the server process pid spent meanwhile.
func drive(ctx context.Context, hey string, pid int, url, metrics, body string, d time.Duration, c int) (sample, error) {
	before, err := procCPU(pid)
	if err != nil {
		return sample{}, err
	}
	decided, err := notAccepted(metrics)
	if err != nil {
		return sample{}, err
	}
	cmd := exec.CommandContext(ctx, hey, "-z", d.String(), "-c", strconv.Itoa(c),
		"-m", "POST", "-T", "application/json", "-D", body, url)
	out, err := cmd.Output()
	if err != nil {
		return sample{}, fmt.Errorf("hey: %w", exitDetail(err))
	}
	after, err := procCPU(pid)
	if err != nil {
		return sample{}, err
	}
	decidedAfter, err := notAccepted(metrics)
	if err != nil {
		return sample{}, err
	}
	r, err := parseHey(string(out))
	if err != nil {
		return sample{}, err
	}
	ok := r.responses[200]
	total := r.errors
	for _, n := range r.responses {
		total += n
	}
	// Everything must have been answered 200: a server that refuses or
	// drops requests would look fast for the wrong reason.
	if ok == 0 || ok != total {
		return sample{}, fmt.Errorf("%s: %d of %d requests answered 200 (statuses %v, %d errors)", url, ok, total, r.responses, r.errors)
	}
	return sample{rps: r.rps, p50: r.p50, p99: r.p99, cpuPerOp: (after - before) / time.Duration(ok), requests: ok, notAccepted: decidedAfter - decided}, nil
}

// parseHey reads hey's default text report (hey v0.1.4).
func parseHey(out string) (heyResult, error) {
	r := heyResult{responses: map[int]int{}}
	section := ""
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		switch {
		case line == "":
			continue
		case strings.HasSuffix(line, ":") && !strings.Contains(line, "\t"):
			section = strings.TrimSuffix(line, ":")
			continue
		}
		switch {
		case strings.HasPrefix(line, "Requests/sec:"):
			v, err := strconv.ParseFloat(strings.TrimSpace(strings.TrimPrefix(line, "Requests/sec:")), 64)
			if err != nil {
				return r, fmt.Errorf("hey report: %q: %w", line, err)
			}
			r.rps = v
		case section == "Latency distribution":
			// "50% in 0.0021 secs"
			var pct int
			var secs float64
			if _, err := fmt.Sscanf(line, "%d%% in %g secs", &pct, &secs); err != nil {
				return r, fmt.Errorf("hey report: %q: %w", line, err)
			}
			d := time.Duration(secs * float64(time.Second))
			switch pct {
			case 50:
				r.p50 = d
			case 99:
				r.p99 = d
			}
		case section == "Status code distribution":
			// "[200]	117633 responses"
			var code, n int
			if _, err := fmt.Sscanf(line, "[%d] %d responses", &code, &n); err != nil {
				return r, fmt.Errorf("hey report: %q: %w", line, err)
			}
			r.responses[code] += n
		case section == "Error distribution":
			// "[12]	Post http://…: dial tcp …"
			var n int
			if _, err := fmt.Sscanf(line, "[%d]", &n); err == nil {
				r.errors += n
			}
		}
	}
	if r.rps == 0 || r.p50 == 0 || r.p99 == 0 {
		return r, fmt.Errorf("hey report without requests/sec or latency percentiles:\n%s", out)
	}
	return r, nil
}

// clockTick is the unit of utime and stime in /proc/<pid>/stat: USER_HZ,
// 100 on every Linux architecture Go runs on.
const clockTick = 10 * time.Millisecond

// procCPU is the user+system CPU time process pid has used so far, all
// threads together (fields 14 and 15 of /proc/<pid>/stat).
func procCPU(pid int) (time.Duration, error) {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, fmt.Errorf("the server's CPU time: %w (the harness needs Linux's /proc)", err)
	}
	return parseStatCPU(string(raw))
}

// parseStatCPU reads utime and stime from a /proc/<pid>/stat line. The
// command name (field 2) may hold spaces, so fields are counted from its
// closing parenthesis.
func parseStatCPU(stat string) (time.Duration, error) {
	i := strings.LastIndexByte(stat, ')')
	if i < 0 {
		return 0, fmt.Errorf("unexpected /proc stat line %q", stat)
	}
	f := strings.Fields(stat[i+1:])
	// f[0] is field 3 (state); utime and stime are fields 14 and 15.
	if len(f) < 13 {
		return 0, fmt.Errorf("unexpected /proc stat line %q", stat)
	}
	u, err1 := strconv.ParseInt(f[11], 10, 64)
	s, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("unexpected /proc stat line %q", stat)
	}
	return time.Duration(u+s) * clockTick, nil
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
