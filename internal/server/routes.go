package server

import (
	"net/http"

	"github.com/go-chi/chi/v5"

	"github.com/gatedhq/gated/internal/adapter/hook"
	"github.com/gatedhq/gated/internal/auth"
)

// routes maps gated's whole HTTP surface.
func routes(d *Deps, lim *limiter) http.Handler {
	r := chi.NewRouter()
	r.Use(requestID, recoverer(d.Logger, writeError))
	if d.Metrics != nil {
		r.Use(d.Metrics.HTTP)
		if !d.MetricsElsewhere {
			r.Method(http.MethodGet, "/metrics", d.Metrics.Handler())
		}
	}
	r.NotFound(handleNotFound())
	r.MethodNotAllowed(handleMethodNotAllowed())

	// /health and /ready are the AANA reference's names for the same probes.
	r.Get("/healthz", handleHealthz())
	r.Get("/health", handleHealthz())
	r.Get("/readyz", handleReadyz(d))
	r.Get("/ready", handleReadyz(d))
	r.Get("/openapi.yaml", handleOpenAPI(d.OpenAPI))

	r.Group(func(r chi.Router) {
		r.Use(authenticate(d.Tokens, auth.ScopePreToolCheck, writeError), rateLimit(lim, d, writeError))
		check := handlePreToolCheck(d)
		r.Post("/pre-tool-check", check)
		r.Post("/v1/pre-tool-check", check)
		r.Post("/tool-precheck", check) // the AANA reference clients' path
		r.Post("/validate-tool-precheck", handleValidate(d))
		r.Handle("/mcp", handleMCP(d))
	})
	// Hook calls fail with a 2xx deny, never an error status (see hookDeny).
	claude := hookDeny(hook.ClaudeCode)
	r.Group(func(r chi.Router) {
		r.Use(recoverer(d.Logger, claude), authenticate(d.Tokens, auth.ScopePreToolCheck, claude), rateLimit(lim, d, claude))
		r.Post("/v1/hooks/claude-code", handleHook(d, hook.ClaudeCode))
	})
	r.Group(func(r chi.Router) {
		r.Use(authenticate(d.Tokens, auth.ScopeCatalogRead, writeError), rateLimit(lim, d, writeError))
		r.Get("/v1/catalog", handleDocument(d.Catalog, "no catalog is configured (start gated with --catalog DIR)"))
	})
	r.Group(func(r chi.Router) {
		r.Use(authenticate(d.Tokens, auth.ScopePolicyRead, writeError), rateLimit(lim, d, writeError))
		r.Get("/v1/policy", handleDocument(d.Policy, "no policy is configured (start gated with --policy DIR)"))
	})
	r.Group(func(r chi.Router) {
		r.Use(authenticate(d.Tokens, auth.ScopeDecisionsRead, writeError), rateLimit(lim, d, writeError))
		r.Get("/v1/decisions", handleListDecisions(d.Decisions))
		r.Get("/v1/decisions/{id}", handleGetDecision(d.Decisions))
	})
	return r
}
