# Integration checks: the Python and TypeScript SDKs run the shared conformance
# vectors (sdk/testdata/vectors.json) against a real `gated serve` built here.
# CI installs what they need itself: python3 (standard library only) and
# npm packages from sdk/typescript/package-lock.json.

GATED_BIN := $(CURDIR)/bin/gated
TEST_EXTRAS += sdk-python sdk-typescript
.PHONY: gated-bin sdk-python sdk-typescript

GATED_HOOK_BIN := $(CURDIR)/bin/gated-hook

## gated-bin: the binaries the SDK, hook and MCP tests start (gated, and the small gated-hook).
gated-bin:
	$(GO) build -o $(GATED_BIN) ./cmd/gated
	$(GO) build -o $(GATED_HOOK_BIN) ./cmd/gated-hook

sdk-python: gated-bin
	GATED_BIN=$(GATED_BIN) python3 -m unittest discover -s sdk/python/tests -t sdk/python

sdk-typescript: gated-bin
	cd sdk/typescript && npm ci --no-audit --no-fund --loglevel=error && npm run build
	cd sdk/typescript && GATED_BIN=$(GATED_BIN) npm test

## mcp-conformance: the official MCP conformance suite, revisions 2026-07-28 and 2025-11-25, against gated's /mcp and gated mcp-proxy (part of make test-e2e).
# In test-e2e, not test: it installs and starts its own npm suite, and make
# test must stay under five minutes from a cold Go module cache. The proxy's
# upstream is the go-sdk's own conformance server, built from the module
# go.mod pins.
test-e2e: mcp-conformance
.PHONY: mcp-conformance
MCP_CONFORMANCE_UPSTREAM := $(CURDIR)/bin/mcp-conformance-server
mcp-conformance: gated-bin
	$(GO) build -o $(MCP_CONFORMANCE_UPSTREAM) github.com/modelcontextprotocol/go-sdk/conformance/everything-server
	cd test/mcp-conformance && npm ci --no-audit --no-fund --loglevel=error
	GATED_BIN=$(GATED_BIN) UPSTREAM_BIN=$(MCP_CONFORMANCE_UPSTREAM) test/mcp-conformance/run.sh

## sdk-typescript-frameworks: the TypeScript SDK's framework guards and OpenCode plugin, driven through the real frameworks (part of make test-e2e).
# In test-e2e, not test: the frameworks (sdk/typescript/test/frameworks,
# their own lockfile) are ~390 MB and take over a minute to install.
# --omit=optional skips the Claude Agent SDK's Claude Code binary, which
# these tests do not start.
test-e2e: sdk-typescript-frameworks
.PHONY: sdk-typescript-frameworks
sdk-typescript-frameworks: gated-bin
	cd sdk/typescript && npm ci --no-audit --no-fund --loglevel=error && npm run build
	cd sdk/typescript/test/frameworks && npm ci --no-audit --no-fund --loglevel=error --omit=optional && npm run typecheck
	cd sdk/typescript/test/frameworks && GATED_BIN=$(GATED_BIN) npm test
