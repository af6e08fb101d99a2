package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"os/exec"
	"regexp"
	"slices"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/zap"

	"github.com/gatedhq/gated/internal/adapter/mcp"
	"github.com/gatedhq/gated/internal/adapter/mcpproxy"
	"github.com/gatedhq/gated/internal/gate"
)

// runMCPProxy serves an upstream MCP server's tools to the MCP client on
// stdio (or streamable HTTP), checking every tools/call in-process as gated mcp decides, and
// recording each decision like one of gated serve's.
func runMCPProxy(ctx context.Context, args []string, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := newFlagSet("mcp-proxy", stderr)
	upstreamCmd := fs.String("upstream-cmd", "", "program of the upstream MCP server, run with the arguments after the flags, spoken to over stdio")
	upstreamURL := fs.String("upstream-url", "", "URL of the upstream MCP server's streamable HTTP endpoint (instead of --upstream-cmd)")
	// Not --addr: GATED_ADDR configures gated serve, and must not turn a
	// stdio proxy into an HTTP one.
	addr := fs.String("http-addr", "", "serve the MCP client over streamable HTTP at http://ADDR/mcp (a loopback address) instead of stdio")
	serverName := fs.String("server-name", "", "the upstream's name in tool names (mcp__<name>__<tool>); default: the name the upstream reports")
	toolPrefix := fs.String("tool-prefix", "", "prefix of the upstream's tool names in events, instead of mcp__<server-name>__")
	var trusted listFlag
	fs.Var(&trusted, "trust-annotations", "let this upstream's (by its server name) tool annotations set the category of tools no catalog describes (repeatable)")
	hideRefused := fs.Bool("hide-refused", false, "leave out of tools/list the tools every call of which is refused (never-executing tools; uncatalogued ones under --unknown-tools refuse)")
	maxResult := fs.Int("max-result-bytes", mcpproxy.DefaultMaxResultBytes, "the largest tool result, encoded, passed on to the client; a larger one becomes a tool error")
	elicitation := fs.String("upstream-elicitation", "mark", "the upstream's elicitation requests: mark (passed on, the message saying the upstream asks, not gated) or refuse")
	var lf localFlags
	lf.register(fs)
	requester := fs.String("requester", "", "with --database-url, the requester of the approvals the proxy opens, as gated serve's approvers see it; default mcp-proxy:<server-name>")
	var apf approvalFlags
	apf.register(fs)
	if err := parseFlags(fs, args, getenv); err != nil {
		return err
	}
	// The proxy has no tokens: its requester is the configured identity,
	// so a database is all approvals need.
	approvalsOn, err := apf.check(lf.audit.databaseURL != "", true)
	if err != nil {
		return err
	}
	if *requester != "" && !approvalsOn {
		return usageError("--requester names who opens approvals, and approvals need --database-url (and --approvals auto)")
	}
	switch {
	case (*upstreamCmd == "") == (*upstreamURL == ""):
		return usageError("mcp-proxy needs one upstream: --upstream-cmd PROGRAM [-- ARG...] or --upstream-url URL")
	case *upstreamURL != "" && fs.NArg() > 0:
		return usageError("arguments are for --upstream-cmd, and --upstream-url takes none: %q", fs.Args())
	}
	if *maxResult <= 0 {
		return usageError("--max-result-bytes must be positive, got %d", *maxResult)
	}
	if *elicitation != "mark" && *elicitation != "refuse" {
		return usageError("--upstream-elicitation must be mark or refuse, got %q", *elicitation)
	}
	if *addr != "" {
		if err := checkLoopback(*addr); err != nil {
			return usageError("--http-addr: %v", err)
		}
	}
	l, err := openLocal(ctx, &lf, stderr)
	if err != nil {
		return err
	}
	defer l.close()
	log, m, opts := l.log, l.m, l.opts
	if approvalsOn {
		a, err := openApprovals(ctx, &apf, l.db, lf.audit.retention, m, log.Named("approvals"))
		if err != nil {
			return err
		}
		defer func() {
			// After the proxy has stopped, before the audit drain.
			dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
			defer cancel()
			a.Close(dctx)
		}()
		opts = append(opts, gate.WithApprovals(a, apf.publicBase()))
	}
	engine := gate.New(opts...)

	down := mcpproxy.NewDownstream()
	down.RefuseElicitation = *elicitation == "refuse"
	up, err := connectUpstream(ctx, down.Client(&sdk.Implementation{Name: "gated-mcp-proxy", Version: gatedVersion()}),
		*upstreamCmd, fs.Args(), *upstreamURL, stderr)
	if err != nil {
		return err
	}
	defer func() { _ = up.Close() }()
	name := *serverName
	if r := up.InitializeResult(); name == "" && r != nil && r.ServerInfo != nil {
		name = unsafeNameChars.ReplaceAllString(r.ServerInfo.Name, "_")
	}
	if name == "" && *toolPrefix == "" {
		return usageError("the upstream reports no server name: give --server-name or --tool-prefix")
	}
	prefix := *toolPrefix
	if prefix == "" {
		prefix = "mcp__" + name + "__"
	}
	who := *requester
	switch {
	case !approvalsOn:
		// Without approvals the proxy is no token, as before.
		who = ""
	case who == "" && name != "":
		who = "mcp-proxy:" + name
	case who == "":
		who = "mcp-proxy"
	}
	// As under gated mcp, the person's own MCP client started the process:
	// the event's own principals are all there is.
	server := mcpproxy.New(mcpproxy.Config{
		Upstream: up, Downstream: down, ToolPrefix: prefix, Category: engine.Category, Version: gatedVersion(), Log: log,
		TrustAnnotations: slices.Contains(trusted, name),
		HideRefused:      *hideRefused, AlwaysRefused: engine.AlwaysRefused, MaxResultBytes: *maxResult, Stopped: engine.Stopped,
		Decide: func(ctx context.Context, req gate.Request) *gate.Decision {
			req.TrustEventPrincipals = true
			req.TokenName = who
			return engine.Decide(ctx, req)
		},
	})
	if *addr != "" {
		return serveMCPProxy(ctx, *addr, server, up, log)
	}
	if err := server.Run(ctx, mcp.Stdio(stdin, stdout, mcpMaxLine)); err != nil && ctx.Err() == nil {
		return fmt.Errorf("mcp-proxy: %w", err)
	}
	return nil
}

// connectUpstream starts the upstream command, or connects to its URL, and
// initializes the MCP session: an upstream that does not answer as an MCP
// server stops the proxy before the client sees any tool.
func connectUpstream(ctx context.Context, client *sdk.Client, program string, args []string, url string, stderr io.Writer) (*sdk.ClientSession, error) {
	if url != "" {
		up, err := client.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: url}, nil)
		if err != nil {
			return nil, fmt.Errorf("mcp-proxy: the upstream at %s did not answer as an MCP server: %w", url, err)
		}
		return up, nil
	}
	// The upstream's stderr is its log: it joins gated's.
	cmd := exec.Command(program, args...)
	cmd.Stderr = stderr
	up, err := client.Connect(ctx, &sdk.CommandTransport{Command: cmd}, nil)
	if err != nil {
		return nil, fmt.Errorf("mcp-proxy: the upstream %s did not start as an MCP server: %w", program, err)
	}
	return up, nil
}

// serveMCPProxy serves the proxy at /mcp over streamable HTTP until ctx
// ends: stateful sessions before protocol 2026-07-28, so the proxy can ask
// the client (server to client requests need a session), stateless from
// it (mcpproxy.Handler). There is no token: the address must be
// loopback, where only the person's own processes reach it.
func serveMCPProxy(ctx context.Context, addr string, server *sdk.Server, up *sdk.ClientSession, log *zap.Logger) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("mcp-proxy: listen: %w", err)
	}
	mux := http.NewServeMux()
	mux.Handle("/mcp", mcpproxy.Handler(server, up, mcpMaxLine))
	// No write timeout: a session's event stream stays open.
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second, MaxHeaderBytes: 64 << 10}
	log.Info("gated listening", zap.String("addr", ln.Addr().String()))
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return fmt.Errorf("mcp-proxy: %w", err)
	case <-ctx.Done():
	}
	shutdown, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdown); err != nil {
		return errors.Join(fmt.Errorf("mcp-proxy: shutdown: %w", err), srv.Close())
	}
	return nil
}

// checkLoopback accepts host:port with a loopback IP or localhost.
func checkLoopback(addr string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return err
	}
	if host == "localhost" {
		return nil
	}
	if ip, err := netip.ParseAddr(host); err == nil && ip.IsLoopback() {
		return nil
	}
	return fmt.Errorf("%q is not a loopback address: the proxy has no token, so it listens only where the person's own processes reach it", addr)
}

// unsafeNameChars are replaced in a server name as Claude Code does when it
// names MCP tools, so the catalog's mcp__<server>__<tool> aliases match.
var unsafeNameChars = regexp.MustCompile(`[^A-Za-z0-9_-]`)
