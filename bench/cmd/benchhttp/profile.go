package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// stage is a part of gated's request path, found in a sampled stack by
// the functions that run it.
type stage struct {
	name  string
	funcs []string // a stack is in the stage when any of its frames starts with one of these
}

// stages are the parts the profile table names, in request order. A sample
// can count in more than one (contract validation is inside the decision).
var stages = []stage{
	{"HTTP: read and decode the event", []string{"github.com/gatedhq/gated/internal/server.decodeEvent", "github.com/gatedhq/gated/internal/adapter/hook."}},
	{"decision (the rows below but the policy goroutine)", []string{"github.com/gatedhq/gated/internal/gate.(*Engine).Decide"}},
	{"· contract: prepare and validate", []string{"github.com/gatedhq/gated/internal/contract.Prepare"}},
	{"· · of which JSON Schema validation", []string{"github.com/gatedhq/gated/internal/contract.validate"}},
	{"· contract: rules and evidence", []string{"github.com/gatedhq/gated/internal/contract.Evaluate"}},
	{"· catalog: join, floors, argument rules", []string{"github.com/gatedhq/gated/internal/gate.(*decision).joinCatalog", "github.com/gatedhq/gated/internal/catalog."}},
	{"· policy (native grants or OPA), with OPA's evaluation goroutine", []string{"github.com/gatedhq/gated/internal/gate.(*decision).evaluatePolicy", "github.com/gatedhq/gated/internal/policy.(*Set).run.func"}},
	{"· audit: build the redacted record", []string{"github.com/gatedhq/gated/internal/gate.(*decision).record"}},
	{"HTTP: encode and write the answer", []string{"github.com/gatedhq/gated/internal/server.writeAnswer", "github.com/gatedhq/gated/internal/server.writeJSON"}},
	{"audit: background writer (sink, spool)", []string{"github.com/gatedhq/gated/internal/audit.(*recorder).writeLoop", "github.com/gatedhq/gated/internal/audit.(*recorder).start", "github.com/jackc/pgx/"}},
	{"garbage collector (background marking)", []string{"runtime.gcBgMarkWorker"}},
	{"stack growth (goroutine stacks copied)", []string{"runtime.newstack"}},
}

// profileRun samples the server process pid with perf while the load
// generator drives it for d, and returns the markdown that explains where
// its CPU went: the share of samples in each stage, and the functions with
// the most samples of their own.
func profileRun(ctx context.Context, perf string, g loadGen, s *server, d time.Duration, c int, work string) (string, error) {
	data := filepath.Join(work, s.name+".perf")
	rec := exec.CommandContext(ctx, perf, "record", "-F", "499", "-g", "-p", strconv.Itoa(s.cmd.Process.Pid), "-o", data, "--", "sleep", strconv.FormatFloat(d.Seconds(), 'f', 1, 64))
	var recErr strings.Builder
	rec.Stderr = &recErr
	if err := rec.Start(); err != nil {
		return "", fmt.Errorf("perf record: %w", err)
	}
	_, derr := drive(ctx, g, s, d, c)
	if err := rec.Wait(); err != nil {
		return "", fmt.Errorf("perf record: %w: %s", err, strings.TrimSpace(recErr.String()))
	}
	if derr != nil {
		return "", derr
	}
	script := exec.CommandContext(ctx, perf, "script", "-i", data, "-F", "ip,sym")
	out, err := script.StdoutPipe()
	if err != nil {
		return "", err
	}
	script.Stderr = io.Discard
	if err := script.Start(); err != nil {
		return "", fmt.Errorf("perf script: %w", err)
	}
	stacks, err := readStacks(out)
	if werr := script.Wait(); err == nil && werr != nil {
		err = fmt.Errorf("perf script: %w", werr)
	}
	if err != nil {
		return "", err
	}
	if len(stacks) == 0 {
		return "", fmt.Errorf("perf recorded no samples of %s (is perf_event_paranoid too high?)", s.name)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Where **%s**'s CPU went at %d connections: `perf record -F 499 -g` of the server process for %s (%d samples). A stage's share is the samples with one of its functions on the stack.\n\n", s.name, c, d, len(stacks))
	writeProfile(&b, stacks)
	return b.String(), nil
}

// readStacks parses `perf script -F ip,sym`: one frame per line (address,
// symbol), leaf first, a blank line between samples.
func readStacks(r io.Reader) ([][]string, error) {
	var stacks [][]string
	var cur []string
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			if len(cur) > 0 {
				stacks, cur = append(stacks, cur), nil
			}
			continue
		}
		_, sym, _ := strings.Cut(line, " ")
		cur = append(cur, strings.TrimSpace(sym))
	}
	if len(cur) > 0 {
		stacks = append(stacks, cur)
	}
	return stacks, sc.Err()
}

// writeProfile prints the stage table and the top functions by own samples.
func writeProfile(w io.Writer, stacks [][]string) {
	n := float64(len(stacks))
	fmt.Fprintln(w, "| stage | share of CPU samples |")
	fmt.Fprintln(w, "|---|---|")
	for _, st := range stages {
		k := 0
		for _, s := range stacks {
			if slices.ContainsFunc(s, func(f string) bool {
				return slices.ContainsFunc(st.funcs, func(p string) bool { return strings.HasPrefix(f, p) })
			}) {
				k++
			}
		}
		fmt.Fprintf(w, "| %s | %.1f %% |\n", st.name, 100*float64(k)/n)
	}
	self := map[string]int{}
	for _, s := range stacks {
		self[s[0]]++
	}
	type fn struct {
		name string
		n    int
	}
	var top []fn
	for name, k := range self {
		top = append(top, fn{name, k})
	}
	slices.SortFunc(top, func(a, b fn) int { return b.n - a.n })
	fmt.Fprintln(w, "\n| function (own samples) | share |")
	fmt.Fprintln(w, "|---|---|")
	for _, f := range top[:min(15, len(top))] {
		fmt.Fprintf(w, "| `%s` | %.1f %% |\n", f.name, 100*float64(f.n)/n)
	}
}

// findPerf is the perf binary on PATH, or an error that says how to get it.
func findPerf() (string, error) {
	p, err := exec.LookPath("perf")
	if err != nil {
		return "", fmt.Errorf("-profile needs perf (Debian: apt-get install linux-perf): %w", err)
	}
	if raw, err := os.ReadFile("/proc/sys/kernel/perf_event_paranoid"); err == nil {
		if v, _ := strconv.Atoi(strings.TrimSpace(string(raw))); v > 1 && os.Geteuid() != 0 {
			return "", fmt.Errorf("-profile needs perf_event_paranoid ≤ 1 (it is %d) or root", v)
		}
	}
	return p, nil
}
