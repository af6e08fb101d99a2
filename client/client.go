// Package client asks a gated service whether a tool call may run, and runs
// it only when gated says so. It fails closed: a gated that is down, slow,
// misconfigured or answers nonsense blocks the tool, with a blocker naming
// the failure. It depends on the standard library only.
//
//	c := client.New("http://127.0.0.1:8080", client.WithToken(os.Getenv("GATED_TOKEN")))
//	out, err := client.Guard(ctx, c, event, func(ctx context.Context) (string, error) {
//		return sendEmail(ctx, to, body)
//	})
package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"
)

// Blockers the client reports when gated gives no usable answer.
const (
	BlockerUnreachable = "gated_unreachable"
	BlockerTimeout     = "gated_timeout"
	BlockerBadAnswer   = "gated_bad_answer"
	// A non-2xx status s is reported as "gated_http_<s>"; see HTTPBlocker.
)

// HTTPBlocker is the blocker of a non-2xx answer with the given status.
func HTTPBlocker(status int) string { return fmt.Sprintf("gated_http_%d", status) }

// DefaultTimeout bounds one check, answer included.
const DefaultTimeout = 2 * time.Second

// maxAnswerBytes bounds how much of an answer is read: a decision is a few
// kilobytes, and a hostile or broken peer must not exhaust memory.
const maxAnswerBytes = 4 << 20

// Event is an Agent Action Contract v1 event: tool_name, tool_category,
// authorization_state, evidence_refs, risk_domain, proposed_arguments and
// recommended_route, plus the optional fields. It is a map so that any
// valid event, including fields this client does not know, passes unchanged.
type Event map[string]any

// Decision is gated's answer. Raw holds the whole answer as gated sent it
// (the reference's envelope, findings, action, revisions …).
type Decision struct {
	DecisionID   string   `json:"decision_id"`
	Route        string   `json:"route"`
	Execute      bool     `json:"execute"`
	Shadow       bool     `json:"shadow"`
	HardBlockers []string `json:"hard_blockers"`
	// Error says why the client refused on gated's behalf; empty on a real
	// answer.
	Error string `json:"error,omitempty"`
	// Approval is the pending approval an ask or defer answer carries when
	// gated runs with approvals (a database and tokens); nil otherwise.
	// WaitForApproval waits for it.
	Approval *Approval `json:"approval,omitempty"`

	Raw json.RawMessage `json:"-"`
}

// Runs reports whether the tool may run on this decision: gated allowed
// execution, and either the route is accept or the answer is a shadow one
// (observe only).
func (d *Decision) Runs() bool {
	return d != nil && d.Execute && (d.Route == "accept" || d.Shadow)
}

// Client calls one gated service. It is safe for concurrent use.
type Client struct {
	base       string
	token      string
	shadow     bool
	timeout    time.Duration
	http       *http.Client
	onDecision func(*Decision)
}

// Option configures a Client.
type Option func(*Client)

// WithToken sends token as a bearer token.
func WithToken(token string) Option { return func(c *Client) { c.token = token } }

// WithTimeout bounds each check, the answer included (default 2s).
func WithTimeout(d time.Duration) Option { return func(c *Client) { c.timeout = d } }

// WithHTTPClient sends requests through hc (proxies, TLS settings). Its
// redirect policy is replaced: a redirect is a failure, not a new target.
func WithHTTPClient(hc *http.Client) Option { return func(c *Client) { c.http = hc } }

// WithShadow asks gated to decide in shadow mode: the tool runs and the
// would-be route is reported to the OnDecision callback.
func WithShadow(on bool) Option { return func(c *Client) { c.shadow = on } }

// WithOnDecision calls f with every decision Guard acts on, before the
// tool runs or is blocked (for logging the would-be route in shadow mode).
// With WaitForApproval that is each decision in turn: the asking one,
// before the wait, then the retried one or the refusal of a failed wait.
func WithOnDecision(f func(*Decision)) Option { return func(c *Client) { c.onDecision = f } }

// New returns a client of the gated at baseURL, e.g. http://127.0.0.1:8080.
func New(baseURL string, opts ...Option) *Client {
	c := &Client{base: strings.TrimRight(baseURL, "/"), timeout: DefaultTimeout}
	for _, o := range opts {
		o(c)
	}
	hc := http.Client{}
	if c.http != nil {
		hc = *c.http
	}
	hc.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	c.http = &hc
	return c
}

// Check asks gated about event. It always returns a decision: on a failure
// of gated or the network it is a refusal naming the failure, and the error
// says what went wrong.
func (c *Client) Check(ctx context.Context, event Event) (*Decision, error) {
	body, err := json.Marshal(event)
	if err != nil {
		return refusal(&Error{BlockerBadAnswer, fmt.Errorf("the event cannot be encoded as JSON: %w", err)})
	}
	raw, cerr := c.post(ctx, c.path("/pre-tool-check"), body)
	if cerr != nil {
		return refusal(cerr)
	}
	d, err := parseDecision(raw)
	if err != nil {
		return refusal(&Error{BlockerBadAnswer, err})
	}
	return d, nil
}

// path is gated's path with the shadow query when shadow mode is on.
func (c *Client) path(p string) string {
	if c.shadow {
		return p + "?shadow_mode=true"
	}
	return p
}

// post sends body to gated and returns a 2xx answer's body, bounded in
// size and time; any other outcome is an *Error naming the failure.
func (c *Client) post(ctx context.Context, path string, body []byte) ([]byte, *Error) {
	return c.do(ctx, http.MethodPost, path, body, c.timeout)
}

// do is one exchange with gated under timeout (none when not positive): a
// POST of body, or a GET when body is nil.
func (c *Client) do(ctx context.Context, method, path string, body []byte, timeout time.Duration) ([]byte, *Error) {
	if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	var reader io.Reader
	if body != nil {
		reader = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, reader)
	if err != nil {
		return nil, &Error{BlockerUnreachable, fmt.Errorf("gated's address is not usable: %w", err)}
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json")
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, &Error{transportBlocker(ctx, err), fmt.Errorf("asking gated failed: %w", err)}
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswerBytes+1))
	switch {
	case err != nil && ctx.Err() != nil:
		return nil, &Error{BlockerTimeout, fmt.Errorf("gated's answer did not arrive in time: %w", err)}
	case err != nil:
		return nil, &Error{BlockerBadAnswer, fmt.Errorf("gated's answer was cut short: %w", err)}
	case resp.StatusCode < 200 || resp.StatusCode > 299:
		var body struct {
			Code string `json:"code"`
		}
		_ = json.Unmarshal(raw, &body) // only a nicety: the status decides the blocker
		return nil, &Error{HTTPBlocker(resp.StatusCode), &HTTPError{Status: resp.StatusCode, Code: body.Code}}
	case len(raw) > maxAnswerBytes:
		return nil, &Error{BlockerBadAnswer, fmt.Errorf("gated's answer exceeds %d bytes", maxAnswerBytes)}
	}
	return raw, nil
}

// parseDecision accepts only a JSON object with a known route and a
// boolean execute: anything else could be read as permission by mistake.
func parseDecision(raw []byte) (*Decision, error) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil || fields == nil {
		return nil, errors.New("gated's answer is not a JSON object")
	}
	var route string
	if err := json.Unmarshal(fields["route"], &route); err != nil || !knownRoute(route) {
		return nil, fmt.Errorf("gated's answer has no known route (got %.40s)", fields["route"])
	}
	var execute bool
	if err := json.Unmarshal(fields["execute"], &execute); err != nil {
		return nil, errors.New("gated's answer has no boolean execute")
	}
	d := &Decision{}
	if err := json.Unmarshal(raw, d); err != nil {
		return nil, fmt.Errorf("gated's answer is not a decision: %w", err)
	}
	d.Raw = raw
	return d, nil
}

func knownRoute(r string) bool {
	return r == "accept" || r == "ask" || r == "defer" || r == "refuse"
}

// transportBlocker names a failure to get any answer.
func transportBlocker(ctx context.Context, err error) string {
	var ne net.Error
	if errors.Is(ctx.Err(), context.DeadlineExceeded) || errors.As(err, &ne) && ne.Timeout() {
		return BlockerTimeout
	}
	return BlockerUnreachable
}

// refusal is the decision the client makes on gated's behalf when gated
// gave no usable answer.
func refusal(e *Error) (*Decision, error) {
	d := &Decision{Route: "refuse", HardBlockers: []string{e.Blocker}, Error: e.Err.Error()}
	d.Raw, _ = json.Marshal(d)
	return d, e
}

// Error is a failure to get a usable answer from gated.
type Error struct {
	Blocker string // gated_unreachable, gated_timeout, gated_http_<status> or gated_bad_answer
	Err     error  // an *HTTPError for a non-2xx answer
}

// HTTPError is a non-2xx answer of gated: its status, and its error code
// when the answer has one (decision_unknown, outcome_exists …).
type HTTPError struct {
	Status int
	Code   string
}

func (e *HTTPError) Error() string {
	if e.Code != "" {
		return fmt.Sprintf("gated answered HTTP %d (%s)", e.Status, e.Code)
	}
	return fmt.Sprintf("gated answered HTTP %d", e.Status)
}

func (e *Error) Error() string { return e.Blocker + ": " + e.Err.Error() }
func (e *Error) Unwrap() error { return e.Err }

// BlockedError is returned by Guard when the tool did not run.
type BlockedError struct {
	// Decision is the last decision Guard got: gated's answer, or the
	// client's refusal when gated gave no usable answer.
	Decision *Decision
	// Err is the client's failure when gated gave no usable answer.
	Err error
	// Reason is set when Guard waited for an approval (WaitForApproval)
	// and the wait ended the call: ReasonApprovalDenied, …Expired, …Used,
	// …Timeout, or the blocker of a failure while waiting (e.g.
	// gated_unreachable). It is empty otherwise, the retried decision
	// included: its hard blockers say why.
	Reason string
}

func (e *BlockedError) Error() string {
	msg := fmt.Sprintf("gated blocked the tool call: route %s, hard blockers %s",
		e.Decision.Route, strings.Join(e.Decision.HardBlockers, ", "))
	if e.Reason != "" {
		msg += "; waiting for approval ended: " + e.Reason
	}
	return msg
}

func (e *BlockedError) Unwrap() error { return e.Err }

// Guard asks gated about event and calls run only when the tool may run
// (route accept and execute true, or a shadow answer). Otherwise it returns
// the zero T and a *BlockedError carrying the decision.
//
// With WaitForApproval, an ask or defer answer carrying an approval is
// waited for, and the event retried once the approval is given; see
// WaitForApproval. With ReportOutcome, what run returned is reported to
// gated as the call's outcome; see ReportOutcome.
func Guard[T any](ctx context.Context, c *Client, event Event, run func(context.Context) (T, error), opts ...GuardOption) (T, error) {
	var cfg guardConfig
	for _, o := range opts {
		o(&cfg)
	}
	var zero T
	d, err := c.Check(ctx, event)
	c.report(d)
	if !d.Runs() {
		if cfg.wait <= 0 || !d.awaitsApproval() {
			return zero, &BlockedError{Decision: d, Err: err}
		}
		var blocked *BlockedError
		if d, blocked = c.awaitApproval(ctx, event, d, cfg.wait); blocked != nil {
			return zero, blocked
		}
	}
	out, err := run(ctx)
	if cfg.reportOutcome {
		c.reportOutcome(ctx, d, err, cfg.onReportError)
	}
	return out, err
}

// report hands d to the OnDecision callback, if any.
func (c *Client) report(d *Decision) {
	if c.onDecision != nil {
		c.onDecision(d)
	}
}
