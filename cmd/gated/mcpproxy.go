package main

import (
	"context"
	"fmt"
	"io"
	"os/exec"
	"regexp"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/zap"

	"github.com/gatedhq/gated/internal/adapter/mcpproxy"
	"github.com/gatedhq/gated/internal/gate"
	"github.com/gatedhq/gated/internal/metrics"
)

// runMCPProxy serves an upstream MCP server's tools to the MCP client on
// stdio, checking every tools/call in-process as gated mcp decides, and
// recording each decision like one of gated serve's.
func runMCPProxy(ctx context.Context, args []string, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := newFlagSet("mcp-proxy", stderr)
	upstreamCmd := fs.String("upstream-cmd", "", "program of the upstream MCP server, run with the arguments after the flags, spoken to over stdio")
	serverName := fs.String("server-name", "", "the upstream's name in tool names (mcp__<name>__<tool>); default: the name the upstream reports")
	toolPrefix := fs.String("tool-prefix", "", "prefix of the upstream's tool names in events, instead of mcp__<server-name>__")
	shadow := fs.Bool("shadow", false, "shadow mode for every call")
	logLevel := fs.String("log-level", "warn", "log level on stderr: debug, info, warn, error")
	var sf sourceFlags
	sf.register(fs)
	var af auditFlags
	af.register(fs)
	if err := parseFlags(fs, args, getenv); err != nil {
		return err
	}
	if *upstreamCmd == "" {
		return usageError("mcp-proxy needs --upstream-cmd PROGRAM [-- ARG...]")
	}
	log, err := newLogger(stderr, *logLevel)
	if err != nil {
		return usageError("%v", err)
	}
	defer func() { _ = log.Sync() }()
	src, err := loadSources(&sf, log)
	if err != nil {
		return err
	}
	src.Watch(ctx, log)
	m := metrics.New(gatedVersion())
	rec, red, store, err := openAudit(ctx, &af, log, m, stderr)
	if err != nil {
		return err
	}
	defer func() {
		if err := rec.Close(context.WithoutCancel(ctx)); err != nil {
			log.Error("audit drain incomplete", zap.Error(err))
		}
		if store != nil {
			store.Close()
		}
	}()
	engine := gate.New(append(src.Opts, gate.WithShadow(*shadow), gate.WithAudit(rec, red, gatedVersion()), gate.WithMetrics(m))...)

	// The upstream's stderr is its log: it joins gated's.
	cmd := exec.Command(*upstreamCmd, fs.Args()...)
	cmd.Stderr = stderr
	client := sdk.NewClient(&sdk.Implementation{Name: "gated-mcp-proxy", Version: gatedVersion()}, nil)
	up, err := client.Connect(ctx, &sdk.CommandTransport{Command: cmd}, nil)
	if err != nil {
		return fmt.Errorf("mcp-proxy: the upstream %s did not start as an MCP server: %w", *upstreamCmd, err)
	}
	defer func() { _ = up.Close() }()
	prefix := *toolPrefix
	if prefix == "" {
		name := *serverName
		if name == "" {
			name = up.InitializeResult().ServerInfo.Name
		}
		prefix = "mcp__" + unsafeNameChars.ReplaceAllString(name, "_") + "__"
	}
	// As under gated mcp, the person's own MCP client started the process:
	// the event's own principals are all there is.
	server := mcpproxy.New(mcpproxy.Config{
		Upstream: up, ToolPrefix: prefix, Category: engine.Category, Version: gatedVersion(), Log: log,
		Decide: func(ctx context.Context, event map[string]any) *gate.Decision {
			return engine.Decide(ctx, gate.Request{Event: event, TrustEventPrincipals: true})
		},
	})
	if err := server.Run(ctx, &sdk.IOTransport{Reader: io.NopCloser(stdin), Writer: nopWriteCloser{stdout}, MaxLineLength: mcpMaxLine}); err != nil && ctx.Err() == nil {
		return fmt.Errorf("mcp-proxy: %w", err)
	}
	return nil
}

// unsafeNameChars are replaced in a server name as Claude Code does when it
// names MCP tools, so the catalog's mcp__<server>__<tool> aliases match.
var unsafeNameChars = regexp.MustCompile(`[^A-Za-z0-9_-]`)
