package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The testdata files are wrk 4.1.0 (Debian) runs with the harness's
// script: against the baseline (ok), against a path it answers 404
// (status errors), and against a baseline killed a second into the run
// (socket errors).
func readWrk(t *testing.T, name string) wrkResult {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	r, err := parseWrk(string(raw))
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestParseWrk(t *testing.T) {
	ok := readWrk(t, "wrk-ok.txt")
	want := wrkResult{requests: 42142, duration: 2003898 * time.Microsecond, p50: 1344 * time.Microsecond, p99: 17358 * time.Microsecond}
	if ok != want || ok.errors() != 0 {
		t.Errorf("got %+v, want %+v", ok, want)
	}
	if st := readWrk(t, "wrk-status-errors.txt"); st.status != 76560 || st.errors() != 76560 {
		t.Errorf("status errors: got %+v, want 76560 answers of 400 or more", st)
	}
	if so := readWrk(t, "wrk-socket-errors.txt"); so.read != 8 || so.write != 70913 || so.errors() != 70921 || so.requests != 26517 {
		t.Errorf("socket errors: got %+v, want read 8 and write 70913 beside 26517 answers", so)
	}
	for name, out := range map[string]string{
		"no line":       "Running 1s test @ http://127.0.0.1:1/\nRequests/sec:  28595.55\n",
		"a field short": "benchhttp: requests=5 duration_us=10 p50_us=1 p99_us=2 connect=0 read=0 write=0 status=0\n",
		"not a count":   "benchhttp: requests=5 duration_us=10 p50_us=1.5 p99_us=2 connect=0 read=0 write=0 status=0 timeout=0\n",
		"no time":       "benchhttp: requests=5 duration_us=0 p50_us=1 p99_us=2 connect=0 read=0 write=0 status=0 timeout=0\n",
	} {
		if r, err := parseWrk(out); err == nil {
			t.Errorf("%s: parsed as %+v", name, r)
		}
	}
}

func TestWrkScript(t *testing.T) {
	dir := t.TempDir()
	// A path that would close a level-0 Lua long string.
	body := filepath.Join(dir, "a]]b.json")
	if err := os.WriteFile(body, []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	path, err := writeWrkScript(dir, "x", body)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := os.ReadFile(path)
	script := string(raw)
	for _, want := range []string{`io.open([=[` + body + `]=], "rb")`, `wrk.method = "POST"`, `wrk.headers["Content-Type"] = "application/json"`, wrkLinePrefix + " requests=%d "} {
		if !strings.Contains(script, want) {
			t.Errorf("script lacks %q:\n%s", want, script)
		}
	}
	// Every counter the parser needs is printed.
	for _, f := range wrkFields {
		if !strings.Contains(script, " "+f+"=%d") {
			t.Errorf("script does not print %s:\n%s", f, script)
		}
	}
}

func TestGeneratorBound(t *testing.T) {
	base := func(c int, server, load float64) result {
		return result{name: "baseline", c: c, med: sample{serverCores: server, loadCores: load}}
	}
	for _, tc := range []struct {
		name  string
		rs    []result
		ncpu  int
		bound bool
	}{
		{"server busy, wrk light", []result{base(32, 1.6, 0.4)}, 2, false},
		{"server short of cores, wrk light (someone else's load)", []result{base(32, 1.2, 0.5)}, 2, false},
		{"server busy, wrk heavy", []result{base(32, 1.5, 0.9)}, 2, false},
		{"server short of cores, wrk heavy", []result{base(32, 1.2, 0.9)}, 2, true},
		{"only at overload", []result{base(32, 1.6, 0.4), base(128, 1.1, 0.8)}, 2, true},
		{"other rows do not count", []result{base(32, 1.6, 0.4), {name: "defaults", c: 32, med: sample{serverCores: 0.5, loadCores: 1}}}, 2, false},
		{"on 4 cores, server under 3, wrk over 4/3", []result{base(32, 2.5, 1.5)}, 4, true},
		{"on 4 cores, what binds 2 does not", []result{base(32, 1.2, 0.9)}, 4, false},
	} {
		why := generatorBound(tc.rs, tc.ncpu)
		if (why != "") != tc.bound {
			t.Errorf("%s: got %q, want bound %v", tc.name, why, tc.bound)
		}
	}
	if why := generatorBound([]result{base(128, 1.1, 0.8)}, 2); !strings.Contains(why, "at 128 connections the baseline server used 1.10 of the 2 cores (under 1.50) while wrk used 0.80 (more than 0.67)") {
		t.Errorf("the refusal does not say what was measured: %q", why)
	}
}

func TestParseStat(t *testing.T) {
	// The command name holds a space and a parenthesis; ppid 1, utime 250,
	// stime 50, cutime 7, cstime 3.
	stat := "4242 (ga ted) S 1 4242 4242 0 -1 4194560 900 0 0 0 250 50 7 3 20 0 9 0 100 0 0"
	got, err := parseStat(stat)
	want := procStat{comm: "ga ted", ppid: 1, cpu: 3 * time.Second, childrenCPU: 100 * time.Millisecond}
	if err != nil || got != want {
		t.Errorf("got %+v, %v; want %+v", got, err, want)
	}
	for _, bad := range []string{"", "4242 (gated S 1", "4242 (gated) S 1 2 3", "4242 (gated) S 1 4242 4242 0 -1 4194560 900 0 0 0 x 50 7 3 20"} {
		if st, err := parseStat(bad); err == nil {
			t.Errorf("%q parsed as %+v", bad, st)
		}
	}
}

// testdata/proc is a fake /proc: cluster 100 (postmaster 100 with a
// checkpointer 101, a backend 102 whose comm is not postgres but whose
// title is, and a shell 103 it spawned), another cluster 200 with a child
// 201, and gated 300.
func TestPostmasterOf(t *testing.T) {
	for backend, want := range map[int]int{102: 100, 101: 100, 201: 200} {
		if got, err := postmasterOf("testdata/proc", backend); err != nil || got != want {
			t.Errorf("backend %d: got %d, %v; want %d", backend, got, err, want)
		}
	}
	for _, backend := range []int{
		300, // gated, not PostgreSQL
		103, // the shell, not PostgreSQL
		200, // a postmaster: its parent (1) is not one
		999, // no such process (the database elsewhere)
	} {
		if got, err := postmasterOf("testdata/proc", backend); err == nil {
			t.Errorf("backend %d: got postmaster %d, want an error", backend, got)
		}
	}
}

func TestClusterCPU(t *testing.T) {
	// Postmaster 100: 10+5 own, 300+200 reaped children; checkpointer
	// 20+30; backend 102 1000+400. Not the shell, cluster 200 or gated.
	got, err := clusterCPU("testdata/proc", 100)
	if want := 1965 * clockTick; err != nil || got != want {
		t.Errorf("got %v, %v; want %v", got, err, want)
	}
	if _, err := clusterCPU("testdata/proc", 999); err == nil {
		t.Error("a postmaster that is not there was read")
	}
}

// Over a window a backend that ends is counted through the postmaster's
// cutime and one that starts through its own stat: the difference of the
// two readings holds both, with no pid followed between them.
func TestClusterCPUWindow(t *testing.T) {
	root := t.TempDir()
	write := func(pid int, stat string) {
		t.Helper()
		dir := filepath.Join(root, strconv.Itoa(pid))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "stat"), []byte(stat), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// Before: backend 11 has used 100 ticks, none reaped yet.
	write(10, "10 (postgres) S 1 10 10 0 -1 0 0 0 0 0 5 5 0 0 20 0 1 0 1 0 0")
	write(11, "11 (postgres) S 10 10 10 0 -1 0 0 0 0 0 60 40 0 0 20 0 1 0 2 0 0")
	before, err := clusterCPU(root, 10)
	if err != nil {
		t.Fatal(err)
	}
	// After: 11 used 50 more, ended and was reaped; 12 started and used 30.
	write(10, "10 (postgres) S 1 10 10 0 -1 0 0 0 0 0 5 5 100 50 20 0 1 0 1 0 0")
	if err := os.RemoveAll(filepath.Join(root, "11")); err != nil {
		t.Fatal(err)
	}
	write(12, "12 (postgres) S 10 10 10 0 -1 0 0 0 0 0 20 10 0 0 20 0 1 0 3 0 0")
	after, err := clusterCPU(root, 10)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := after-before, 80*clockTick; got != want {
		t.Errorf("the window's CPU is %v, want %v", got, want)
	}
}

func TestMedians(t *testing.T) {
	ms := func(n int) time.Duration { return time.Duration(n) * time.Millisecond }
	got := medians([]sample{
		{rps: 100, p50: ms(3), p99: ms(9), cpuPerOp: 10, requests: 1, serverCores: 1.7, loadCores: 0.2, pgCores: 0.5, pgCPUPerOp: 6},
		{rps: 300, p50: ms(1), p99: ms(7), cpuPerOp: 30, requests: 3, serverCores: 1.5, loadCores: 0.4, pgCores: 0.3, pgCPUPerOp: 4},
		{rps: 200, p50: ms(2), p99: ms(8), cpuPerOp: 20, requests: 2, serverCores: 1.6, loadCores: 0.3, pgCores: 0.4, pgCPUPerOp: 5},
	})
	want := sample{rps: 200, p50: ms(2), p99: ms(8), cpuPerOp: 20, requests: 2, serverCores: 1.6, loadCores: 0.3, pgCores: 0.4, pgCPUPerOp: 5}
	if got != want {
		t.Errorf("got %+v, want %+v", got, want)
	}
	if m := median([]float64{4, 1, 3, 2}); m != 2.5 {
		t.Errorf("even median %v, want 2.5", m)
	}
}

func TestWriteTableRatios(t *testing.T) {
	var b strings.Builder
	writeTable(&b, []result{
		{name: "baseline", desc: "b", c: 32, peakRSS: 20 << 20, med: sample{rps: 10000, p50: 2 * time.Millisecond, p99: 10 * time.Millisecond, cpuPerOp: 100 * time.Microsecond, serverCores: 1.62, loadCores: 0.31}},
		{name: "defaults", desc: "d", c: 32, gated: true, med: sample{rps: 7000, p50: 3 * time.Millisecond, p99: 20 * time.Millisecond, cpuPerOp: 150 * time.Microsecond}},
		{name: "full-async", desc: "f", c: 32, peakRSS: 70 << 20, gated: true, pg: true, med: sample{rps: 5000, p50: 6 * time.Millisecond, p99: 30 * time.Millisecond, cpuPerOp: 250 * time.Microsecond, pgCPUPerOp: 80 * time.Microsecond, serverCores: 1.26, pgCores: 0.41, loadCores: 0.31}},
		{name: "full-async-db-away", desc: "w", c: 32, gated: true, med: sample{rps: 6000, p50: 5 * time.Millisecond, p99: 25 * time.Millisecond, cpuPerOp: 200 * time.Microsecond}},
		{name: "baseline", desc: "b", c: 128, peakRSS: 20 << 20, med: sample{rps: 8000, p50: 8 * time.Millisecond, p99: 40 * time.Millisecond, cpuPerOp: 100 * time.Microsecond}},
		{name: "full-async", desc: "f", c: 128, peakRSS: 70 << 20, gated: true, pg: true, med: sample{notAccepted: 3, rps: 4000, p50: 16 * time.Millisecond, p99: 60 * time.Millisecond, cpuPerOp: 200 * time.Microsecond, pgCPUPerOp: 90 * time.Microsecond, serverCores: 1.2, pgCores: 0.5, loadCores: 0.25}},
	})
	out := b.String()
	for _, want := range []string{
		"| server | req/s | CPU/req | p50 | p99 | req/s (abs) | CPU µs/req (abs) | PostgreSQL CPU µs/req | p50 (abs) | p99 (abs) | cores: server | cores: wrk | cores: PostgreSQL | peak RSS (abs) | not accepted |",
		"| baseline | 1.00× | 1.00× | 1.00× | 1.00× | 10,000 | 100.0 | – | 2.00 ms | 10.00 ms | 1.62 | 0.31 | – | 20 MiB | – |",
		"| defaults | 0.70× | 1.50× | 1.50× | 2.00× | 7,000 | 150.0 | – | 3.00 ms | 20.00 ms | 0.00 | 0.00 | – | – | 0 |",
		"| full-async | 0.50× | 2.50× | 3.00× | 3.00× | 5,000 | 250.0 | 80.0 | 6.00 ms | 30.00 ms | 1.26 | 0.31 | 0.41 | 70 MiB | 0 |",
		"| full-async-db-away | 0.60× | 2.00× | 2.50× | 2.50× | 6,000 | 200.0 | – | 5.00 ms | 25.00 ms | 0.00 | 0.00 | – | – | 0 |",
		"full-async at 32 connections: gated 1.26 + PostgreSQL 0.41 + wrk 0.31 = 1.98 cores.",
		"At 128 connections (overload), ratios to the baseline at 128:",
		"| full-async | 0.50× | 2.00× | 2.00× | 1.50× | 4,000 | 200.0 | 90.0 | 16.00 ms | 60.00 ms | 1.20 | 0.25 | 0.50 | 70 MiB | 3 |",
		"full-async at 128 connections: gated 1.20 + PostgreSQL 0.50 + wrk 0.25 = 1.95 cores.",
		"- **defaults**: d",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	if n := strings.Count(out, "full-async at "); n != 2 {
		t.Errorf("%d lines of where the cores went, want one per table:\n%s", n, out)
	}
	if n := strings.Count(out, "- **baseline**"); n != 1 {
		t.Errorf("the baseline is described %d times, want once:\n%s", n, out)
	}
}

func TestParseBench(t *testing.T) {
	out := "goos: linux\nBenchmarkDecide/send_email_ask-2   \t  100000\t     10234 ns/op\t   10442 B/op\t     138 allocs/op\nPASS\n"
	ls := parseBench(out)
	if len(ls) != 1 || ls[0].name != "BenchmarkDecide/send_email_ask" || ls[0].allocsOp != 138 || ls[0].bytesOp != 10442 || ls[0].nsOp != 10234 {
		t.Errorf("got %+v", ls)
	}
}

func TestReplaceSection(t *testing.T) {
	doc := "# P\n\n" + httpSection.begin + "\nold\n" + httpSection.end + "\n\nrest\n"
	got, err := httpSection.replace(doc, "new\n")
	if err != nil {
		t.Fatal(err)
	}
	if want := "# P\n\n" + httpSection.begin + "\nnew\n" + httpSection.end + "\n\nrest\n"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if _, err := hookSection.replace(httpSection.begin+httpSection.end, "x"); err == nil {
		t.Error("a document without markers was accepted")
	}
}

func TestPolicyAndEvent(t *testing.T) {
	dir := t.TempDir()
	if err := writePolicy(dir, 3); err != nil {
		t.Fatal(err)
	}
	if len(event) < 1400 || len(event) > 1700 {
		t.Errorf("the event is %d bytes; the harness promises about 1.5 KB", len(event))
	}
}

func TestSumNotAccepted(t *testing.T) {
	text := `# HELP gated_decisions_total Decisions by route.
# TYPE gated_decisions_total counter
gated_decisions_total{execute="true",route="accept",shadow="false",tool_category="write"} 900
gated_decisions_total{execute="false",route="refuse",shadow="false",tool_category="write"} 7
gated_decisions_total{execute="false",route="ask",shadow="false",tool_category="write"} 2
gated_tool_decisions_total{route="refuse",tool_name="x"} 50
`
	if n, err := sumNotAccepted(text); err != nil || n != 9 {
		t.Errorf("got %d, %v; want 9 (refuse 7 + ask 2, neither accept nor another metric)", n, err)
	}
	if _, err := sumNotAccepted(`gated_decisions_total{route="refuse"} many` + "\n"); err == nil {
		t.Error("an unreadable count was taken for a number")
	}
}

func TestProfileStages(t *testing.T) {
	// Three samples in perf script's ip,sym form, leaf first.
	script := `    4a1 runtime.memmove
    4b2 github.com/gatedhq/gated/internal/contract.validate
    4c3 github.com/gatedhq/gated/internal/contract.Prepare
    4d4 github.com/gatedhq/gated/internal/gate.(*Engine).Decide

    5a1 runtime.scanobject
    5b2 runtime.gcBgMarkWorker

    6a1 runtime.memmove
    6b2 github.com/gatedhq/gated/internal/server.writeJSON
`
	stacks, err := readStacks(strings.NewReader(script))
	if err != nil || len(stacks) != 3 || stacks[0][1] != "github.com/gatedhq/gated/internal/contract.validate" {
		t.Fatalf("stacks %q, %v", stacks, err)
	}
	var b strings.Builder
	writeProfile(&b, stacks)
	out := b.String()
	for _, want := range []string{
		"| decision (the rows below but the policy goroutine) | 33.3 % |",
		"| · · of which JSON Schema validation | 33.3 % |",
		"| garbage collector (background marking) | 33.3 % |",
		"| HTTP: encode and write the answer | 33.3 % |",
		"| · policy (native grants or OPA), with OPA's evaluation goroutine | 0.0 % |",
		"| `runtime.memmove` | 66.7 % |",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("profile lacks %q:\n%s", want, out)
		}
	}
}

func TestCheckLoad(t *testing.T) {
	ok := config{duration: 10 * time.Second, warmup: 0, wrkThreads: 1}
	if err := ok.checkLoad(); err != nil {
		t.Errorf("10 s rounds without warm-up refused: %v", err)
	}
	for name, c := range map[string]config{
		"a fraction of a second": {duration: 1500 * time.Millisecond, wrkThreads: 1},
		"under a second":         {duration: 500 * time.Millisecond, wrkThreads: 1},
		"a fractional warm-up":   {duration: time.Second, warmup: 2500 * time.Millisecond, wrkThreads: 1},
		"no thread":              {duration: time.Second, wrkThreads: 0},
	} {
		if err := c.checkLoad(); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}
