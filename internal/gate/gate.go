// Package gate makes decisions: it runs every decision source over an event
// (contract, then catalog and policy), combines their findings into the
// strictest route, and records the decision. The same path serves HTTP, the
// check command and every other surface; internal/envelope presents its
// Decision as the answer.
package gate

import (
	"context"
	"fmt"
	"net/netip"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"go.opentelemetry.io/otel/trace"

	"github.com/gatedhq/gated/internal/audit"
	"github.com/gatedhq/gated/internal/bundle"
	"github.com/gatedhq/gated/internal/catalog"
	"github.com/gatedhq/gated/internal/kill"
	"github.com/gatedhq/gated/internal/metrics"
	"github.com/gatedhq/gated/internal/policy"
	"github.com/gatedhq/gated/internal/route"
)

// UnknownTools is what happens to a tool that no loaded catalog describes.
type UnknownTools int

const (
	UnknownDefer  UnknownTools = iota // defer, blocker tool_not_in_catalog (the default)
	UnknownRefuse                     // refuse, blocker tool_not_in_catalog
	UnknownAllow                      // the contract rules alone decide
)

// ParseUnknownTools maps defer, refuse or allow to a mode.
func ParseUnknownTools(s string) (UnknownTools, error) {
	switch s {
	case route.Defer.String(), "":
		return UnknownDefer, nil
	case route.Refuse.String():
		return UnknownRefuse, nil
	case "allow":
		return UnknownAllow, nil
	}
	return UnknownDefer, fmt.Errorf("unknown --unknown-tools mode %q (want defer, refuse or allow)", s)
}

// Request is one pre-tool-check as the decision path sees it.
type Request struct {
	Event      map[string]any // the decoded JSON object
	Shadow     bool           // observe only: report the route, let the tool run
	RequestID  string
	TokenName  string
	Principals []string
	// TrustEventPrincipals lets the event's agent_id and subject count as
	// principals (tokens that vouch for their runtime, or open mode).
	TrustEventPrincipals bool
	ClientIP             netip.Addr
	// NoApproval: the surface creates no approval for an ask (the hook of a
	// runtime that asks the person at the keyboard, who answers it there).
	NoApproval bool
	// RetryByDigest: the surface cannot carry an evidence ref back (the
	// hook of a runtime that cannot ask), so its retry is the identical
	// call. An ask or approvable defer looks up the call's open approval
	// by digest and requester: an approved one decides the call again as
	// a retry carrying its ref would be decided, a pending one is offered
	// again rather than a new one created.
	RetryByDigest bool
	// AsksItself: the surface puts an ask to the person itself (an MCP
	// client's elicitation), so an ask creates no approval that nobody
	// would answer; a defer an approval resolves still creates one.
	AsksItself bool
	// CategoryVouched: the surface vouches for the declared category of a
	// tool no catalog describes (an MCP upstream's annotations the operator
	// trusts), so the unknown-tools rule gives way to the contract rules
	// on that category. An unknown category is not vouched for.
	CategoryVouched bool
	// Workspace is the directory the agent works in (a hook's cwd), which
	// a command line's paths are judged against; empty, no path is inside
	// it.
	Workspace string
	// Pick is the category the surface declared, picked from the catalog
	// (Category, CallCategory): the decision joins the same snapshot, and
	// takes the call it classified from the same arguments and workspace.
	// nil: the decision reads the current catalog.
	Pick *Pick
	// Checks adds a surface's own findings after the catalog join (the
	// Action API's plan rules); view is nil for an uncatalogued tool.
	Checks func(view *catalog.View, ev *route.Event) []route.Finding
	// FreshChecks makes Checks anew for a candidate (WithFollower), which
	// runs them again after the answer: Checks may keep what it found for
	// the surface's answer, which the candidate must not touch. nil: the
	// candidate decides without the surface's checks.
	FreshChecks func() func(view *catalog.View, ev *route.Event) []route.Finding
	// Binds is what else an approval of the call binds besides the event:
	// the parts of an Action API plan outside its input that decide what
	// runs. nil for every other surface.
	Binds any
	// AuthZEN is the AuthZEN request the call came as, which policy reads
	// as input.authzen; only the AuthZEN surface sets it, so no event body
	// (a tool's arguments, a /pre-tool-check event) can. nil for every
	// other surface.
	AuthZEN map[string]any

	// counted: the first pass of this decision counted the call against
	// the policy's rate limits already.
	counted bool
}

// Engine is the decision path. It is safe for concurrent use.
type Engine struct {
	now    func() time.Time
	shadow bool

	catalog      func() *catalog.Catalog // nil: no catalog configured
	unknownTools UnknownTools
	argMode      catalog.ArgumentMode

	policy  func() *policy.Set // nil: no policy configured
	limiter *policy.Limiter

	recorder audit.Recorder // nil: decisions are not recorded (check)
	redactor *audit.Redactor
	version  string
	metrics  *metrics.Metrics
	tracer   trace.Tracer // nil: untraced

	approvals Approvals // nil: approvals are off
	publicURL string
	// approverNow gives an approver's token as it stands (WithApprovers);
	// nil: an approver is judged as it was when it approved.
	approverNow func(name string) ([]string, bool)
	// offersPausedUntil (unix nanoseconds of the engine's clock): after the
	// store failed to create an approval, asks go without one until then,
	// rather than each waiting out offerTimeout on a database that hangs.
	offersPausedUntil atomic.Int64

	kills *kill.Board // nil: no kill switch

	follow func(*Followed) // nil: no candidate follows the decisions
}

// noSpan is the span of an untraced engine's stages: it records nothing.
var noSpan = trace.SpanFromContext(context.Background())

// start starts the span of a stage. Untraced, it returns ctx as it is, so
// the decision path allocates nothing for traces.
func (e *Engine) start(ctx context.Context, name string) (context.Context, trace.Span) {
	if e.tracer == nil {
		return ctx, noSpan
	}
	return e.tracer.Start(ctx, name)
}

// New returns an engine.
func New(opts ...Option) *Engine {
	e := &Engine{now: time.Now}
	for _, o := range opts {
		o(e)
	}
	return e
}

// maxRequestIDBytes bounds the event's request_id that is echoed and
// stored; a longer one is dropped rather than cut into a false id.
const maxRequestIDBytes = 128

// eventRequestID is the event's request_id when it is short enough to echo
// and store (the contract already refused control characters in it).
func eventRequestID(id string) string {
	if len(id) > maxRequestIDBytes {
		return ""
	}
	return id
}

func firstNonEmpty(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

func notInCatalog(r route.Route) route.Finding {
	return route.Finding{Source: route.SourceCatalog, Code: route.CodeToolNotInCatalog, Route: r, Blocking: true,
		Message: "the tool is not described by any loaded catalog"}
}

// newID returns a UUIDv7: time-ordered, so audit records index well. Its
// only failure is the system's random source, which Go treats as fatal.
func newID() string { return uuid.Must(uuid.NewV7()).String() }

// appendCommits adds the commits of a bundle-composed source, each with
// the prefix naming the source.
func appendCommits(to []string, prefix string, o *bundle.Origin) []string {
	if o == nil {
		return to
	}
	for _, c := range o.Commits {
		to = append(to, prefix+c.String())
	}
	return to
}
