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
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/gatedhq/gated/internal/audit"
	"github.com/gatedhq/gated/internal/bundle"
	"github.com/gatedhq/gated/internal/catalog"
	"github.com/gatedhq/gated/internal/contract"
	"github.com/gatedhq/gated/internal/kill"
	"github.com/gatedhq/gated/internal/metrics"
	"github.com/gatedhq/gated/internal/policy"
	"github.com/gatedhq/gated/internal/route"
	"github.com/gatedhq/gated/internal/tracing"
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
	// NoApproval: the surface can neither show an approval nor retry with
	// one (hooks), so an ask creates none.
	NoApproval bool
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
	// Binds is what else an approval of the call binds besides the event:
	// the parts of an Action API plan outside its input that decide what
	// runs. nil for every other surface.
	Binds any
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
	// offersPausedUntil (unix nanoseconds of the engine's clock): after the
	// store failed to create an approval, asks go without one until then,
	// rather than each waiting out offerTimeout on a database that hangs.
	offersPausedUntil atomic.Int64

	kills *kill.Board // nil: no kill switch
}

// Option configures an Engine.
type Option func(*Engine)

// WithClock sets the clock used for evidence freshness and time conditions.
func WithClock(now func() time.Time) Option { return func(e *Engine) { e.now = now } }

// WithShadow puts every decision in shadow mode.
func WithShadow(on bool) Option { return func(e *Engine) { e.shadow = on } }

// WithCatalog joins events to the catalog current() returns (read once per
// decision, so a reload never splits one), with the given handling of
// uncatalogued tools and of argument validation.
func WithCatalog(current func() *catalog.Catalog, unknown UnknownTools, args catalog.ArgumentMode) Option {
	return func(e *Engine) { e.catalog, e.unknownTools, e.argMode = current, unknown, args }
}

// WithPolicy evaluates the policy current() returns (read once per
// decision). lim keeps rate-limit counts across policy reloads.
func WithPolicy(current func() *policy.Set, lim *policy.Limiter) Option {
	return func(e *Engine) { e.policy, e.limiter = current, lim }
}

// WithAudit records every decision, redacted, with rec. A record that can
// be neither stored nor spooled refuses the call (unless the recorder runs
// fail-open, when it reports the record dropped).
func WithAudit(rec audit.Recorder, red *audit.Redactor, version string) Option {
	return func(e *Engine) { e.recorder, e.redactor, e.version = rec, red, version }
}

// WithMetrics counts every decision.
func WithMetrics(m *metrics.Metrics) Option { return func(e *Engine) { e.metrics = m } }

// WithTracing traces every decision, and each of its stages, with tp. The
// no-op provider leaves the engine untraced.
func WithTracing(tp trace.TracerProvider) Option {
	return func(e *Engine) {
		if _, off := tp.(noop.TracerProvider); !off {
			e.tracer = tp.Tracer(tracing.Scope)
		}
	}
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

func findingCodes(fs []route.Finding) []string {
	out := make([]string, len(fs))
	for i, f := range fs {
		out[i] = f.Code
	}
	return out
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

// Pick is the category a surface declares for a tool, as one catalog
// snapshot gives it. Passed on in Request.Pick, it makes the decision join
// that same snapshot (and take the call it classified), so a reload in
// between cannot split a decision and no command line is parsed twice.
type Pick struct {
	Category route.Category // unknown when no loaded catalog describes the tool
	tool     string
	catalog  *catalog.Catalog // nil: no catalog configured
	call     *catalog.Call    // nil: only the tool was looked up
}

// Category picks the category the current catalog gives tool. Adapters
// that cannot know a tool's category themselves (hooks) declare this one.
func (e *Engine) Category(tool string) Pick {
	p := Pick{Category: route.Unknown, tool: tool}
	if e.catalog == nil {
		return p
	}
	p.catalog = e.catalog()
	if v, ok := p.catalog.Lookup(tool); ok {
		p.Category = v.Category()
	}
	return p
}

// CallCategory picks the category the current catalog gives a call of tool
// with args, made in workspace: a tool's category, or a read's for a
// command line the catalog proves only reads in the workspace. Hooks
// declare it, and pass the pick on in Request.Pick.
func (e *Engine) CallCategory(tool string, args map[string]any, workspace string) Pick {
	p := Pick{Category: route.Unknown, tool: tool}
	if e.catalog == nil {
		return p
	}
	p.catalog = e.catalog()
	if v, ok := p.catalog.Lookup(tool); ok {
		p.call = v.Call(args, workspace)
		p.Category = p.call.Floor().Category()
	}
	return p
}

// AlwaysRefused reports whether the current catalog refuses every call of
// tool, whatever it carries: a tool that never executes, or, unless the
// surface vouches for its category, a tool no catalog describes under
// --unknown-tools refuse. Policy is not asked: its rules may turn on the
// call. A surface may hide such tools (gated mcp-proxy --hide-refused).
func (e *Engine) AlwaysRefused(tool string, vouched bool) bool {
	if e.catalog == nil || e.shadow {
		return false
	}
	v, ok := e.catalog().Lookup(tool)
	if !ok {
		return !vouched && e.unknownTools == UnknownRefuse
	}
	return v.NeverExecute
}

// OutputConforms checks an output reported for a call to tool against the
// current catalog's outputSchema for it (the catalog current now, which a
// reload may have changed since the decision). It returns nil when nothing
// is checked: no catalog, a tool it does not describe, or no outputSchema.
// An output holding a number the contract would refuse in arguments does
// not conform: the validator is not given it.
func (e *Engine) OutputConforms(tool string, output any) *bool {
	if e.catalog == nil {
		return nil
	}
	v, ok := e.catalog().Lookup(tool)
	if !ok || !v.OutputSchema {
		return nil
	}
	if !contract.NumbersInRange(output) {
		return new(false)
	}
	return v.OutputConforms(output)
}

func notInCatalog(r route.Route) route.Finding {
	return route.Finding{Source: route.SourceCatalog, Code: route.CodeToolNotInCatalog, Route: r, Blocking: true,
		Message: "the tool is not described by any loaded catalog"}
}

// finish sets the final outcome from all findings, and whether the tool may
// execute; gateOutcome is the gate's own verdict before the runtime's route.
func (d *Decision) finish(findings []route.Finding, gateOutcome route.Outcome) {
	out := route.Combine(findings)
	if findings == nil {
		findings = []route.Finding{}
	}
	if d.Reasons == nil {
		d.Reasons = []string{}
	}
	d.Findings, d.Gate = findings, gateOutcome
	d.Route, d.HardBlockers = out.Route, out.HardBlockers
	d.Execute = d.Shadow || out.Pass()
}

// refuse adds a refusal for code to whatever the decision already found.
func (d *Decision) refuse(code, msg string) {
	f := route.Finding{Source: route.SourceGated, Code: code, Route: route.Refuse, Blocking: true, Message: msg}
	if d.EvidenceIntegrity == nil {
		d.EvidenceIntegrity = emptyIntegrity()
	}
	if d.AuthorizationReport == nil {
		d.AuthorizationReport = emptyAuthReport()
	}
	findings := append(d.Findings, f)
	d.finish(findings, route.Combine(findings))
}

func emptyIntegrity() *contract.Integrity {
	return &contract.Integrity{
		EvidenceSafetyVersion: "0.1", UsedSourceIDs: []string{}, MissingEvidenceSourceIDs: []string{},
		ContradictoryEvidenceSourceIDs: []string{}, CitationSourceIDs: []string{}, ProvenanceSourceIDs: []string{},
		Issues: []contract.Issue{}, ErrorCodes: []string{}, WarningCodes: []string{},
	}
}

func emptyAuthReport() *contract.AuthReport {
	return &contract.AuthReport{Support: []contract.Support{}}
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
