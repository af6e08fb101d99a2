# gated — build and test entry points. `make test` is what CI runs.
GO ?= go

.PHONY: test vet unit build run bench fuzz

## test: everything CI checks — vet, then every test with the race detector.
test: vet unit

vet:
	$(GO) vet ./...

unit:
	$(GO) test -race -count=1 ./...

build:
	$(GO) build -o bin/gated ./cmd/gated

run:
	$(GO) run ./cmd/gated serve

bench:
	$(GO) test -run '^$$' -bench . -benchmem ./...
