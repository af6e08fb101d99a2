package main

import (
	"context"
	"flag"
	"fmt"
	"io"

	"go.uber.org/zap"

	"github.com/gatedhq/gated/internal/adapter/mcp"
	"github.com/gatedhq/gated/internal/eventcodec"
	"github.com/gatedhq/gated/internal/gate"
	"github.com/gatedhq/gated/internal/kill/watch"
	"github.com/gatedhq/gated/internal/metrics"
	pgdb "github.com/gatedhq/gated/internal/postgres"
)

// runMCP serves the aana_pre_tool_check tool over stdio, as the AANA
// reference's MCP server does: stdout carries only MCP messages, logs go to
// stderr, and every decision is recorded like one of gated serve's.
func runMCP(ctx context.Context, args []string, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := newFlagSet("mcp", stderr)
	var lf localFlags
	lf.register(fs)
	if err := parseFlags(fs, args, getenv); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageError("mcp takes no arguments, got %q", fs.Args())
	}
	l, err := openLocal(ctx, &lf, stderr)
	if err != nil {
		return err
	}
	defer l.close()
	engine := gate.New(l.opts...)
	// The process was started by the person's own MCP client: like open
	// mode, the event's own principals are all there is.
	server := mcp.NewServer(gatedVersion(), eventcodec.DefaultMaxDepth, func(ctx context.Context, event map[string]any) *gate.Decision {
		return engine.Decide(ctx, gate.Request{Event: event, TrustEventPrincipals: true})
	})
	if err := server.Run(ctx, mcp.Stdio(stdin, stdout, mcpMaxLine)); err != nil && ctx.Err() == nil {
		return fmt.Errorf("mcp: %w", err)
	}
	return nil
}

// localFlags are the flags of the stdio commands (gated mcp, gated
// mcp-proxy) that decide in their own process.
type localFlags struct {
	shadow   bool
	logLevel string
	sources  sourceFlags
	audit    auditFlags
	kill     killFlags
}

func (f *localFlags) register(fs *flag.FlagSet) {
	fs.BoolVar(&f.shadow, "shadow", false, "shadow mode for every call")
	fs.StringVar(&f.logLevel, "log-level", "warn", "log level on stderr: debug, info, warn, error")
	f.sources.register(fs)
	f.audit.register(fs)
	f.kill.register(fs)
}

// local is what the stdio commands (gated mcp, gated mcp-proxy) decide
// with, in their own process: a logger on stderr, the sources kept
// current, metrics, the audit recorder and, with a database, the kill
// switch — every surface on the database obeys its kills.
type local struct {
	log  *zap.Logger
	db   *pgdb.DB // nil without --database-url
	m    *metrics.Metrics
	opts []gate.Option // sources, shadow, audit and metrics
	// close stops the kill switch, drains the audit recorder and flushes
	// the log.
	close func()
}

func openLocal(ctx context.Context, lf *localFlags, stderr io.Writer) (*local, error) {
	sf, af, kf := &lf.sources, &lf.audit, &lf.kill
	log, err := newLogger(stderr, lf.logLevel)
	if err != nil {
		return nil, usageError("%v", err)
	}
	// No tokens here: the kills come from the database alone.
	killOn, err := kf.check(af.databaseURL != "", true)
	if err != nil {
		return nil, err
	}
	src, err := loadSources(sf, log, nil)
	if err != nil {
		return nil, err
	}
	src.Watch(ctx, log)
	m := metrics.New(gatedVersion())
	db, err := openDatabase(ctx, af)
	if err != nil {
		return nil, err
	}
	rec, red, store, err := openAudit(ctx, af, db, log, m)
	if err != nil {
		closeDatabase(db)
		return nil, err
	}
	opts := append(src.Opts, gate.WithShadow(lf.shadow), gate.WithAudit(rec, red, gatedVersion()), gate.WithMetrics(m))
	var ks *watch.Switch
	if killOn {
		ks = watch.Open(ctx, db, kf.config(af.spoolDir), m, log.Named("kill"))
		opts = append(opts, gate.WithKillSwitch(ks.Board()))
	}
	return &local{
		log: log, m: m, opts: opts, db: db,
		close: func() {
			if ks != nil {
				ks.Close()
			}
			if err := rec.Close(context.WithoutCancel(ctx)); err != nil {
				log.Error("audit drain incomplete", zap.Error(err))
			}
			if store != nil {
				store.Close()
			}
			closeDatabase(db)
			_ = log.Sync()
		},
	}, nil
}

// mcpMaxLine bounds one JSON-RPC message on stdin: an event's largest body
// and room for the envelope.
const mcpMaxLine = 1 << 20

// closeDatabase closes db, if there is one.
func closeDatabase(db *pgdb.DB) {
	if db != nil {
		db.Close()
	}
}
