// Command benchhttp is gated's HTTP ratio harness (make bench-http). It
// starts on loopback, each as its own process:
//
//   - baseline: bench/cmd/baseline, a bare chi server doing only the JSON
//     decode and encode gated does around a decision;
//   - defaults: gated serve on its embedded defaults (file audit sink, async);
//   - full-async and full-sync: gated with examples/catalog, a generated
//     POLICY.md of -grants grants and the audit in a fresh PostgreSQL
//     database, with --audit-durability async and sync;
//   - opa: `opa run --server` with the Rego gated compiles from the same
//     grants, no decision logs;
//
// then drives POST requests of the same ~1.5 KB event at each with one load
// generator (wrk, Debian's package: a C event loop that spends a small
// share of a core per thousand requests, where hey spent most of a core and
// capped the baseline), in rounds that alternate the servers, and prints
// the medians as ratios to the baseline of the same run: absolute figures
// from a shared 2-core machine, where the load generator competes with the
// server, do not carry from one run to the next, while ratios measured side
// by side do. CPU per request comes from the server's /proc/<pid>/stat, the
// generator's own CPU from wrk's rusage; allocations per decision from go
// test -bench. Nothing is asserted about speed: the harness fails when a
// server does not start, answers with a status of 400 or more or not at
// all, does not give the expected decision, a tool is missing, or the
// baseline was held back by the load generator rather than by its own CPU
// (generatorBound).
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"time"
)

type config struct {
	rounds             int
	duration, warmup   time.Duration
	pause              time.Duration
	concurrency        int
	grants             int
	overloadC          int // 0: no overload rows
	gogcCompare        string
	compareGated       string
	profile            string // servers to profile with perf, comma-separated
	quick              bool
	skipOPA, skipDB    bool
	databaseURL        string
	gated, baseline    string
	wrk, opa           string
	wrkThreads         int
	catalog            string
	doc                string
	benchtime          string
	skipAllocs         bool
	commandLine        string
	wrkVersion, opaVer string

	// The hook mode (-hooks): spawned hook commands against curl.
	hooks                   bool
	hookBin, curl           string
	hookInputs, hookCatalog string
	hookSpawns, hookWarmup  int
}

func main() {
	var c config
	fs := flag.NewFlagSet("benchhttp", flag.ExitOnError)
	fs.IntVar(&c.rounds, "rounds", 5, "rounds; each drives every server once, in a rotating order")
	fs.DurationVar(&c.duration, "duration", 10*time.Second, "how long each server is driven in a round (whole seconds: wrk counts in them)")
	fs.DurationVar(&c.warmup, "warmup", 2*time.Second, "load on each server before the first round, not measured (whole seconds, or 0)")
	fs.DurationVar(&c.pause, "pause", time.Second, "idle time between two servers' runs (lets async audit queues drain)")
	fs.IntVar(&c.concurrency, "c", 32, "concurrent connections of the load generator")
	fs.IntVar(&c.grants, "grants", 1000, "grants in the generated POLICY.md of the full path")
	fs.IntVar(&c.overloadC, "overload-c", 128, "also drive the baseline and the full path at this many connections, reported in a table of their own (0: not)")
	fs.StringVar(&c.profile, "profile", "", "after the rounds, profile these servers (comma-separated names, e.g. full-async) with perf for one more run each, and add where their CPU went to the report")
	fs.StringVar(&c.gogcCompare, "gogc-compare", "", "also run gated on defaults with this GOGC (gated's own default is 400), to measure the collector's share")
	fs.StringVar(&c.compareGated, "compare-gated", "", "also run full-async with this other gated binary (the commit before a change, say), in the same rounds, so the change's cost per decision is read beside it")
	fs.BoolVar(&c.quick, "quick", false, "smoke run: 1 round of 1 s, no warm-up, short benchmarks (checks that the harness works, measures nothing)")
	fs.BoolVar(&c.skipOPA, "skip-opa", false, "leave out the OPA server")
	fs.BoolVar(&c.skipDB, "skip-db", false, "leave out the full path (it needs PostgreSQL)")
	fs.StringVar(&c.databaseURL, "database-url", envOr("GATED_TEST_DATABASE_URL", "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"),
		"PostgreSQL to create the full path's databases in (each run creates its own and drops them)")
	fs.StringVar(&c.gated, "gated", "bin/gated", "the gated binary")
	fs.StringVar(&c.baseline, "baseline", ".bin/baseline", "the baseline binary (bench/cmd/baseline)")
	fs.StringVar(&c.wrk, "wrk", "wrk", "the wrk binary (Debian: apt-get install wrk)")
	fs.IntVar(&c.wrkThreads, "wrk-threads", 1, "wrk's threads: one event loop keeps up with every server here, and a second only competes with the server for the 2 cores")
	fs.StringVar(&c.opa, "opa", ".bin/opa", "the opa binary")
	fs.StringVar(&c.opaVer, "opa-version", "", "OPA's version, for the report")
	fs.StringVar(&c.catalog, "catalog", "examples/catalog", "the full path's catalog")
	fs.StringVar(&c.doc, "doc", "", "rewrite the generated section of this file (docs/performance.md) with the report")
	fs.StringVar(&c.benchtime, "benchtime", "", "go test -benchtime for the allocation benchmarks (default go test's)")
	fs.BoolVar(&c.skipAllocs, "skip-allocs", false, "leave out the allocation benchmarks")
	fs.BoolVar(&c.hooks, "hooks", false, "measure hook commands instead of servers: each spawned on a hook input beside a curl POST of it (make bench-hooks)")
	fs.StringVar(&c.hookBin, "hook-bin", "", "the small hook client (cmd/gated-hook), measured beside `gated hook`")
	fs.StringVar(&c.curl, "curl", "curl", "the curl the hook commands are measured against")
	fs.StringVar(&c.hookInputs, "hook-inputs", "", "runtime=hook input file pairs, comma-separated; each input must be a harmless read the catalog allows (default: bench/cmd/benchhttp/hooks/<runtime>.json for every runtime there)")
	fs.StringVar(&c.hookCatalog, "hook-catalog", "examples/claude-code/catalog", "the catalog the hook inputs are decided against")
	fs.IntVar(&c.hookSpawns, "spawns", 200, "measured spawns of each hook command")
	fs.IntVar(&c.hookWarmup, "spawn-warmup", 20, "spawns of each hook command before the measured ones")
	_ = fs.Parse(os.Args[1:])
	if c.quick {
		c.hookSpawns, c.hookWarmup = 10, 1
		c.rounds, c.duration, c.warmup, c.pause = 1, time.Second, 0, 200*time.Millisecond
		if c.benchtime == "" {
			c.benchtime = "100x"
		}
	}
	if !c.hooks {
		if err := c.checkLoad(); err != nil {
			fmt.Fprintln(os.Stderr, "benchhttp:", err)
			os.Exit(2)
		}
	}
	// Paths relative to the repository, so the report names no one's home.
	c.commandLine = strings.Join(append([]string{".bin/benchhttp"}, os.Args[1:]...), " ")
	if wd, err := os.Getwd(); err == nil {
		c.commandLine = strings.ReplaceAll(c.commandLine, wd+"/", "")
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	do := run
	if c.hooks {
		do = runHooks
	}
	if err := do(ctx, c, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "benchhttp:", err)
		os.Exit(1)
	}
}

// checkLoad refuses settings wrk cannot run: it takes durations in whole
// seconds and needs at least one thread.
func (c config) checkLoad() error {
	if c.duration < time.Second || c.duration%time.Second != 0 {
		return fmt.Errorf("-duration %s: wrk runs for whole seconds, at least one", c.duration)
	}
	if c.warmup < 0 || c.warmup%time.Second != 0 {
		return fmt.Errorf("-warmup %s: wrk runs for whole seconds (or 0 for no warm-up)", c.warmup)
	}
	if c.wrkThreads < 1 {
		return fmt.Errorf("-wrk-threads %d: wrk needs at least one thread", c.wrkThreads)
	}
	return nil
}

// plural is n and the noun, with an s unless n is 1.
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

func envOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}

// closedPort is a loopback address nothing listens on: one just closed.
func closedPort() string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "127.0.0.1:1"
	}
	defer func() { _ = l.Close() }()
	return l.Addr().String()
}

// server is one process under load.
type server struct {
	name, desc string
	args       []string // binary and arguments
	env        []string // added to the harness's environment
	url        string   // what the load generator posts to
	health     string
	metrics    string // gated's /metrics, to count decisions that were not accepted; "" for other servers
	body       string // file posted
	script     string // the wrk script that posts body
	check      func(status int, body []byte) error
	cmd        *exec.Cmd
	exited     chan struct{} // closed once the process has been waited for
	log        string
	// fresh, when set, is a directory the server fills as it runs (the
	// db-away row's spool): before each load on it the server is stopped,
	// the directory removed and the server started again, so every measured
	// window starts from an empty one.
	fresh string
	// postmaster, when not 0, is the local PostgreSQL cluster this server
	// writes its audit to: its CPU is measured beside the server's.
	postmaster int
}

func run(ctx context.Context, c config, out io.Writer) (err error) {
	for _, b := range []struct{ path, hint string }{
		{c.gated, "make gated-bin"}, {c.baseline, "make bench-http builds it"},
	} {
		if _, err := os.Stat(b.path); err != nil {
			return fmt.Errorf("%s is missing (%s)", b.path, b.hint)
		}
	}
	if c.wrk, err = exec.LookPath(c.wrk); err != nil {
		return fmt.Errorf("the load generator: %w (Debian: apt-get install wrk)", err)
	}
	c.wrkVersion = wrkVersion(ctx, c.wrk)
	gen := loadGen{bin: c.wrk, threads: c.wrkThreads}
	if !c.skipOPA {
		if _, err := os.Stat(c.opa); err != nil {
			return fmt.Errorf("%s is missing (make bench-http builds it; or pass -skip-opa)", c.opa)
		}
	}
	var perf string
	if c.profile != "" {
		if perf, err = findPerf(); err != nil {
			return err
		}
	}
	work, err := os.MkdirTemp("", "benchhttp-")
	if err != nil {
		return err
	}
	// A failed run keeps its directory: the servers' logs say why one died.
	defer func() {
		if err != nil {
			err = fmt.Errorf("%w (the servers' logs are kept in %s)", err, work)
			return
		}
		_ = os.RemoveAll(work)
	}()
	eventFile := filepath.Join(work, "event.json")
	if err := os.WriteFile(eventFile, event, 0o644); err != nil {
		return err
	}

	started := time.Now().UTC()
	load, _ := os.ReadFile("/proc/loadavg")
	m := machine(c)
	m = append(m, "load average before the run: "+strings.Join(strings.Fields(string(load))[:min(3, len(strings.Fields(string(load))))], " "))

	accept := func(status int, body []byte) error {
		var a struct {
			Route string `json:"route"`
		}
		if status != http.StatusOK || json.Unmarshal(body, &a) != nil || a.Route != "accept" {
			return fmt.Errorf("expected 200 with route accept, got %d: %.300s", status, body)
		}
		return nil
	}
	var servers []*server
	add := func(s *server) {
		s.log = filepath.Join(work, s.name+".log")
		if s.args[0] == c.gated {
			s.metrics = strings.TrimSuffix(s.health, "/healthz") + "/metrics"
		}
		servers = append(servers, s)
	}
	addr := func() (string, error) {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return "", err
		}
		defer func() { _ = l.Close() }()
		return l.Addr().String(), nil
	}
	mustAddr := func() string {
		a, aerr := addr()
		if aerr != nil && err == nil {
			err = aerr
		}
		return a
	}

	a := mustAddr()
	add(&server{name: "baseline", desc: "bare chi server: gated's body checks, eventcodec.Decode and json.Marshal of the same answer type; no decision, audit or middleware",
		args: []string{c.baseline, "-addr", a, "-event", eventFile}, url: "http://" + a + "/pre-tool-check", health: "http://" + a + "/healthz", body: eventFile, check: accept})
	a = mustAddr()
	add(&server{name: "defaults", desc: "`gated serve` on its embedded defaults: no catalog or policy, file audit sink, async",
		args: []string{c.gated, "serve", "--addr", a, "--log-level", "warn", "--audit-file", filepath.Join(work, "defaults-audit.jsonl"), "--spool-dir", filepath.Join(work, "defaults-spool")},
		url:  "http://" + a + "/pre-tool-check", health: "http://" + a + "/healthz", body: eventFile, check: accept})

	if c.gogcCompare != "" {
		a = mustAddr()
		name := "defaults-gogc" + c.gogcCompare
		add(&server{name: name, desc: "as defaults, with `GOGC=" + c.gogcCompare + "` in the environment (gated's own default is 400)",
			args: []string{c.gated, "serve", "--addr", a, "--log-level", "warn", "--audit-file", filepath.Join(work, name+"-audit.jsonl"), "--spool-dir", filepath.Join(work, name+"-spool")},
			env:  []string{"GOGC=" + c.gogcCompare},
			url:  "http://" + a + "/pre-tool-check", health: "http://" + a + "/healthz", body: eventFile, check: accept})
	}

	// Claude Code's HTTP hook: the hook input Claude Code sends, decided
	// against the example Claude Code catalog (argument rules included).
	a = mustAddr()
	add(&server{name: "hook-claude-code", desc: "`gated serve --catalog examples/claude-code/catalog` answering `POST /v1/hooks/claude-code` with `examples/claude-code/hook-read.json` (a Read of README.md), file audit sink",
		args: []string{c.gated, "serve", "--addr", a, "--log-level", "warn", "--catalog", "examples/claude-code/catalog",
			"--audit-file", filepath.Join(work, "hook-audit.jsonl"), "--spool-dir", filepath.Join(work, "hook-spool")},
		url: "http://" + a + "/v1/hooks/claude-code", health: "http://" + a + "/healthz", body: "examples/claude-code/hook-read.json",
		check: func(status int, body []byte) error {
			var h struct {
				Out struct {
					Decision string `json:"permissionDecision"`
				} `json:"hookSpecificOutput"`
			}
			if status != http.StatusOK || json.Unmarshal(body, &h) != nil || h.Out.Decision != "allow" {
				return fmt.Errorf("expected 200 with permissionDecision allow, got %d: %.300s", status, body)
			}
			return nil
		}})

	policyDir := filepath.Join(work, "policy")
	if !c.skipDB || !c.skipOPA {
		if err := writePolicy(policyDir, c.grants); err != nil {
			return err
		}
	}
	if !c.skipDB {
		names := []string{"async", "sync"}
		if c.compareGated != "" {
			names = append(names, "compare")
		}
		dbs, pgVersion, backend, cleanup, err := createDatabases(ctx, c.databaseURL, names...)
		if err != nil {
			return err
		}
		defer cleanup()
		m = append(m, "PostgreSQL "+pgVersion+" on the same machine")
		// Without the postmaster (a database elsewhere, or in another pid
		// namespace) the PostgreSQL columns read "–"; the run goes on.
		postmaster, perr := postmasterOf("/proc", backend)
		if perr != nil {
			fmt.Fprintf(os.Stderr, "benchhttp: PostgreSQL's CPU is not measured: %v\n", perr)
		}
		full := func(name, bin, mode, db, desc string) {
			a := mustAddr()
			add(&server{name: name, desc: desc,
				args: []string{bin, "serve", "--addr", a, "--log-level", "error", "--catalog", c.catalog, "--policy", policyDir,
					"--database-url", db, "--audit-hmac-key", strings.Repeat("k", 32), "--audit-durability", mode,
					"--spool-dir", filepath.Join(work, name+"-spool")},
				url: "http://" + a + "/pre-tool-check", health: "http://" + a + "/healthz", body: eventFile, check: accept,
				postmaster: postmaster})
		}
		for i, mode := range []string{"async", "sync"} {
			full("full-"+mode, c.gated, mode, dbs[i],
				fmt.Sprintf("gated with `--catalog %s`, a POLICY.md of %d grants and the audit in PostgreSQL, `--audit-durability %s`", c.catalog, c.grants, mode))
		}
		if c.compareGated != "" {
			full("full-async-compare", c.compareGated, "async", dbs[2], "as full-async, served by `"+c.compareGated+"` (`-compare-gated`)")
		}
		// The audit database away: every record is fsynced to the spool,
		// the appends waiting at one moment sharing one write and fsync. At
		// full speed the records fill the spool's 1 GiB in well under a
		// minute, after which gated refuses every decision (fail closed), so
		// the server starts afresh on an empty spool before each window:
		// one window's records fit in it with room to spare.
		a = mustAddr()
		away := filepath.Join(work, "away-spool")
		add(&server{name: "full-async-db-away", fresh: away,
			desc: "as full-async, with `--database-url` naming a port nothing listens on: every record goes to the local spool (fsynced; appends waiting together share one fsync); the server is restarted on an empty spool before each measured window (one window fills a fraction of the spool's 1 GiB; the rounds together would fill it, and a full spool refuses every decision); its peak RSS is the last window's process's",
			args: []string{c.gated, "serve", "--addr", a, "--log-level", "error", "--catalog", c.catalog, "--policy", policyDir,
				"--database-url", "postgres://gated@" + closedPort() + "/gated?sslmode=disable&connect_timeout=1", "--audit-hmac-key", strings.Repeat("k", 32),
				"--audit-durability", "async", "--spool-dir", away},
			url: "http://" + a + "/pre-tool-check", health: "http://" + a + "/healthz", body: eventFile, check: accept})
	}
	if !c.skipOPA {
		bundle := filepath.Join(work, "opa")
		body, err := writeOPABundle(c.gated, c.catalog, policyDir, bundle)
		if err != nil {
			return err
		}
		a = mustAddr()
		add(&server{name: "opa", desc: fmt.Sprintf("`opa run --server` (%s) with the Rego `gated policy compile` generates from the same %d grants plus one allow rule; no decision logs; the event sent as input with the fields gated computes", c.opaVer, c.grants),
			args: []string{c.opa, "run", "--server", "--addr", a, "--log-level", "error", "--skip-version-check",
				filepath.Join(bundle, "grants.rego"), filepath.Join(bundle, "decision.rego")},
			url: "http://" + a + "/v1/data/gated/bench/allow", health: "http://" + a + "/health", body: body,
			check: func(status int, body []byte) error {
				var r struct {
					Result bool `json:"result"`
				}
				if status != http.StatusOK || json.Unmarshal(body, &r) != nil || !r.Result {
					return fmt.Errorf("expected 200 with result true, got %d: %.300s", status, body)
				}
				return nil
			}})
	}
	if err != nil {
		return err
	}

	for _, s := range servers {
		if s.script, err = writeWrkScript(work, s.name, s.body); err != nil {
			return err
		}
	}

	defer func() {
		for _, s := range servers {
			if serr := s.stop(); serr != nil && err == nil {
				err = serr
			}
		}
	}()
	for _, s := range servers {
		if err := s.start(ctx); err != nil {
			return err
		}
	}
	// Each server is driven at the harness's concurrency; the baseline and
	// the full path also at the overload concurrency, in a table of their
	// own (its ratios are to the baseline at that concurrency).
	type job struct {
		s *server
		c int
	}
	var jobs []job
	for _, s := range servers {
		jobs = append(jobs, job{s, c.concurrency})
	}
	if c.overloadC > 0 && c.overloadC != c.concurrency {
		for _, s := range servers {
			if s.name == "baseline" || strings.HasPrefix(s.name, "full-") {
				jobs = append(jobs, job{s, c.overloadC})
			}
		}
	}
	progress := os.Stderr
	if c.warmup > 0 {
		for _, s := range servers {
			fmt.Fprintf(progress, "warm-up %s %s\n", s.name, c.warmup)
			if err := s.restartFresh(ctx); err != nil {
				return err
			}
			if _, err := drive(ctx, gen, s, c.warmup, c.concurrency); err != nil {
				return fmt.Errorf("%s: %w", s.name, err)
			}
		}
	}
	samples := make([][]sample, len(jobs))
	for r := range c.rounds {
		for k := range jobs {
			// Rotate the order each round so no server always follows the
			// same one (or always runs first, on a cold machine).
			i := (k + r) % len(jobs)
			l := jobs[i]
			if err := l.s.restartFresh(ctx); err != nil {
				return err
			}
			time.Sleep(c.pause)
			sm, err := drive(ctx, gen, l.s, c.duration, l.c)
			if err != nil {
				return fmt.Errorf("%s at %d connections: %w", l.s.name, l.c, err)
			}
			pg := ""
			if l.s.postmaster != 0 {
				pg = fmt.Sprintf(", PostgreSQL %.2f", sm.pgCores)
			}
			fmt.Fprintf(progress, "round %d/%d %-16s c=%-4d %8.0f req/s  CPU %.1f µs/req  p50 %s  p99 %s  cores: server %.2f, wrk %.2f%s\n",
				r+1, c.rounds, l.s.name, l.c, sm.rps, float64(sm.cpuPerOp)/1e3, ms(sm.p50), ms(sm.p99), sm.serverCores, sm.loadCores, pg)
			samples[i] = append(samples[i], sm)
		}
	}
	results := make([]result, len(jobs))
	for i, l := range jobs {
		results[i] = result{name: l.s.name, desc: l.s.desc, c: l.c, med: medians(samples[i]), rounds: len(samples[i]), peakRSS: peakRSS(l.s.cmd.Process.Pid), gated: l.s.metrics != "", pg: l.s.postmaster != 0}
	}
	if why := generatorBound(results, runtime.NumCPU()); why != "" {
		if !c.quick {
			return fmt.Errorf("run refused: %s", why)
		}
		fmt.Fprintf(progress, "warning (a -quick run measures nothing, so it is not refused): %s\n", why)
	}

	var profiles []string
	for _, name := range strings.FieldsFunc(c.profile, func(r rune) bool { return r == ',' }) {
		i := slices.IndexFunc(servers, func(s *server) bool { return s.name == name })
		if i < 0 {
			return fmt.Errorf("-profile: there is no server %q in this run", name)
		}
		fmt.Fprintf(progress, "profile %s %s\n", name, c.duration)
		if err := servers[i].restartFresh(ctx); err != nil {
			return err
		}
		p, err := profileRun(ctx, perf, gen, servers[i], c.duration, c.concurrency, work)
		if err != nil {
			return fmt.Errorf("profile %s: %w", name, err)
		}
		profiles = append(profiles, p)
	}

	var allocs []benchLine
	if !c.skipAllocs {
		if allocs, err = allocBenchmarks(ctx, c.benchtime); err != nil {
			return err
		}
	}

	var rep bytes.Buffer
	writeReport(&rep, c, started, m, results, profiles, allocs)
	if _, err := out.Write(rep.Bytes()); err != nil {
		return err
	}
	if c.doc != "" {
		return httpSection.update(c.doc, rep.String())
	}
	return nil
}

func writeReport(w io.Writer, c config, started time.Time, m []string, rs []result, profiles []string, allocs []benchLine) {
	fmt.Fprintf(w, "Measured %s with `make bench-http`, which ran:\n\n", started.Format("2006-01-02 15:04 MST"))
	fmt.Fprintf(w, "```sh\n%s\n```\n\n", c.commandLine)
	fmt.Fprintf(w, "Machine: %s.\n\n", strings.Join(m, "; "))
	fmt.Fprintf(w, "POST of the same %d-byte event (bench/cmd/benchhttp/event.json; the hook row posts its own hook input), %d connections, %d round(s) of %s per server in rotating order; medians of the rounds. Ratios are to the baseline of this run (req/s: higher is better; CPU and latency: lower is better). CPU/req is the server process's own user+system time per answer, the figure least moved by what else shares the cores. PostgreSQL CPU µs/req and cores: PostgreSQL are the local PostgreSQL cluster's CPU (postmaster and every child, those that ended in the round included) for the rows that audit to it; the whole cluster's, so other work on it counts too. Cores: the CPU the server process and the load generator (wrk, %s) each used, per second of the round; a run is refused when the baseline used under %.2f of the %d cores while wrk used more than %.2f, since wrk and not the server would then have set the baseline's pace. Peak RSS is the server process's over the whole run. Not accepted: gated's decisions with another route over all rounds, from its `gated_decisions_total` (the event is one every gated row accepts, so anything else is a refusal under load, such as the policy's time budget).\n\n",
		len(event), c.concurrency, c.rounds, c.duration, plural(c.wrkThreads, "thread"), minServerCores(runtime.NumCPU()), runtime.NumCPU(), maxLoadCores(runtime.NumCPU()))
	writeTable(w, rs)
	by := map[string]sample{}
	for _, r := range rs {
		if r.c == c.concurrency {
			by[r.name] = r.med
		}
	}
	if o, ok := by["opa"]; ok {
		fmt.Fprintln(w)
		for _, n := range []string{"defaults", "full-async", "full-sync"} {
			if g, ok := by[n]; ok {
				fmt.Fprintf(w, "%s / opa: %.2f× the req/s, %.2f× the CPU per request.\n", n, ratio(g.rps, o.rps), ratio(float64(g.cpuPerOp), float64(o.cpuPerOp)))
			}
		}
	}
	for _, p := range profiles {
		fmt.Fprintf(w, "\n%s", p)
	}
	if len(allocs) > 0 {
		fmt.Fprintf(w, "\nAllocations per decision: `go test -run '^$' -bench 'BenchmarkDecide$' -benchmem ./internal/gate` (in-process decision and envelope) and `-bench 'BenchmarkPreToolCheck$' ./internal/server` (the whole handler, defaults)")
		if c.benchtime != "" {
			fmt.Fprintf(w, ", `-benchtime %s`", c.benchtime)
		}
		fmt.Fprint(w, ":\n\n")
		writeAllocTable(w, allocs)
	}
}

// machine describes the host for the report.
func machine(c config) []string {
	var m []string
	cpu := "unknown CPU"
	if raw, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for l := range strings.SplitSeq(string(raw), "\n") {
			if k, v, ok := strings.Cut(l, ":"); ok && strings.TrimSpace(k) == "model name" {
				cpu = strings.TrimSpace(v)
				break
			}
		}
	}
	m = append(m, fmt.Sprintf("%d cores (%s, %s)", runtime.NumCPU(), cpu, runtime.GOARCH))
	if raw, err := os.ReadFile("/proc/meminfo"); err == nil {
		var kb int64
		if _, err := fmt.Sscanf(string(raw), "MemTotal: %d kB", &kb); err == nil {
			m = append(m, fmt.Sprintf("%.0f GiB", float64(kb)/(1<<20)))
		}
	}
	if raw, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		m = append(m, "Linux "+strings.TrimSpace(string(raw)))
	}
	m = append(m, runtime.Version())
	if c.wrkVersion != "" {
		m = append(m, fmt.Sprintf("%s (%s) on the same cores", c.wrkVersion, plural(c.wrkThreads, "thread")))
	}
	return m
}

func (s *server) start(ctx context.Context) error {
	logf, err := os.Create(s.log)
	if err != nil {
		return err
	}
	s.cmd = exec.Command(s.args[0], s.args[1:]...)
	s.cmd.Env = append(os.Environ(), s.env...)
	s.cmd.Stdout, s.cmd.Stderr = logf, logf
	if err := s.cmd.Start(); err != nil {
		_ = logf.Close()
		return fmt.Errorf("start %s: %w", s.name, err)
	}
	_ = logf.Close() // the child holds its own descriptor
	exited := make(chan struct{})
	go func() { _ = s.cmd.Wait(); close(exited) }()
	s.exited = exited

	deadline := time.Now().Add(60 * time.Second)
	for {
		select {
		case <-exited:
			return fmt.Errorf("%s exited at start: %s", s.name, tail(s.log))
		case <-ctx.Done():
			return ctx.Err()
		default:
		}
		if resp, err := http.Get(s.health); err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				break
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s did not answer %s within a minute: %s", s.name, s.health, tail(s.log))
		}
		time.Sleep(100 * time.Millisecond)
	}
	body, err := os.ReadFile(s.body)
	if err != nil {
		return err
	}
	resp, err := http.Post(s.url, "application/json", bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("%s: %w", s.name, err)
	}
	defer func() { _ = resp.Body.Close() }()
	got, _ := io.ReadAll(resp.Body)
	if err := s.check(resp.StatusCode, got); err != nil {
		return fmt.Errorf("%s does not decide the benchmark event as expected: %w", s.name, err)
	}
	return nil
}
