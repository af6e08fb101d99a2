package server

import (
	"net/http"

	"github.com/go-chi/chi/v5"

	"github.com/gatedhq/gated/internal/auth"
)

// routes maps gated's whole HTTP surface.
func routes(d *Deps, lim *limiter) http.Handler {
	r := chi.NewRouter()
	r.Use(requestID, recoverer(d.Logger))
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
		r.Use(authenticate(d.Tokens, auth.ScopePreToolCheck), rateLimit(lim, d))
		check := handlePreToolCheck(d)
		r.Post("/pre-tool-check", check)
		r.Post("/v1/pre-tool-check", check)
		r.Post("/tool-precheck", check) // the AANA reference clients' path
		r.Post("/validate-tool-precheck", handleValidate(d))
	})
	r.Group(func(r chi.Router) {
		r.Use(authenticate(d.Tokens, auth.ScopeCatalogRead), rateLimit(lim, d))
		r.Get("/v1/catalog", handleDocument(d.Catalog, "no catalog is configured (start gated with --catalog DIR)"))
	})
	r.Group(func(r chi.Router) {
		r.Use(authenticate(d.Tokens, auth.ScopePolicyRead), rateLimit(lim, d))
		r.Get("/v1/policy", handleDocument(d.Policy, "no policy is configured (start gated with --policy DIR)"))
	})
	r.Group(func(r chi.Router) {
		r.Use(authenticate(d.Tokens, auth.ScopeDecisionsRead), rateLimit(lim, d))
		r.Get("/v1/decisions", handleListDecisions(d.Decisions))
		r.Get("/v1/decisions/{id}", handleGetDecision(d.Decisions))
	})
	return r
}
