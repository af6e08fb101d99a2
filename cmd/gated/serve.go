package main

import (
	"context"
	"errors"
	"fmt"
	"github.com/gatedhq/gated/internal/adapter/hook/wire"
	"io"
	"net"
	"net/http"
	"net/netip"
	"os"
	"os/signal"
	"syscall"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/trace"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/gatedhq/gated/api"
	"github.com/gatedhq/gated/internal/adapter/hook"
	"github.com/gatedhq/gated/internal/auth"
	"github.com/gatedhq/gated/internal/console"
	"github.com/gatedhq/gated/internal/gate"
	"github.com/gatedhq/gated/internal/kill"
	"github.com/gatedhq/gated/internal/kill/watch"
	"github.com/gatedhq/gated/internal/metrics"
	"github.com/gatedhq/gated/internal/redact"
	"github.com/gatedhq/gated/internal/server"
	"github.com/gatedhq/gated/internal/sources"
	"github.com/gatedhq/gated/internal/tracing"
)

type serveConfig struct {
	addr            string
	tokens          string
	shadow          bool
	logLevel        string
	insecureNoAuth  bool
	maxBodyBytes    int64
	hookMaxBody     int64
	hookAuthState   string
	rateLimit       int
	authFailures    int
	requestShadow   bool
	trustedProxies  listFlag
	allowedHosts    listFlag
	shutdownTimeout time.Duration
	sources         sourceFlags
	audit           auditFlags
	approvals       approvalFlags
	approvalsOn     bool // decided by parseServe from the flags
	kill            killFlags
	killOn          bool // decided by parseServe from the flags
	metricsAddr     string
	consoleKey      string
	limits          limitFlags
	candidate       candidateFlags
}

func runServe(ctx context.Context, args []string, getenv func(string) string, stderr io.Writer) error {
	c, err := parseServe(args, getenv, stderr)
	if err != nil {
		return err
	}
	log, err := newLogger(stderr, c.logLevel)
	if err != nil {
		return usageError("%v", err)
	}
	defer func() { _ = log.Sync() }()
	tuneMemory(getenv, log)
	tp, traces, err := openTracing(ctx, getenv, c.shutdownTimeout, log)
	if err != nil {
		return err
	}
	// Deferred first, so it runs last: the spans of the drain are flushed too.
	defer traces()

	// Everything that can be wrong with the configuration is checked before
	// anything is opened.
	tokens, proxies, err := c.access(log)
	if err != nil {
		return err
	}
	m := metrics.New(gatedVersion())
	limits, closeLimits, err := c.limits.open(ctx, m, log)
	if err != nil {
		return err
	}
	defer closeLimits()
	src, err := loadSources(&c.sources, log, limits)
	if err != nil {
		return err
	}
	src.Watch(ctx, log)
	candSrc, err := loadCandidateSources(ctx, c, log)
	if err != nil {
		return err
	}
	defer reloadOnSIGHUP(log, src, candSrc)()
	src.Observe(m)
	db, err := openDatabase(ctx, &c.audit)
	if err != nil {
		return err
	}
	if db != nil {
		defer db.Close() // last: everything below uses it
	}
	rec, red, store, err := openAudit(ctx, &c.audit, db, log, m)
	if err != nil {
		return err
	}
	defer func() {
		// Drain what is queued into PostgreSQL or the spool before exit.
		dctx, cancel := context.WithTimeout(context.Background(), c.shutdownTimeout)
		defer cancel()
		if err := rec.Close(dctx); err != nil {
			log.Error("audit drain incomplete", zap.Error(err))
		}
		if store != nil {
			store.Close()
		}
	}()

	opts := append(src.Opts, gate.WithShadow(c.shadow), gate.WithAudit(rec, red, gatedVersion()), gate.WithMetrics(m), gate.WithTracing(tp))
	var apv server.Approvals // nil: approvals are off
	if c.approvalsOn {
		a, err := openApprovals(ctx, &c.approvals, db, c.audit.retention, m, log.Named("approvals"))
		if err != nil {
			return err
		}
		defer func() {
			// After the server has stopped, before the audit drain.
			dctx, cancel := context.WithTimeout(context.Background(), c.shutdownTimeout)
			defer cancel()
			a.Close(dctx)
		}()
		opts = append(opts, gate.WithApprovals(a, c.approvals.publicBase()), gate.WithApprovers(tokens.Approver))
		apv = a
	}
	var ks *watch.Switch // nil: the kill switch is off
	if c.killOn {
		ks = watch.Open(ctx, db, c.kill.config(c.audit.spoolDir), m, log.Named("kill"))
		defer ks.Close()
		opts = append(opts, gate.WithKillSwitch(ks.Board()))
	}
	var cand *candidateRun // nil: no candidate
	if candSrc != nil {
		var board *kill.Board
		if ks != nil {
			board = ks.Board()
		}
		var stop func()
		if cand, stop, err = startCandidate(ctx, c, candSrc, db, red, board, m, log); err != nil {
			return err
		}
		// Deferred here, so it runs once the server has stopped deciding.
		defer stop()
		opts = append(opts, gate.WithFollower(cand.Follow))
	}
	stopping := make(chan struct{})
	con, err := c.console(tokens, proxies, apv, ks, store, src, cand, stopping, log)
	if err != nil {
		return err
	}
	handler := server.New(server.Deps{
		Engine: gate.New(opts...), Logger: log, Tokens: tokens, TrustedProxies: proxies, Hosts: c.hosts(c.addr),
		MaxBodyBytes: c.maxBodyBytes, HookMaxBodyBytes: c.hookMaxBody, HookAuthorizationState: c.hookAuthState,
		RateLimit: c.rateLimit, AuthFailureLimit: authFailureLimit(c.authFailures), Limits: limits, AllowRequestShadow: c.requestShadow, OpenAPI: api.OpenAPI, Version: gatedVersion(),
		Catalog: src.CatalogDocument(), Policy: src.PolicyDocument(), Decisions: store, Redactor: red,
		Approvals: apv, Kills: serverKills(ks), Stopping: stopping, Console: con,
		Candidate: cand.candidate(), Candidates: cand.storeOrNil(),
		Metrics: m, MetricsElsewhere: c.metricsAddr != "", Tracing: tp, PublicURL: c.approvals.publicBase(),
		Ready: func(context.Context) error {
			if !rec.Ready() {
				return errors.New("the audit sink cannot take records")
			}
			return nil
		},
	})
	log.Info("gated starting", zap.String("version", gatedVersion()), zap.Bool("shadow", c.shadow), zap.Bool("request_shadow", c.requestShadow),
		zap.Bool("auth", tokens != nil), zap.Bool("approvals", c.approvalsOn), zap.Bool("kill_switch", c.killOn))
	return listenAndServe(ctx, c, handler, m, log, stopping)
}

func parseServe(args []string, getenv func(string) string, stderr io.Writer) (*serveConfig, error) {
	c := &serveConfig{}
	fs := newFlagSet("serve", stderr)
	fs.StringVar(&c.addr, "addr", "127.0.0.1:8080", "listen address")
	fs.StringVar(&c.tokens, "tokens", "", "YAML tokens file (name, sha256, scopes, principals); without it gated runs open")
	fs.BoolVar(&c.shadow, "shadow", false, "shadow mode for every request: decide and report, but let every tool run")
	fs.StringVar(&c.logLevel, "log-level", "info", "log level: debug, info, warn, error")
	fs.BoolVar(&c.insecureNoAuth, "insecure-no-auth", false, "allow running without tokens on a non-loopback address")
	fs.Int64Var(&c.maxBodyBytes, "max-body-bytes", server.DefaultMaxBodyBytes, "largest request body accepted")
	fs.Int64Var(&c.hookMaxBody, "max-hook-body-bytes", wire.MaxInputBytes, "largest hook call accepted (hook inputs carry file contents)")
	fs.StringVar(&c.hookAuthState, "hook-authorization-state", hook.DefaultAuthorizationState, "what a coding agent's hook call vouches for: none, user_claimed or authenticated")
	fs.IntVar(&c.rateLimit, "rate-limit", 0, "requests per minute per token (per client when open); 0 disables")
	fs.IntVar(&c.authFailures, "auth-failure-limit", server.DefaultAuthFailureLimit, "failed authentications per minute per client address; past it the address gets 429, valid token or not; 0 disables")
	fs.BoolVar(&c.requestShadow, "allow-request-shadow", false, "without --tokens, let callers ask for shadow mode with ?shadow_mode=true (with tokens a token needs scope shadow)")
	fs.Var(&c.allowedHosts, "allowed-hosts", "a host name requests may address besides loopback names (repeatable); on a loopback listener foreign Host and Origin headers are refused, and with this flag on any listener")
	fs.Var(&c.trustedProxies, "trusted-proxy", "CIDR of a proxy whose X-Forwarded-For is trusted (repeatable)")
	fs.DurationVar(&c.shutdownTimeout, "shutdown-timeout", 15*time.Second, "how long to drain on SIGTERM")
	c.sources.register(fs)
	c.audit.register(fs)
	c.approvals.register(fs)
	c.limits.register(fs)
	c.kill.register(fs)
	c.candidate.register(fs)
	fs.StringVar(&c.metricsAddr, "metrics-addr", "", "serve /metrics on this address instead of --addr")
	fs.StringVar(&c.consoleKey, "console-key", "", "the key that signs web console sessions (at least 32 bytes; prefer GATED_CONSOLE_KEY); replicas behind one address need the same; without it sessions end when gated restarts")
	if err := parseFlags(fs, args, getenv); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, usageError("serve takes no arguments, got %q", fs.Args())
	}
	if c.maxBodyBytes <= 0 || c.hookMaxBody <= 0 {
		return nil, usageError("--max-body-bytes and --max-hook-body-bytes must be positive")
	}
	if c.consoleKey != "" && len(c.consoleKey) < console.MinKeyBytes {
		return nil, usageError("--console-key must be at least %d bytes", console.MinKeyBytes)
	}
	if c.authFailures < 0 {
		return nil, usageError("--auth-failure-limit must be 0 (off) or positive, got %d", c.authFailures)
	}
	if err := c.limits.check(); err != nil {
		return nil, err
	}
	if err := c.candidate.check(); err != nil {
		return nil, err
	}
	if c.requestShadow && c.tokens != "" {
		return nil, usageError("--allow-request-shadow applies only without --tokens; with tokens, give the tokens that may ask for shadow mode the scope shadow")
	}
	if err := hook.CheckAuthorizationState(c.hookAuthState); err != nil {
		return nil, usageError("--hook-authorization-state: %v", err)
	}
	on, err := c.approvals.check(c.audit.databaseURL != "", c.tokens != "")
	if err != nil {
		return nil, err
	}
	c.approvalsOn = on
	if c.killOn, err = c.kill.check(c.audit.databaseURL != "", c.tokens != ""); err != nil {
		return nil, err
	}
	return c, nil
}

// openTracing sets up traces as the OTEL_* variables ask (off unless they
// name an OTLP endpoint). The returned stop flushes what is buffered,
// waiting at most timeout for the collector.
func openTracing(ctx context.Context, getenv func(string) string, timeout time.Duration, log *zap.Logger) (trace.TracerProvider, func(), error) {
	on, err := tracing.Enabled(getenv)
	if err != nil {
		return nil, nil, usageError("traces: %v", err)
	}
	tp, shutdown, err := tracing.Setup(ctx, getenv, gatedVersion())
	if err != nil {
		return nil, nil, fmt.Errorf("traces: %w", err)
	}
	if on {
		// Export failures go to gated's log, not the SDK's own stderr lines.
		otel.SetErrorHandler(otel.ErrorHandlerFunc(func(err error) { log.Warn("traces: export failed", zap.Error(err)) }))
	}
	log.Info("traces", zap.Bool("exported", on))
	return tp, func() {
		sctx, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		if err := shutdown(sctx); err != nil {
			log.Error("traces not flushed", zap.Error(err))
		}
	}, nil
}

// authFailureLimit maps the flag, where 0 is off, onto server.Deps, where
// 0 is the default.
func authFailureLimit(n int) int {
	if n == 0 {
		return -1
	}
	return n
}

// access loads the tokens and trusted proxies, and refuses to run open on
// an address other machines can reach unless told to.
func (c *serveConfig) access(log *zap.Logger) (*auth.Tokens, []netip.Prefix, error) {
	var proxies []netip.Prefix
	for _, p := range c.trustedProxies {
		prefix, err := netip.ParsePrefix(p)
		if err != nil {
			return nil, nil, usageError("--trusted-proxy %q: %v", p, err)
		}
		proxies = append(proxies, prefix)
	}
	if c.tokens != "" {
		tokens, err := auth.Load(c.tokens)
		return tokens, proxies, err
	}
	if !loopback(c.addr) && !c.insecureNoAuth {
		return nil, nil, usageError("refusing to run without --tokens on non-loopback address %s (pass --insecure-no-auth to insist)", c.addr)
	}
	log.Warn("no tokens file: gated is running open, every caller may ask for decisions", zap.String("addr", c.addr))
	return nil, proxies, nil
}

// hosts is the Host/Origin rule of a listener on addr: enforced on
// loopback, where any web page the user opens can reach gated, and
// wherever hosts are named.
func (c *serveConfig) hosts(addr string) server.Hosts {
	return server.Hosts{Enforce: loopback(addr) || len(c.allowedHosts) > 0, Allowed: c.allowedHosts}
}

// reloadOnSIGHUP rebuilds the catalog and policy on SIGHUP until the
// returned stop is called.
func reloadOnSIGHUP(log *zap.Logger, srcs ...*sources.Sources) (stop func()) {
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	done := make(chan struct{})
	go func() {
		for {
			select {
			case <-hup:
				log.Info("SIGHUP: reloading catalog and policy")
				for _, src := range srcs {
					if src != nil {
						src.ReloadAll()
					}
				}
			case <-done:
				return
			}
		}
	}()
	return func() { signal.Stop(hup); close(done) }
}

// listenAndServe serves handler until ctx ends, then shuts down gracefully.
// Shutting down closes stopping first, which ends the long polls and event
// streams that Shutdown would otherwise wait for.
func listenAndServe(ctx context.Context, c *serveConfig, handler http.Handler, m *metrics.Metrics, log *zap.Logger, stopping chan<- struct{}) error {
	ln, err := net.Listen("tcp", c.addr)
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	srv := &http.Server{
		Handler:           handler,
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       15 * time.Second,
		WriteTimeout:      15 * time.Second,
		IdleTimeout:       120 * time.Second,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          zap.NewStdLog(log.Named("http")),
	}
	srv.RegisterOnShutdown(func() { close(stopping) })
	log.Info("gated listening", zap.String("addr", ln.Addr().String()))
	errc := make(chan error, 2)
	go func() { errc <- srv.Serve(ln) }()
	if c.metricsAddr != "" {
		msrv, err := serveMetrics(c.metricsAddr, c.hosts(c.metricsAddr), m, log, errc)
		if err != nil {
			return errors.Join(err, srv.Close())
		}
		defer msrv.Close()
	}
	select {
	case err := <-errc:
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}
	log.Info("shutting down")
	sctx, cancel := context.WithTimeout(context.Background(), c.shutdownTimeout)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		return fmt.Errorf("shutdown: %w", err)
	}
	if err := <-errc; !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("serve: %w", err)
	}
	return nil
}

// serveMetrics serves /metrics alone on addr.
func serveMetrics(addr string, hosts server.Hosts, m *metrics.Metrics, log *zap.Logger, errc chan<- error) (*http.Server, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("listen (metrics): %w", err)
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", m.Handler())
	srv := &http.Server{Handler: server.GuardHosts(hosts, mux), ReadHeaderTimeout: 5 * time.Second, WriteTimeout: 30 * time.Second}
	log.Info("metrics listening", zap.String("addr", ln.Addr().String()))
	go func() {
		if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
			errc <- fmt.Errorf("metrics: %w", err)
		}
	}()
	return srv, nil
}

// loopback reports whether addr listens only on a loopback interface.
func loopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	a, err := netip.ParseAddr(host)
	return err == nil && a.IsLoopback()
}

// newLogger returns a JSON logger writing to w, with every secret masked.
func newLogger(w io.Writer, level string) (*zap.Logger, error) {
	lvl, err := zapcore.ParseLevel(level)
	if err != nil {
		return nil, fmt.Errorf("--log-level: %w", err)
	}
	enc := zap.NewProductionEncoderConfig()
	enc.EncodeTime = zapcore.ISO8601TimeEncoder
	core := zapcore.NewCore(zapcore.NewJSONEncoder(enc), zapcore.Lock(zapcore.AddSync(w)), lvl)
	return zap.New(redact.LogCore(core)), nil
}
