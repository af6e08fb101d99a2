# Lint gate (CI runs it): modules tidy, code formatted, go vet, and
# staticcheck pinned as a tool dependency in go.mod (go tool staticcheck).
.PHONY: lint

lint:
	@$(GO) mod tidy -diff >/dev/null || { echo "go.mod/go.sum are not tidy: run go mod tidy"; exit 1; }
	@files=$$(gofmt -l $$(git ls-files '*.go')); [ -z "$$files" ] || { echo "gofmt would change: $$files"; exit 1; }
	$(GO) vet ./...
	$(GO) tool staticcheck ./...
	@# The stdio MCP proxy links no HTTP router, database driver or server.
	@deps=$$($(GO) list -deps ./internal/adapter/mcpproxy | grep -E '^github.com/(go-chi/chi|jackc/pgx)|^github.com/gatedhq/gated/internal/(server|.*/postgres)$$'); \
		[ -z "$$deps" ] || { echo "internal/adapter/mcpproxy must not depend on:" $$deps; exit 1; }
	@echo "lint: clean"
