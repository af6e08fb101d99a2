package main

import (
	"context"
	"fmt"
	"io"
	"runtime/debug"
)

// version is set at build time with -ldflags "-X main.version=…"; otherwise
// the module version from the build info is used.
var version = ""

// Exit codes: 0 ok (for check: the tool may execute), 1 failure, 2 usage
// error, 3 (check) the tool may not execute, (replay) a decision widened.
const (
	exitUsage   = 2
	exitBlocked = 3
)

// exitError asks main to exit with code after printing msg (if any).
type exitError struct {
	code int
	msg  string
}

func (e exitError) Error() string { return fmt.Sprintf("exit %d: %s", e.code, e.msg) }

func usageError(format string, args ...any) error {
	return exitError{code: exitUsage, msg: fmt.Sprintf(format, args...)}
}

const usage = `usage: gated <command> [flags]

commands:
  serve     run the decision service (gated serve --help for flags)
  check     decide one event from FILE or stdin; exit 0 when the tool may execute, 3 when not
  hook RUNTIME [--url URL] [--token-env NAME] [--catalog DIR] [--policy DIR]
            answer one pre-tool command hook from stdin in RUNTIME's format (claude-code, codex,
            copilot-cli, gemini-cli, qwen-code, cursor, cline, goose, windsurf, kiro-cli, droid,
            amp); any failure blocks. With --url, gated-hook RUNTIME --url URL does the same and
            starts faster
  doctor RUNTIME [--dir DIR] [--no-canary] [--audit-token-env NAME] [--json]
            is the agent asking gated? read RUNTIME's hook configuration (any runtime hook
            answers, and opencode's plugin), run a canary call through the hook and find it in
            gated's audit; exit 1 on any problem
  mcp       serve the aana_pre_tool_check MCP tool over stdio (flags as serve: --catalog, --policy, audit)
  mcp-proxy --upstream-cmd PROGRAM [flags] [-- ARG...] | --upstream-url URL [flags]
            serve an upstream MCP server's tools (stdio, or HTTP with --http-addr), checking every tools/call first
  catalog lint DIR...
            validate catalog directories; exit 1 on any problem
  bundle revision|sign [--key PRIVATE.pem] MANIFEST
            print the revision an AIP-26 bundle manifest composes to, or sign it into MANIFEST.sig
  policy diff [--policy PATH] [--format text|markdown|json] OLD NEW
            what changed between two policies (directories, manifests or git revisions) and which
            test-case decisions change, widenings first; exit 3 when anything widens
  policy lint|compile|test [--catalog DIR]... DIR...
            check POLICY.md files, print the Rego they compile to, or run their *_test.yaml cases
            (test --coverage [--coverage-json FILE] [--coverage-min PERCENT]: what no case exercised)
  replay --database-url URL | --audit-file FILE --since T [--until T] --catalog DIR --policy DIR
            decide recorded decisions again with another catalog and policy and report what
            changes (--format text, json or markdown); exit 3 when one widens
  migrate up|down|status --database-url URL
            apply, roll back or list the audit store's migrations
  audit verify|receipt|verify-receipt|public-key [flags]
            check the audit trail's hash chains and signed checkpoints (exit 1 at the first record
            deleted, modified, reordered or inserted), export one decision's receipt, check a
            receipt offline with the public key alone, print the signing key's public half
  version   print the version

Every flag can also be set from the environment as GATED_<FLAG>, for
example GATED_ADDR=0.0.0.0:8080 for --addr.`

// run is gated's whole program; tests call it directly.
func run(ctx context.Context, args []string, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) error {
	if len(args) < 2 {
		return usageError("%s", usage)
	}
	cmd, rest := args[1], args[2:]
	switch cmd {
	case "serve":
		return runServe(ctx, rest, getenv, stderr)
	case "check":
		return runCheck(ctx, rest, getenv, stdin, stdout, stderr)
	case "mcp":
		return runMCP(ctx, rest, getenv, stdin, stdout, stderr)
	case "mcp-proxy":
		return runMCPProxy(ctx, rest, getenv, stdin, stdout, stderr)
	case "hook":
		return runHook(ctx, rest, getenv, stdin, stdout, stderr)
	case "doctor":
		return runDoctor(ctx, rest, getenv, stdout, stderr)
	case "catalog":
		return runCatalog(rest, getenv, stdout, stderr)
	case "bundle":
		return runBundle(rest, getenv, stdout, stderr)
	case "policy":
		return runPolicy(ctx, rest, getenv, stdout, stderr)
	case "replay":
		return runReplay(ctx, rest, getenv, stdout, stderr)
	case "migrate":
		return runMigrate(ctx, rest, getenv, stdout, stderr)
	case "audit":
		return runAudit(ctx, rest, getenv, stdin, stdout, stderr)
	case "version", "--version":
		fmt.Fprintln(stdout, "gated", gatedVersion())
		return nil
	case "help", "-h", "--help":
		fmt.Fprintln(stdout, usage)
		return nil
	}
	return usageError("unknown command %q\n%s", cmd, usage)
}

func gatedVersion() string {
	if version != "" {
		return version
	}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "dev"
	}
	if bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	// A build from a checkout: name the commit it was built from.
	rev, dirty := "", false
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	switch {
	case rev == "":
		return "dev"
	case dirty:
		return "dev+" + rev + "-dirty"
	}
	return "dev+" + rev
}
