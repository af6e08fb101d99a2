package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/gatedhq/gated/internal/adapter/hook/wire"
)

// A coding agent spawns its hook command on every tool call, so what a hook
// costs is the whole round trip: start the process, ask gated, exit. The
// hook mode (make bench-hooks) measures it beside a curl POST of the same
// body to the same gated, spawn for spawn in rotating order, and reports
// each command's median as a ratio to curl's.

// hookGoal is the ratio to curl's median the command hook must stay under.
const hookGoal = 1.5

// hookCase is one runtime's hook input, decided by one running gated.
type hookCase struct {
	runtime, input string
}

// hookCommand is one way of answering a hook: a command line fed the input
// on stdin.
type hookCommand struct {
	name, desc string
	args       []string
}

// hookResult is one command's spawns for one runtime.
type hookResult struct {
	runtime, name, desc string
	times               []time.Duration
}

// hookInputsDir holds a harmless read in each runtime's hook format.
const hookInputsDir = "bench/cmd/benchhttp/hooks"

func parseHookCases(s string) ([]hookCase, error) {
	var cs []hookCase
	if s == "" {
		files, err := filepath.Glob(filepath.Join(hookInputsDir, "*.json"))
		if err != nil || len(files) == 0 {
			return nil, fmt.Errorf("no hook inputs in %s (run from the repository's root): %v", hookInputsDir, err)
		}
		for _, f := range files {
			cs = append(cs, hookCase{strings.TrimSuffix(filepath.Base(f), ".json"), f})
		}
		return cs, nil
	}
	for _, pair := range strings.Split(s, ",") {
		rt, input, ok := strings.Cut(strings.TrimSpace(pair), "=")
		if !ok || rt == "" || input == "" {
			return nil, fmt.Errorf("-hook-inputs wants runtime=file pairs, comma-separated, not %q", pair)
		}
		cs = append(cs, hookCase{rt, input})
	}
	return cs, nil
}

func runHooks(ctx context.Context, c config, out io.Writer) error {
	cases, err := parseHookCases(c.hookInputs)
	if err != nil {
		return err
	}
	codecs := make([]*wire.Codec, len(cases))
	for i, hc := range cases {
		var ok bool
		if codecs[i], ok = wire.Lookup(hc.runtime); !ok {
			return fmt.Errorf("no runtime %q answers hooks", hc.runtime)
		}
	}
	curl, err := exec.LookPath(c.curl)
	if err != nil {
		return fmt.Errorf("curl is missing (apt-get install curl): %w", err)
	}
	work, err := os.MkdirTemp("", "benchhooks-")
	if err != nil {
		return err
	}
	defer func() { _ = os.RemoveAll(work) }()

	a := closedPort()
	base := "http://" + a
	s := &server{name: "gated", log: filepath.Join(work, "gated.log"),
		args: []string{c.gated, "serve", "--addr", a, "--log-level", "warn", "--catalog", c.hookCatalog,
			"--audit-file", filepath.Join(work, "audit.jsonl"), "--spool-dir", filepath.Join(work, "spool")},
		url: base + "/v1/hooks/" + cases[0].runtime, health: base + "/healthz", body: cases[0].input,
		check: func(status int, body []byte) error {
			if status != 200 {
				return fmt.Errorf("expected 200, got %d: %.300s", status, body)
			}
			return allowed(codecs[0], body)
		}}
	if err := s.start(ctx); err != nil {
		return err
	}
	defer func() { _ = s.stop() }()

	started := time.Now().UTC()
	var results []hookResult
	for ci, hc := range cases {
		body, err := os.ReadFile(hc.input)
		if err != nil {
			return err
		}
		cmds := []hookCommand{
			{"curl", "`curl -sS -X POST --data-binary @- " + "/v1/hooks/" + hc.runtime + "`",
				[]string{curl, "-sS", "-X", "POST", "-H", "Content-Type: application/json", "--data-binary", "@-", base + "/v1/hooks/" + hc.runtime}},
		}
		if c.hookBin != "" {
			cmds = append(cmds, hookCommand{"gated-hook", "`gated-hook " + hc.runtime + " --url …`, the small hook client",
				[]string{c.hookBin, hc.runtime, "--url", base}})
		}
		cmds = append(cmds, hookCommand{"gated hook --url", "`gated hook " + hc.runtime + " --url …`, the whole gated binary",
			[]string{c.gated, "hook", hc.runtime, "--url", base}})
		// Deciding in-process loads the same engine whichever runtime asks,
		// and costs a hundred times a spawn: the first runtime stands for all.
		if ci == 0 {
			cmds = append(cmds, hookCommand{"gated hook in-process", "`gated hook " + hc.runtime + " --catalog " + c.hookCatalog + "`, deciding without a server",
				[]string{c.gated, "hook", hc.runtime, "--catalog", c.hookCatalog}})
		}
		rs := make([]hookResult, len(cmds))
		for i, cmd := range cmds {
			rs[i] = hookResult{runtime: hc.runtime, name: cmd.name, desc: cmd.desc}
		}
		for i := -c.hookWarmup; i < c.hookSpawns; i++ {
			for k := range cmds {
				j := (k + max(i, 0)) % len(cmds) // rotate who goes first
				d, err := spawnHook(ctx, codecs[ci], cmds[j].name == "curl", cmds[j].args, body)
				if err != nil {
					return fmt.Errorf("%s for %s: %w", cmds[j].name, hc.runtime, err)
				}
				if i >= 0 {
					rs[j].times = append(rs[j].times, d)
				}
			}
		}
		results = append(results, rs...)
	}

	var rep bytes.Buffer
	writeHookReport(&rep, c, started, results)
	if _, err := out.Write(rep.Bytes()); err != nil {
		return err
	}
	if c.doc != "" {
		return hookSection.update(c.doc, rep.String())
	}
	return nil
}

// spawnHook runs one hook command on body and times it from start to exit.
// The answer must allow, in the runtime's own words: the benchmark input is
// a harmless read. curl prints gated's HTTP answer, which the codec reads.
func spawnHook(ctx context.Context, c *wire.Codec, curl bool, args []string, body []byte) (time.Duration, error) {
	cmd := exec.CommandContext(ctx, args[0], args[1:]...)
	cmd.Stdin = bytes.NewReader(body)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	t0 := time.Now()
	err := cmd.Run()
	d := time.Since(t0)
	if err != nil {
		return 0, fmt.Errorf("%w: %.300s", err, stderr.String())
	}
	out := bytes.TrimSpace(stdout.Bytes())
	if !curl && c.Answer(wire.Allow, "", "").Quiet {
		if len(out) > 0 {
			return 0, fmt.Errorf("%s reads only the exit code, and the hook printed %.300s", c.Name, out)
		}
		return d, nil
	}
	if err := allowed(c, out); err != nil {
		return 0, err
	}
	return d, nil
}

// allowed checks that a hook answer, gated's over HTTP or the command's,
// allows the call.
func allowed(c *wire.Codec, answer []byte) error {
	if v, _, err := c.Verdict(answer); err != nil || v != wire.Allow {
		return fmt.Errorf("expected %s's answer to allow the harmless read, got %.300s (%v)", c.Name, answer, err)
	}
	return nil
}

func writeHookReport(w io.Writer, c config, started time.Time, rs []hookResult) {
	fmt.Fprintf(w, "\nMeasured %s on %s. Command: `%s`.\n\n", started.Format("2006-01-02 15:04 UTC"), strings.Join(machine(c), "; "), c.commandLine)
	fmt.Fprintf(w, "Each command answers the runtime's hook input (a harmless read, allowed) %d times, after %d unmeasured, "+
		"in rotating order with the others; one `gated serve --catalog %s` (file audit) answers them all. "+
		"Time is from spawning the command to its exit, stdin written and stdout read. Goal: the command hook's median at most %.1f× curl's.\n\n",
		c.hookSpawns, c.hookWarmup, c.hookCatalog, hookGoal)
	fmt.Fprintln(w, "| runtime | command | p50 | p90 | p50 × curl | goal |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|")
	var curl time.Duration
	for _, r := range rs {
		p50, p90 := percentile(r.times, 50), percentile(r.times, 90)
		if r.name == "curl" {
			curl = p50
		}
		goal := ""
		if r.name != "curl" && r.name != "gated hook in-process" {
			goal = "not met"
			if ratio(float64(p50), float64(curl)) <= hookGoal {
				goal = "met"
			}
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s | %.2f× | %s |\n", r.runtime, r.desc, ms(p50), ms(p90), ratio(float64(p50), float64(curl)), goal)
	}
}

// percentile is the p-th percentile of ds (nearest rank).
func percentile(ds []time.Duration, p int) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[(len(s)-1)*p/100]
}
