# gated — build and test entry points. `make test` is what CI runs.
GO ?= go

.PHONY: test unit short build run bench help

# Extra checks (helm, policy tests…) register themselves in mk/*.mk by
# appending to TEST_EXTRAS; included before `test` so its prerequisites see them.
TEST_EXTRAS :=
include $(wildcard mk/*.mk)

## test: the README's test command — every Go test and the SDK suites, in under 5
## minutes from cold caches on 2 cores (go vet runs in make lint, so the tests skip it;
## the race detector doubles the compile and run time, so it runs in test-e2e).
## CI also runs lint (go vet, staticcheck…), test-e2e (test-race, the chart, the console in a browser) and fuzz-short.
test: unit $(TEST_EXTRAS)

# The tests of what calls gated from outside (client, hooks, MCP) start the
# binary gated-bin builds, rather than each building its own. Test binaries
# are linked without DWARF (-w): no test reads it, stack traces do not need
# it, and it is about a third of each of the ~55 test links.
TEST_LDFLAGS := -ldflags=-w
unit: gated-bin
	GATED_BIN=$(GATED_BIN) GATED_HOOK_BIN=$(GATED_HOOK_BIN) $(GO) test $(TEST_LDFLAGS) -vet=off -count=1 ./...

## test-race: every Go test again under the race detector (part of test-e2e).
.PHONY: test-race
test-e2e: test-race
test-race: gated-bin
	GATED_BIN=$(GATED_BIN) GATED_HOOK_BIN=$(GATED_HOOK_BIN) $(GO) test $(TEST_LDFLAGS) -race -vet=off -count=1 ./...

## short: the fast loop while working — every Go test once, without the race
## detector, the SDK suites or the chart (about 40 s warm on 2 cores).
short: unit

## build: bin/gated, stamped with the version and commit git describes, and bin/gated-hook, the small command hook.
build:
	$(GO) build -ldflags "-X main.version=$$(git describe --tags --always --dirty 2>/dev/null || echo dev)" -o bin/gated ./cmd/gated
	$(GO) build -o bin/gated-hook ./cmd/gated-hook

## help: the targets and what each does.
help:
	@grep -h '^## ' $(MAKEFILE_LIST) | sed 's/^## /  /'


run:
	$(GO) run ./cmd/gated serve

bench:
	$(GO) test -run '^$$' -bench . -benchmem ./...

# The HTTP ratio harness (make bench-http, make bench-http-smoke) is in mk/bench.mk.
