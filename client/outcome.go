package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"time"
)

// The outcome statuses Guard reports; RecordOutcome takes any of the
// Action API's terminal statuses (succeeded, reverted, queued, rejected,
// failed).
const (
	OutcomeSucceeded = "succeeded"
	OutcomeFailed    = "failed"
)

// Outcome is what a runtime reports about a call gated let run
// (POST /v1/decisions/{id}/outcome, docs/audit.md#outcomes). gated keeps
// Output only as a keyed fingerprint, and whether it met the tool's
// outputSchema.
type Outcome struct {
	Status string `json:"status"`
	// ErrorClass is the class of the error the call raised (status failed
	// or reverted only), never its message.
	ErrorClass string `json:"error_class,omitempty"`
	Output     any    `json:"output,omitempty"`
}

// maxErrorClass is the longest error_class gated takes.
const maxErrorClass = 128

// outcomeRetryDelays are the pauses before each new try of a report that
// gated answered 404 decision_unknown: with the default async audit
// durability a decision's record is stored within about 100 ms of its
// answer, so a fast tool's report can arrive first.
var outcomeRetryDelays = []time.Duration{100 * time.Millisecond, 200 * time.Millisecond, 400 * time.Millisecond, 800 * time.Millisecond}

// RecordOutcome reports the outcome of decision id with the client's token
// (gated takes it only from the token that asked for the decision), once.
// A 404 decision_unknown is tried again for about 1.5 s, while the record
// may not be stored yet. On a failure it returns an *Error naming it, as
// Check would; for a non-2xx answer its Err is an *HTTPError with gated's
// code (outcome_exists, decision_not_yours …).
func (c *Client) RecordOutcome(ctx context.Context, id string, o Outcome) error {
	if id == "" {
		return &Error{BlockerBadAnswer, errors.New("an outcome needs the decision's id")}
	}
	body, err := json.Marshal(o)
	if err != nil {
		return &Error{BlockerBadAnswer, fmt.Errorf("the outcome cannot be encoded as JSON: %w", err)}
	}
	path := "/v1/decisions/" + url.PathEscape(id) + "/outcome"
	for try := 0; ; try++ {
		_, cerr := c.do(ctx, http.MethodPost, path, body, c.timeout)
		if cerr == nil {
			return nil
		}
		var he *HTTPError
		if !errors.As(cerr, &he) || he.Code != "decision_unknown" || try == len(outcomeRetryDelays) || ctx.Err() != nil {
			return cerr
		}
		pause(ctx, outcomeRetryDelays[try])
	}
}

// ReportOutcome makes Guard report the outcome of a call it ran, on the
// decision it ran it on: succeeded when run returns a nil error, and
// failed with the error's type (its %T, such as *url.Error) when it
// returns one — never the error's text, which may quote arguments or
// secrets. Nothing else of the result is sent. A call Guard blocked has
// no outcome, and a panic in run is not reported.
//
// Reporting never changes what Guard returns: the tool's result and error
// come back as run returned them, whether or not the report succeeded.
// onError, when not nil, is called with a failed report's *Error before
// Guard returns. The report waits for gated (the client's timeout, with
// RecordOutcome's retries), after run and before Guard returns.
func ReportOutcome(onError func(error)) GuardOption {
	return func(g *guardConfig) { g.reportOutcome, g.onReportError = true, onError }
}

// reportOutcome reports what run returned on decision d.
func (c *Client) reportOutcome(ctx context.Context, d *Decision, runErr error, onError func(error)) {
	o := Outcome{Status: OutcomeSucceeded}
	if runErr != nil {
		o = Outcome{Status: OutcomeFailed, ErrorClass: errorClass(runErr)}
	}
	if err := c.RecordOutcome(ctx, d.DecisionID, o); err != nil && onError != nil {
		onError(err)
	}
}

// errorClass is err's type as %T prints it, cut to what gated takes.
func errorClass(err error) string {
	class := fmt.Sprintf("%T", err)
	if len(class) > maxErrorClass {
		class = class[:maxErrorClass]
	}
	return class
}
