# gated — build and test entry points. `make test` is what CI runs.
GO ?= go

.PHONY: test vet unit build run bench load

# Extra checks (helm, policy tests…) register themselves in mk/*.mk by
# appending to TEST_EXTRAS; included before `test` so its prerequisites see them.
TEST_EXTRAS :=
include $(wildcard mk/*.mk)

## test: everything CI checks — vet, every test with the race detector, extras.
test: vet unit $(TEST_EXTRAS)

vet:
	$(GO) vet ./...

# The tests of what calls gated from outside (client, hooks, MCP) start the
# binary gated-bin builds, rather than each building its own.
unit: gated-bin
	GATED_BIN=$(GATED_BIN) $(GO) test -race -count=1 ./...

build:
	$(GO) build -o bin/gated ./cmd/gated

run:
	$(GO) run ./cmd/gated serve

bench:
	$(GO) test -run '^$$' -bench . -benchmem ./...

## load: drive a local gated with the load harness (see docs/performance.md).
load:
	scripts/load.sh
