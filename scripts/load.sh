#!/usr/bin/env bash
# Load harness: builds gated, starts it on its embedded defaults (plus any
# extra serve flags given as arguments), drives POST $TARGET (default
# /pre-tool-check) with hey from a second process over loopback, prints hey's
# report, and stops gated.
#
#   scripts/load.sh                                   # contract gate only, file audit sink
#   scripts/load.sh --catalog examples/catalog --policy examples/policy
#   DURATION=30s CONCURRENCY=64 EVENT=examples/events/send_email_ask.json scripts/load.sh
#   TARGET=/v1/hooks/claude-code EVENT=examples/claude-code/hook-read.json scripts/load.sh --catalog examples/claude-code/catalog
set -euo pipefail
cd "$(dirname "$0")/.."

DURATION=${DURATION:-10s}
CONCURRENCY=${CONCURRENCY:-32}
EVENT=${EVENT:-examples/events/send_refund_accept.json}
TARGET=${TARGET:-/pre-tool-check}
ADDR=${ADDR:-127.0.0.1:18080}
HEY_VERSION=v0.1.4
BIN=.bin

mkdir -p "$BIN"
[ -x "$BIN/hey" ] || GOBIN="$PWD/$BIN" go install "github.com/rakyll/hey@$HEY_VERSION"
go build -o "$BIN/gated" ./cmd/gated

if curl -fsS "http://$ADDR/healthz" >/dev/null 2>&1; then
	echo "load.sh: something already answers on $ADDR; stop it or set ADDR" >&2
	exit 1
fi
work=$(mktemp -d)
"$BIN/gated" serve --addr "$ADDR" --log-level warn \
	--audit-file "$work/audit.jsonl" --spool-dir "$work/spool" "$@" 2>"$work/gated.log" &
pid=$!
# Under set -e a failing command in the trap would end it early (exit 1, the
# temporary directory left behind): each step may fail.
trap 'kill $pid 2>/dev/null || true; wait $pid 2>/dev/null || true; rm -rf "$work"' EXIT
for _ in $(seq 100); do
	curl -fsS "http://$ADDR/healthz" >/dev/null 2>&1 && break
	sleep 0.1
done

"$BIN/hey" -z "$DURATION" -c "$CONCURRENCY" -m POST -T application/json -D "$EVENT" \
	"http://$ADDR$TARGET"
kill -TERM $pid && wait $pid || true # graceful stop drains the audit queue
echo "audit records written: $(wc -l <"$work/audit.jsonl")"
