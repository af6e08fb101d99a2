package server

import (
	"net/http"
	"time"

	"github.com/go-chi/chi/v5/middleware"
	"go.uber.org/zap"

	"github.com/gatedhq/gated/internal/gate"
)

// handlePreToolCheck decides one Agent Action Contract v1 event.
func handlePreToolCheck(d *Deps) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		doc, berr := decodeEvent(w, r, d.MaxBodyBytes, d.MaxDepth)
		if berr != nil {
			writeError(w, berr.status, berr.msg)
			return
		}
		req := gate.Request{
			Event:     doc,
			Shadow:    r.URL.Query().Get("shadow_mode") == "true",
			RequestID: middleware.GetReqID(r.Context()),
			ClientIP:  clientIP(r, d.TrustedProxies),
			// Open mode has no token to vouch for anyone, so the event's own
			// principals are all there is (see docs/policy.md).
			TrustEventPrincipals: d.Tokens == nil,
		}
		if t := tokenFrom(r.Context()); t != nil {
			req.TokenName, req.Principals, req.TrustEventPrincipals = t.Name, t.Principals, t.TrustEventPrincipals
		}
		dec := d.Engine.Decide(r.Context(), req)
		if ce := d.Logger.Check(zap.DebugLevel, "decision"); ce != nil {
			// Names and codes only: never arguments or evidence text.
			ce.Write(zap.String("decision_id", dec.DecisionID), zap.String("request_id", req.RequestID),
				zap.String("token", req.TokenName), zap.String("tool_category", dec.ToolCategory),
				zap.Stringer("route", dec.Route), zap.Bool("execute", dec.Execute), zap.Bool("shadow", dec.Shadow),
				zap.Strings("hard_blockers", dec.HardBlockers), zap.Duration("took", time.Since(start)))
		}
		writeJSON(w, http.StatusOK, dec)
	}
}

// handleDocument serves what doc returns, or 404 with missing when gated
// runs without that part.
func handleDocument(doc func() any, missing string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if doc == nil {
			writeError(w, http.StatusNotFound, missing)
			return
		}
		writeJSON(w, http.StatusOK, doc())
	}
}

func handleHealthz() http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
	}
}

// handleReadyz answers 200 only when gated can decide now.
func handleReadyz(d *Deps) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if err := d.Ready(r.Context()); err != nil {
			writeJSON(w, http.StatusServiceUnavailable, map[string]string{"status": "not_ready", "error": err.Error()})
			return
		}
		writeJSON(w, http.StatusOK, map[string]string{"status": "ready"})
	}
}

func handleOpenAPI(doc []byte) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/yaml")
		_, _ = w.Write(doc)
	}
}

func handleNotFound() http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, "not found")
	}
}

func handleMethodNotAllowed() http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusMethodNotAllowed, "method not allowed")
	}
}
