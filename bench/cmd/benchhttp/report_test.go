package main

import (
	"strings"
	"testing"
	"time"
)

const heyReport = `
Summary:
  Total:	2.0031 secs
  Slowest:	0.0410 secs
  Fastest:	0.0002 secs
  Average:	0.0027 secs
  Requests/sec:	11762.3344

  Total data:	123 bytes
  Size/request:	1 bytes

Response time histogram:
  0.000 [1]	|
  0.004 [20000]	|■■■■■■■■■■■■■■■■■■■■■■■■■■■■■■■■■■■■■■■■

Latency distribution:
  10% in 0.0008 secs
  50% in 0.0021 secs
  99% in 0.0110 secs

Details (average, fastest, slowest):
  DNS+dialup:	0.0000 secs, 0.0002 secs, 0.0410 secs
  resp wait:	0.0026 secs, 0.0002 secs, 0.0400 secs

Status code distribution:
  [200]	23500 responses
  [503]	2 responses

Error distribution:
  [3]	Post "http://127.0.0.1:1/pre-tool-check": dial tcp: connection refused
`

func TestParseHey(t *testing.T) {
	r, err := parseHey(heyReport)
	if err != nil {
		t.Fatal(err)
	}
	if r.rps != 11762.3344 || r.p50 != 2100*time.Microsecond || r.p99 != 11*time.Millisecond {
		t.Errorf("rps %v p50 %v p99 %v", r.rps, r.p50, r.p99)
	}
	if r.responses[200] != 23500 || r.responses[503] != 2 || r.errors != 3 {
		t.Errorf("responses %v errors %d", r.responses, r.errors)
	}
	if _, err := parseHey("Summary:\n  Total:\t0 secs\n"); err == nil {
		t.Error("a report without figures parsed")
	}
}

func TestParseStatCPU(t *testing.T) {
	// The command name holds a space and a parenthesis; utime 250, stime 50.
	stat := "4242 (ga ted) S 1 4242 4242 0 -1 4194560 900 0 0 0 250 50 0 0 20 0 9 0 100 0 0"
	got, err := parseStatCPU(stat)
	if err != nil || got != 3*time.Second {
		t.Errorf("got %v, %v; want 3s", got, err)
	}
}

func TestMedians(t *testing.T) {
	ms := func(n int) time.Duration { return time.Duration(n) * time.Millisecond }
	got := medians([]sample{
		{rps: 100, p50: ms(3), p99: ms(9), cpuPerOp: 10, requests: 1},
		{rps: 300, p50: ms(1), p99: ms(7), cpuPerOp: 30, requests: 3},
		{rps: 200, p50: ms(2), p99: ms(8), cpuPerOp: 20, requests: 2},
	})
	want := sample{rps: 200, p50: ms(2), p99: ms(8), cpuPerOp: 20, requests: 2}
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
		{name: "baseline", desc: "b", c: 32, peakRSS: 20 << 20, med: sample{rps: 10000, p50: 2 * time.Millisecond, p99: 10 * time.Millisecond, cpuPerOp: 100 * time.Microsecond}},
		{name: "defaults", desc: "d", c: 32, gated: true, med: sample{rps: 7000, p50: 3 * time.Millisecond, p99: 20 * time.Millisecond, cpuPerOp: 150 * time.Microsecond}},
		{name: "baseline", desc: "b", c: 128, peakRSS: 20 << 20, med: sample{rps: 8000, p50: 8 * time.Millisecond, p99: 40 * time.Millisecond, cpuPerOp: 100 * time.Microsecond}},
		{name: "full-async", desc: "f", c: 128, peakRSS: 70 << 20, gated: true, med: sample{notAccepted: 3, rps: 4000, p50: 16 * time.Millisecond, p99: 60 * time.Millisecond, cpuPerOp: 200 * time.Microsecond}},
	})
	out := b.String()
	for _, want := range []string{
		"| baseline | 1.00× | 1.00× | 1.00× | 1.00× | 10,000 | 2.00 ms | 10.00 ms | 100.0 | 20 MiB | – |",
		"| defaults | 0.70× | 1.50× | 2.00× | 1.50× | 7,000 | 3.00 ms | 20.00 ms | 150.0 | – | 0 |",
		"At 128 connections (overload), ratios to the baseline at 128:",
		"| full-async | 0.50× | 2.00× | 1.50× | 2.00× | 4,000 | 16.00 ms | 60.00 ms | 200.0 | 70 MiB | 3 |",
		"- **defaults**: d",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
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
		"| · policy (OPA), with its evaluation goroutine | 0.0 % |",
		"| `runtime.memmove` | 66.7 % |",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("profile lacks %q:\n%s", want, out)
		}
	}
}
