# The real-client proof (issue 27 §3, test/real-clients/README.md): each
# coding agent's real CLI, pinned by a lockfile under
# test/real-clients/clients/, drives a scripted turn against a loopback
# model server with gated's example hook in the way. Part of make test-e2e.
# Each client is installed once with `npm ci` into
# ~/.cache/gated-real-clients/<name>-<lockfile hash> (override with
# GATED_REAL_CLIENTS_CACHE); GATED_REAL_CLIENTS=claude-code,codex picks
# runtimes. OpenCode's example loads gated's plugin from
# sdk/typescript/dist, and the Claude Agent SDK's guard comes from there too,
# so the TypeScript SDK is built first.
.PHONY: test-real-clients

## test-real-clients: the coding agents' real CLIs against a real gated and a scripted model (part of make test-e2e).
test-real-clients: gated-bin
	cd sdk/typescript && npm ci --no-audit --no-fund --loglevel=error && npm run build
	GATED_BIN=$(GATED_BIN) node --test --test-reporter=spec test/real-clients/run.mjs

test-e2e: test-real-clients
