# Lint gate (CI runs it): modules tidy, code formatted, go vet,
# staticcheck pinned as a tool dependency in go.mod (go tool staticcheck),
# and the import layers.
.PHONY: lint

lint:
	@$(GO) mod tidy -diff >/dev/null || { echo "go.mod/go.sum are not tidy: run go mod tidy"; exit 1; }
	@files=$$(gofmt -l $$(git ls-files '*.go')); [ -z "$$files" ] || { echo "gofmt would change: $$files"; exit 1; }
	$(GO) vet ./...
	$(GO) tool staticcheck ./...
	@# The import graph is layered (internal/layers holds the stack), the stdio
	@# MCP proxy links no router, database or server, and docs/development.md's
	@# package map names every package.
	$(GO) test -count=1 ./internal/layers/
	@echo "lint: clean"
