package server

import (
	"context"
	"net/http"

	"github.com/go-chi/chi/v5"

	"github.com/gatedhq/gated/internal/adapter/hook"
	"github.com/gatedhq/gated/internal/auth"
	"github.com/gatedhq/gated/internal/metrics"
)

// routes maps gated's whole HTTP surface.
func routes(d *Deps, lim, failures *limiter) http.Handler {
	r := chi.NewRouter()
	if d.Tracing != nil {
		r.Use(traced(d.Tracing))
	}
	r.Use(requestID, recoverer(d.Logger, writeError))
	if d.Metrics != nil {
		// Installed with Use on the router, not around it: the route
		// pattern lives in chi's routing context, which only exists inside.
		r.Use(d.Metrics.HTTP(routePattern))
	}
	r.NotFound(handleNotFound())
	r.MethodNotAllowed(handleMethodNotAllowed(r))

	// Every group first checks Host and Origin (DNS rebinding, cross-site
	// pages), then the token and its scope, then the rate limit; fail
	// answers whatever they stop.
	guard := func(r chi.Router, scope string, fail failWriter) {
		r.Use(hostGuard(d.Hosts, fail))
		if scope != "" {
			r.Use(authenticate(d, failures, scope, fail), rateLimit(lim, d, fail))
		}
	}
	r.Group(func(r chi.Router) {
		guard(r, "", writeError)
		// /health and /ready are the AANA reference's names for the same probes.
		r.Get("/healthz", handleHealthz())
		r.Get("/health", handleHealthz())
		r.Get("/readyz", handleReadyz(d))
		r.Get("/ready", handleReadyz(d))
		r.Get("/openapi.yaml", handleOpenAPI(d.OpenAPI))
		// AuthZEN PDP metadata is public, as the specification means it.
		r.With(echoRequestID).Get(authzenDiscovery, handleAuthZENDiscovery(d))
		if p := discoverySuffix(d.PublicURL); p != "" {
			r.With(echoRequestID).Get(authzenDiscovery+p, handleAuthZENDiscovery(d))
		}
	})
	if d.Metrics != nil && !d.MetricsElsewhere {
		// With tokens, metrics need a token of their own: they name the
		// tools, routes and blockers of every caller. --metrics-addr serves
		// them unauthenticated on a listener of their own instead.
		r.Group(func(r chi.Router) {
			guard(r, auth.ScopeMetrics, writeError)
			r.Method(http.MethodGet, "/metrics", d.Metrics.Handler())
		})
	}
	r.Group(func(r chi.Router) {
		guard(r, auth.ScopePreToolCheck, writeError)
		check := handlePreToolCheck(d)
		r.Post("/pre-tool-check", check)
		r.Post("/v1/pre-tool-check", check)
		r.Post("/tool-precheck", check) // the AANA reference clients' path
		r.Post("/validate-tool-precheck", handleValidate(d))
		r.Post("/v1/action-check", handleActionCheck(d))
		r.Handle("/mcp", handleMCP(d, lim))
	})
	// The AuthZEN Authorization API: the same scope and decision path as
	// /pre-tool-check. The PEP's X-Request-ID is echoed on every answer,
	// a refusal by the guard included.
	r.Group(func(r chi.Router) {
		r.Use(echoRequestID)
		guard(r, auth.ScopePreToolCheck, writeError)
		r.Post(authzenEvaluation, handleAuthZENEvaluation(d))
		r.Post(authzenEvaluations, handleAuthZENEvaluations(d, lim))
	})
	// Hook calls fail with a 2xx deny, never an error status (see hookDeny).
	for _, rt := range hook.Runtimes {
		deny := hookDeny(rt)
		r.Group(func(r chi.Router) {
			r.Use(recoverer(d.Logger, deny))
			guard(r, auth.ScopePreToolCheck, deny)
			r.Post("/v1/hooks/"+rt.ID, handleHook(d, rt))
		})
	}
	r.Group(func(r chi.Router) {
		guard(r, auth.ScopeCatalogRead, writeError)
		r.Get("/v1/catalog", handleDocument(d.Catalog, "no catalog is configured (start gated with --catalog DIR)"))
	})
	r.Group(func(r chi.Router) {
		guard(r, auth.ScopePolicyRead, writeError)
		r.Get("/v1/policy", handleDocument(d.Policy, "no policy is configured (start gated with --policy DIR)"))
	})
	r.Group(func(r chi.Router) {
		guard(r, auth.ScopeDecisionsRead, writeError)
		r.Get("/v1/decisions", handleListDecisions(d.Decisions))
		r.Get("/v1/decisions/{id}", handleGetDecision(d.Decisions, d.Candidates))
		r.Get("/v1/candidate", handleCandidate(d))
	})
	// The runtime that asked reports what happened: the scope it asked
	// with, and the handler holds it to the token on the decision.
	r.Group(func(r chi.Router) {
		guard(r, auth.ScopePreToolCheck, writeError)
		r.Post("/v1/decisions/{id}/outcome", handleRecordOutcome(d))
	})
	// Approvals: the approver and the requester are tokens, so without
	// tokens every route answers 403. Every state change is a POST with a
	// JSON body, behind the Host/Origin guard.
	r.Group(func(r chi.Router) {
		r.Use(hostGuard(d.Hosts, writeError), needTokens(d))
		r.Group(func(r chi.Router) {
			r.Use(authenticate(d, failures, auth.ScopeApprove, writeError), rateLimit(lim, d, writeError), approvalsOn(d))
			r.Get("/v1/approvals", handleListApprovals(d))
			r.Get("/v1/approvals/events", handleApprovalEvents(d))
			r.Get("/v1/approvals/{id}/arguments", handleApprovalArguments(d))
			r.Post("/v1/approvals/{id}/approve", handleDecideApproval(d, true))
			r.Post("/v1/approvals/{id}/deny", handleDecideApproval(d, false))
		})
		r.Group(func(r chi.Router) {
			// Scope approve, or the token that asked: the handler checks.
			r.Use(authenticate(d, failures, anyScope, writeError), rateLimit(lim, d, writeError), approvalsOn(d))
			r.Get("/v1/approvals/{id}", handleGetApproval(d))
		})
	})
	// The kill switch: every change is recorded with its token, so
	// without tokens (or without the database that holds the list) its
	// routes answer why not.
	r.Group(func(r chi.Router) {
		r.Use(hostGuard(d.Hosts, writeError), authenticate(d, failures, auth.ScopeAdmin, writeError),
			rateLimit(lim, d, writeError), killOn(d))
		r.Get("/v1/kill", handleListKills(d))
		r.Post("/v1/kill", handleSetKill(d))
		r.Delete("/v1/kill/{id}", handleLiftKill(d))
	})
	if d.Console != nil {
		r.With(hostGuard(d.Hosts, writeError)).Handle("/ui*", d.Console)
	}
	return r
}

// routePattern is the metrics label of a request: its route pattern
// ("/v1/decisions/{id}"), never the raw path. It is read after the handler
// ran, when chi has matched the whole pattern (sub-routers included).
func routePattern(ctx context.Context) string {
	if rc := chi.RouteContext(ctx); rc != nil {
		if p := rc.RoutePattern(); p != "" {
			return p
		}
	}
	return metrics.Unmatched
}
