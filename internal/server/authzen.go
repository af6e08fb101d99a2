package server

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/gatedhq/gated/internal/authzen"
)

// The AuthZEN Authorization API 1.0 default paths (section 11.1.1).
const (
	authzenEvaluation  = "/access/v1/evaluation"
	authzenEvaluations = "/access/v1/evaluations"
	authzenDiscovery   = "/.well-known/authzen-configuration"
)

// echoRequestID answers with the X-Request-ID the PEP sent, as it sent it:
// AuthZEN requires the same identifier back (section 11.1.4). The request's
// own id in gated (logs, audit, traces) stays the one requestID chose, which
// replaces an id that is not plain or looks like a secret; the caller's
// header goes back to the caller only.
func echoRequestID(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if id := r.Header.Get("X-Request-ID"); id != "" {
			w.Header().Set("X-Request-ID", id)
		}
		next.ServeHTTP(w, r)
	})
}

// decodeAuthZEN reads an AuthZEN request body as every event body is read
// (size, UTF-8, nesting, one object, no repeated key). AuthZEN answers a
// body it will not read with 400, a wrong content type included (the
// certification scenario's 2.4.3), where gated's own routes answer 415.
func decodeAuthZEN(w http.ResponseWriter, r *http.Request, d *Deps) (map[string]any, *bodyError) {
	doc, berr := decodeEvent(w, r, d.MaxBodyBytes, d.MaxDepth)
	if berr != nil && berr.status == http.StatusUnsupportedMediaType {
		berr.status = http.StatusBadRequest
	}
	return doc, berr
}

// handleAuthZENEvaluation decides one Access Evaluation request.
func handleAuthZENEvaluation(d *Deps) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		doc, berr := decodeAuthZEN(w, r, d)
		if berr != nil {
			writeError(w, berr.status, berr.msg)
			return
		}
		e, err := authzen.ParseEvaluation(doc)
		if err != nil {
			writeError(w, http.StatusBadRequest, err.Error())
			return
		}
		res, err := decideAuthZEN(d, r, e)
		if err != nil {
			writeError(w, http.StatusBadRequest, err.Error())
			return
		}
		writeJSON(w, http.StatusOK, res)
	}
}

// handleAuthZENEvaluations decides an Access Evaluations request: without
// evaluations as one Access Evaluation, else each in order, an evaluation
// that cannot be decided answering false in its place. A batch counts as
// its number of evaluations against the caller's rate limit lim: the
// middleware took one, the rest are taken before anything is decided, and
// a batch over the limit is refused whole: 429 when it must wait, 413 when
// it is larger than the limit ever admits.
func handleAuthZENEvaluations(d *Deps, lim *limiter) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		doc, berr := decodeAuthZEN(w, r, d)
		if berr != nil {
			writeError(w, berr.status, berr.msg)
			return
		}
		b, err := authzen.ParseEvaluations(doc)
		if err != nil {
			writeError(w, http.StatusBadRequest, err.Error())
			return
		}
		if b.Single {
			res, err := decideAuthZEN(d, r, b.Items[0].Evaluation)
			if err != nil {
				writeError(w, http.StatusBadRequest, err.Error())
				return
			}
			writeJSON(w, http.StatusOK, res)
			return
		}
		if n := len(b.Items); lim != nil && n > lim.capacity() {
			// No wait makes room for more than a full bucket, so this is no
			// 429: a PEP honouring Retry-After would send it forever.
			writeError(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("a batch of %d evaluations can never be admitted under the rate limit of %d requests per minute: a batch may hold at most %d evaluations", n, lim.perMinute, lim.capacity()))
			return
		}
		if lim != nil && !limitRequest(w, r, lim, d, len(b.Items)-1, writeError) {
			return
		}
		results := b.Run(func(e authzen.Evaluation) authzen.Result {
			res, err := decideAuthZEN(d, r, e)
			if err != nil {
				return authzen.Failed(err)
			}
			return res
		})
		writeJSON(w, http.StatusOK, authzen.Response{Evaluations: results})
	}
}

// decideAuthZEN decides one evaluation through the one decision path, as
// /pre-tool-check decides an event. A PEP cannot carry an approval's ref
// unless it knows gated, so its retry may be the identical request, found
// by digest as a hook's is; one that knows gated may append the ref to
// context.gated.evidence_refs instead.
func decideAuthZEN(d *Deps, r *http.Request, e authzen.Evaluation) (authzen.Result, error) {
	call, err := e.Call()
	if err != nil {
		return authzen.Result{}, err
	}
	pick := d.Engine.Category(call.Tool)
	c := callerOf(d, r)
	c.req.Pick, c.req.RetryByDigest, c.req.Binds, c.req.AuthZEN = &pick, true, call.Binds, call.Request
	return authzen.Answer(c.decide(r.Context(), d.Engine, call.Event(pick.Category))), nil
}

// discoverySuffix is the path of publicURL as chi routes it, when it has
// one: a PDP identified as https://gated.example.com/pdp is discovered at
// /.well-known/authzen-configuration/pdp (RFC 8615, AuthZEN section 10.2),
// the well-known part inserted before the identifier's path. Empty for a
// URL without a path, or one chi would read as a pattern ({, }, *), which
// the CLI refuses.
func discoverySuffix(publicURL string) string {
	u, err := url.Parse(publicURL)
	if err != nil {
		return ""
	}
	// chi matches the raw path when the request has one, else the path.
	p := u.Path
	if u.RawPath != "" {
		p = u.RawPath
	}
	p = strings.TrimRight(p, "/")
	if p == "" || strings.ContainsAny(p, "{}*") {
		return ""
	}
	return p
}

// authzenMetadata is the PDP metadata document (section 10).
type authzenMetadata struct {
	PolicyDecisionPoint       string `json:"policy_decision_point"`
	AccessEvaluationEndpoint  string `json:"access_evaluation_endpoint"`
	AccessEvaluationsEndpoint string `json:"access_evaluations_endpoint"`
}

// handleAuthZENDiscovery serves the PDP metadata. The PDP's identifier is
// --public-url when set, else the URL this request reached: its Host is the
// client's to choose unless the Host guard pins it (a loopback listener, or
// --allowed-hosts), so that answer is marked no-store, for no cache between
// to serve one client's Host to another. The search endpoints are left
// out: gated offers none (docs/integrations.md says why), and their absence
// says so.
func handleAuthZENDiscovery(d *Deps) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		base := strings.TrimRight(d.PublicURL, "/")
		if base == "" {
			scheme := "http"
			if r.TLS != nil {
				scheme = "https"
			}
			base = scheme + "://" + r.Host
			w.Header().Set("Cache-Control", "no-store")
		}
		writeJSON(w, http.StatusOK, authzenMetadata{
			PolicyDecisionPoint: base, AccessEvaluationEndpoint: base + authzenEvaluation,
			AccessEvaluationsEndpoint: base + authzenEvaluations,
		})
	}
}
