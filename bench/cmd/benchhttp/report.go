package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"
)

// result is one server's medians over the rounds.
type result struct {
	name, desc string
	c          int // connections
	med        sample
	rounds     int
	peakRSS    int64 // the process's peak resident memory over the whole run, bytes (0: unknown)
	gated      bool  // counts its decisions (notAccepted means something)
	pg         bool  // writes to the local PostgreSQL, whose CPU was measured
}

// median of xs (the mean of the two middle values for an even count).
func median[T int | float64 | time.Duration](xs []T) T {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// medians takes each figure's median over the rounds on its own: the
// rounds alternate servers, so a disturbance hits one round of each rather
// than every round of one.
func medians(samples []sample) sample {
	pick := func(f func(sample) time.Duration) time.Duration {
		v := make([]time.Duration, len(samples))
		for i, s := range samples {
			v[i] = f(s)
		}
		return median(v)
	}
	rps := make([]float64, len(samples))
	reqs := make([]int, len(samples))
	serverCores := make([]float64, len(samples))
	loadCores := make([]float64, len(samples))
	pgCores := make([]float64, len(samples))
	refused := 0
	for i, s := range samples {
		rps[i], reqs[i] = s.rps, s.requests
		serverCores[i], loadCores[i], pgCores[i] = s.serverCores, s.loadCores, s.pgCores
		refused += s.notAccepted
	}
	return sample{
		rps:         median(rps),
		p50:         pick(func(s sample) time.Duration { return s.p50 }),
		p99:         pick(func(s sample) time.Duration { return s.p99 }),
		cpuPerOp:    pick(func(s sample) time.Duration { return s.cpuPerOp }),
		requests:    median(reqs),
		serverCores: median(serverCores),
		loadCores:   median(loadCores),
		pgCores:     median(pgCores),
		pgCPUPerOp:  pick(func(s sample) time.Duration { return s.pgCPUPerOp }),
		// Summed, not a median: one refusal in any round counts.
		notAccepted: refused,
	}
}

// minServerCores and maxLoadCores are the refusal rule's thresholds on a
// machine of ncpu cores: a baseline whose server used under three quarters
// of them (1.5 of 2) while the load generator used more than a third was
// held back by the generator, and ratios to it would flatter every other
// row. Both scale with the cores so the rule means the same on a larger
// machine.
func minServerCores(ncpu int) float64 { return 0.75 * float64(ncpu) }
func maxLoadCores(ncpu int) float64   { return float64(ncpu) / 3 }

// generatorBound says, as a sentence, why the run's baseline (at any
// concurrency) was bound by the load generator rather than by the server,
// or "" when it was not. It judges the medians over the rounds, the figures
// the table reports.
func generatorBound(rs []result, ncpu int) string {
	var why []string
	for _, r := range rs {
		if r.name != "baseline" {
			continue
		}
		if r.med.serverCores < minServerCores(ncpu) && r.med.loadCores > maxLoadCores(ncpu) {
			why = append(why, fmt.Sprintf("at %d connections the baseline server used %.2f of the %d cores (under %.2f) while wrk used %.2f (more than %.2f)",
				r.c, r.med.serverCores, ncpu, minServerCores(ncpu), r.med.loadCores, maxLoadCores(ncpu)))
		}
	}
	if len(why) == 0 {
		return ""
	}
	return strings.Join(why, "; ") + ": the load generator, not the server, set the baseline's req/s, so every ratio to it would be flattered (fewer -wrk-threads, or a machine with less else running)"
}

// ratio is x/base, or 0 when the base is 0.
func ratio(x, base float64) float64 {
	if base == 0 {
		return 0
	}
	return x / base
}

// writeTable prints one markdown table per concurrency, in the order the
// results come: ratios to that table's first result (the baseline at the
// same concurrency) first, since only they carry from one machine to
// another, then the absolute figures they come from.
func writeTable(w io.Writer, rs []result) {
	var cs []int
	for _, r := range rs {
		if !slices.Contains(cs, r.c) {
			cs = append(cs, r.c)
		}
	}
	for i, c := range cs {
		if i > 0 {
			fmt.Fprintf(w, "\nAt %d connections (overload), ratios to the baseline at %d:\n\n", c, c)
		}
		var b *sample
		fmt.Fprintln(w, "| server | req/s | CPU/req | p50 | p99 | req/s (abs) | CPU µs/req (abs) | PostgreSQL CPU µs/req | p50 (abs) | p99 (abs) | cores: server | cores: wrk | cores: PostgreSQL | peak RSS (abs) | not accepted |")
		fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
		for _, r := range rs {
			if r.c != c {
				continue
			}
			m := r.med
			if b == nil {
				b = &m
			}
			na := "–"
			if r.gated {
				na = strconv.Itoa(m.notAccepted)
			}
			pgPerOp, pgCores := "–", "–"
			if r.pg {
				pgPerOp = strconv.FormatFloat(float64(m.pgCPUPerOp)/float64(time.Microsecond), 'f', 1, 64)
				pgCores = strconv.FormatFloat(m.pgCores, 'f', 2, 64)
			}
			fmt.Fprintf(w, "| %s | %.2f× | %.2f× | %.2f× | %.2f× | %s | %.1f | %s | %s | %s | %.2f | %.2f | %s | %s | %s |\n", r.name,
				ratio(m.rps, b.rps), ratio(float64(m.cpuPerOp), float64(b.cpuPerOp)),
				ratio(float64(m.p50), float64(b.p50)), ratio(float64(m.p99), float64(b.p99)),
				thousands(m.rps), float64(m.cpuPerOp)/float64(time.Microsecond), pgPerOp, ms(m.p50), ms(m.p99),
				m.serverCores, m.loadCores, pgCores, mib(r.peakRSS), na)
		}
		// Where the cores went on the full path: the three processes that
		// share them, measured, not inferred from what gated leaves.
		for _, r := range rs {
			if r.c == c && r.name == "full-async" && r.pg {
				m := r.med
				fmt.Fprintf(w, "\nfull-async at %d connections: gated %.2f + PostgreSQL %.2f + wrk %.2f = %.2f cores.\n",
					c, m.serverCores, m.pgCores, m.loadCores, m.serverCores+m.pgCores+m.loadCores)
			}
		}
	}
	fmt.Fprintln(w)
	seen := map[string]bool{}
	for _, r := range rs {
		if !seen[r.name] {
			seen[r.name] = true
			fmt.Fprintf(w, "- **%s**: %s\n", r.name, r.desc)
		}
	}
}

// mib formats bytes as MiB, or "–" when unknown.
func mib(n int64) string {
	if n <= 0 {
		return "–"
	}
	return strconv.FormatInt((n+1<<19)>>20, 10) + " MiB"
}

func ms(d time.Duration) string {
	return strconv.FormatFloat(float64(d)/float64(time.Millisecond), 'f', 2, 64) + " ms"
}

// thousands formats a rate as an integer with thousands separators.
func thousands(v float64) string {
	s := strconv.FormatInt(int64(v+0.5), 10)
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// benchLine is one line of `go test -bench -benchmem` output.
type benchLine struct {
	name          string
	nsOp, bytesOp float64
	allocsOp      int64
}

// parseBench reads the Benchmark lines of go test output; the -N suffix
// (GOMAXPROCS) is dropped from names.
func parseBench(out string) []benchLine {
	var ls []benchLine
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 4 || !strings.HasPrefix(f[0], "Benchmark") {
			continue
		}
		l := benchLine{name: f[0]}
		if i := strings.LastIndexByte(l.name, '-'); i > 0 {
			if _, err := strconv.Atoi(l.name[i+1:]); err == nil {
				l.name = l.name[:i]
			}
		}
		for i := 2; i+1 < len(f); i += 2 {
			v, err := strconv.ParseFloat(f[i], 64)
			if err != nil {
				continue
			}
			switch f[i+1] {
			case "ns/op":
				l.nsOp = v
			case "B/op":
				l.bytesOp = v
			case "allocs/op":
				l.allocsOp = int64(v)
			}
		}
		ls = append(ls, l)
	}
	return ls
}

func writeAllocTable(w io.Writer, ls []benchLine) {
	fmt.Fprintln(w, "| benchmark | allocs/op | B/op | ns/op |")
	fmt.Fprintln(w, "|---|---|---|---|")
	for _, l := range ls {
		fmt.Fprintf(w, "| `%s` | %d | %s | %s |\n", l.name, l.allocsOp, thousands(l.bytesOp), thousands(l.nsOp))
	}
}

// section is a part of docs/performance.md the harness rewrites, between its
// two markers.
type section struct{ begin, end string }

var (
	httpSection = section{"<!-- bench-http:begin (generated by make bench-http; do not edit) -->", "<!-- bench-http:end -->"}
	hookSection = section{"<!-- bench-hooks:begin (generated by make bench-hooks; do not edit) -->", "<!-- bench-hooks:end -->"}
)

// replace swaps what lies between the markers in doc for text.
func (sec section) replace(doc, text string) (string, error) {
	i := strings.Index(doc, sec.begin)
	j := strings.Index(doc, sec.end)
	if i < 0 || j < i {
		return "", fmt.Errorf("the document has no %q … %q markers to put the results between", sec.begin, sec.end)
	}
	return doc[:i+len(sec.begin)] + "\n" + text + doc[j:], nil
}

func (sec section) update(path, text string) error {
	raw, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	out, err := sec.replace(string(raw), text)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return os.WriteFile(path, []byte(out), 0o644)
}
