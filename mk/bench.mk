# HTTP ratio harness (bench/cmd/benchhttp, docs/performance.md): the bare-chi
# baseline, gated on defaults, gated's full path with async and sync audit
# against the local PostgreSQL, and an OPA server, driven in alternating
# rounds by one load generator (wrk, Debian's package; .ci/run installs it)
# and reported as ratios to the baseline. `make bench-http` takes a few
# minutes and rewrites the generated section of docs/performance.md; `make
# bench-http-smoke` (in test-e2e, so CI runs it) takes seconds, leaves OPA
# out and checks only that the harness runs and prints its table. OPA is
# pinned here and built into .bin/.

BENCH_BIN := $(CURDIR)/.bin
# The OPA release gated links (go.mod); keep in step so the comparison is
# the same engine.
OPA_VERSION := v1.22.0
OPA := $(BENCH_BIN)/opa-$(OPA_VERSION)
BASELINE := $(BENCH_BIN)/baseline
BENCHHTTP := $(BENCH_BIN)/benchhttp
BENCHHTTP_FLAGS ?=
WRK ?= wrk
BENCHHTTP_TOOLS = -gated $(GATED_BIN) -baseline $(BASELINE) -wrk $(WRK)

.PHONY: bench-http bench-http-smoke bench-http-bins bench-hooks

# Built from outside gated's module: OPA's command pulls in modules (cobra,
# OpenTelemetry exporters…) that gated's go.sum does not list.
$(OPA):
	cd $$(mktemp -d) && GOBIN=$(BENCH_BIN)/tmp-opa $(GO) install github.com/open-policy-agent/opa@$(OPA_VERSION)
	mv $(BENCH_BIN)/tmp-opa/opa $@ && rmdir $(BENCH_BIN)/tmp-opa

bench-http-bins: gated-bin
	$(GO) build -o $(BASELINE) ./bench/cmd/baseline
	$(GO) build -o $(BENCHHTTP) ./bench/cmd/benchhttp

## bench-http: the HTTP ratio harness, full run (a few minutes); rewrites docs/performance.md's table.
bench-http: bench-http-bins $(OPA)
	$(BENCHHTTP) $(BENCHHTTP_TOOLS) -opa $(OPA) -opa-version $(OPA_VERSION) -doc docs/performance.md $(BENCHHTTP_FLAGS)

## bench-http-smoke: the harness for a second per server, without OPA (part of make test-e2e).
bench-http-smoke: bench-http-bins
	$(BENCHHTTP) $(BENCHHTTP_TOOLS) -quick -skip-opa $(BENCHHTTP_FLAGS)
	$(BENCHHTTP) -hooks -quick -gated $(GATED_BIN) -hook-bin $(GATED_HOOK_BIN)

## bench-hooks: each runtime's command hook, spawned, against a curl POST of the same input (a minute); rewrites its table in docs/performance.md.
bench-hooks: gated-bin
	$(GO) build -o $(BENCHHTTP) ./bench/cmd/benchhttp
	$(BENCHHTTP) -hooks -gated $(GATED_BIN) -hook-bin $(GATED_HOOK_BIN) -doc docs/performance.md $(BENCHHTTP_FLAGS)

test-e2e: bench-http-smoke
