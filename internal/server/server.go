// Package server is gated's HTTP surface: authentication, limits, decoding,
// and the handlers that hand events to the decision path.
package server

import (
	"context"
	"github.com/gatedhq/gated/internal/adapter/hook/wire"
	"net/http"
	"net/netip"

	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"
	"go.uber.org/zap"

	"github.com/gatedhq/gated/internal/audit"
	"github.com/gatedhq/gated/internal/auth"
	"github.com/gatedhq/gated/internal/candidate"
	"github.com/gatedhq/gated/internal/eventcodec"
	"github.com/gatedhq/gated/internal/gate"
	"github.com/gatedhq/gated/internal/limit"
	"github.com/gatedhq/gated/internal/metrics"
)

// Deps is everything the HTTP surface needs.
type Deps struct {
	Engine *gate.Engine
	Logger *zap.Logger
	// Tokens, when set, requires a bearer token on every API call; nil runs
	// open (the CLI refuses that on non-loopback addresses).
	Tokens *auth.Tokens
	// MaxBodyBytes bounds a request body; MaxDepth bounds JSON nesting.
	MaxBodyBytes int64
	MaxDepth     int
	// HookMaxBodyBytes bounds a hook call's body (they carry file contents).
	HookMaxBodyBytes int64
	// HookAuthorizationState is what hook calls vouch for (default
	// authenticated: the signed-in person at the keyboard).
	HookAuthorizationState string
	// RateLimit is requests per minute per token (per client IP when open);
	// zero disables it.
	RateLimit int
	// AuthFailureLimit is failed authentications per minute per client
	// address (an IPv6 client by its /64) before the address is answered
	// 429, valid token or not. Zero means DefaultAuthFailureLimit, so a
	// handler built without it is still protected; negative disables it.
	AuthFailureLimit int
	// Limits is where RateLimit and AuthFailureLimit are counted; nil
	// means in this process only (limit.Local).
	Limits limit.Backend
	// AllowRequestShadow lets ?shadow_mode=true take effect when gated runs
	// open (no Tokens). With tokens only a token holding scope shadow can
	// ask for it; any other request is enforced, and says shadow_ignored.
	AllowRequestShadow bool
	// Hosts are the Host and Origin names requests may carry.
	Hosts Hosts
	// TrustedProxies are the peers whose X-Forwarded-For is believed when
	// finding the client address.
	TrustedProxies []netip.Prefix
	// Ready reports whether gated can decide now (for /readyz).
	Ready func(ctx context.Context) error
	// PublicURL is the URL people and PEPs reach gated at (--public-url),
	// without a trailing slash: the AuthZEN PDP's identifier. Empty: the
	// URL each discovery request reached.
	PublicURL string
	// Version is gated's version, as the MCP server names itself.
	Version string
	// OpenAPI is the document served at /openapi.yaml.
	OpenAPI []byte
	// Catalog, when set, returns the document GET /v1/catalog serves: the
	// current catalog's tools, actions, revision and last reload error.
	Catalog func() any
	// Policy, when set, returns the document GET /v1/policy serves.
	Policy func() any
	// Decisions, when set, serves stored decision records and, with
	// Redactor, keeps their outcomes.
	Decisions audit.Store
	// Redactor fingerprints outcome outputs with the audit HMAC key, as
	// the decision path fingerprints arguments.
	Redactor *audit.Redactor
	// Candidate, when set, is the candidate policy beside the live one
	// (GET /v1/candidate); Candidates, when set, reads its stored rows
	// back and joins them to GET /v1/decisions/{id}.
	Candidate  *candidate.Candidate
	Candidates audit.CandidateStore
	// Approvals, when set, serves the approvals API (it needs Tokens too:
	// without them every approvals route answers 403).
	Approvals Approvals
	// Kills, when set, serves the kill switch API (scope admin; it needs
	// Tokens too). The decision path reads kills from the engine's board,
	// not from here.
	Kills Kills
	// Stopping, when closed, ends long polls and event streams, so that a
	// graceful shutdown does not wait for them (http.Server.Shutdown waits
	// for every open request).
	Stopping <-chan struct{}
	// Console, when set, is the web console (internal/console), served
	// under /ui/ behind the Host/Origin guard; it keeps its own sessions.
	Console http.Handler
	// Metrics, when set, instruments every request; /metrics is served on
	// this handler unless MetricsElsewhere (a separate --metrics-addr).
	Metrics          *metrics.Metrics
	MetricsElsewhere bool
	// Tracing, when set, starts a server span for every request (the
	// engine traces the decision itself: gate.WithTracing). The no-op
	// provider counts as unset, so requests pay nothing for it.
	Tracing trace.TracerProvider
}

// Defaults for Deps fields left zero.
const (
	DefaultMaxBodyBytes = 64 << 10
	// DefaultAuthFailureLimit allows a client that mistypes a token room to
	// notice, and keeps guessing to about one token a second.
	DefaultAuthFailureLimit = 60
)

// New returns the HTTP handler of gated.
func New(d Deps) http.Handler {
	if d.MaxBodyBytes <= 0 {
		d.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if d.HookMaxBodyBytes <= 0 {
		d.HookMaxBodyBytes = wire.MaxInputBytes
	}
	if d.MaxDepth <= 0 {
		d.MaxDepth = eventcodec.DefaultMaxDepth
	}
	if d.Logger == nil {
		d.Logger = zap.NewNop()
	}
	if d.Ready == nil {
		d.Ready = func(context.Context) error { return nil }
	}
	if _, off := d.Tracing.(noop.TracerProvider); off {
		d.Tracing = nil
	}
	if d.AuthFailureLimit == 0 {
		d.AuthFailureLimit = DefaultAuthFailureLimit
	}
	if d.Limits == nil {
		d.Limits = limit.Local
	}
	return routes(&d, newLimiter(d.RateLimit, d.Limits, "requests"), newLimiter(d.AuthFailureLimit, d.Limits, "auth-failures"))
}
