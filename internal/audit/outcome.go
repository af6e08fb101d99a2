package audit

import (
	"bytes"
	"encoding/json"
	"errors"
	"time"

	"github.com/gatedhq/gated/internal/actionresult"
)

// Refusals of Store.AddOutcome besides ErrNotFound (no such decision).
var (
	ErrOutcomeExists = errors.New("an outcome is already recorded for this decision; each decision has one")
	ErrNotExecuted   = errors.New("the decision did not let the tool run (its route was not accept, outside shadow mode), so it has no outcome")
	ErrNotYours      = errors.New("only the token that asked for the decision may record its outcome")
)

// Outcome is what happened after a call gated let run, as its runtime
// reported it (docs/audit.md#outcomes). Like a Record it holds no raw
// output: only its keyed fingerprint. A nil Verification, Repair or
// Rollback was not reported.
type Outcome struct {
	DecisionID   string              `json:"decision_id"`
	Status       actionresult.Status `json:"status"`
	Verification *Verification       `json:"verification,omitempty"`
	Repair       *Attempt            `json:"repair,omitempty"`
	Rollback     *Attempt            `json:"rollback,omitempty"`
	// OutputFingerprint is hmac-sha256 of the canonical output, as
	// arguments_hmac is of the arguments; empty when no output was sent.
	OutputFingerprint string `json:"output_fingerprint,omitempty"`
	// OutputConforms is whether the output met the outputSchema the
	// catalog gives the decision's tool; null when none was checked (no
	// output, or no outputSchema).
	OutputConforms *bool `json:"output_conforms"`
	// ErrorClass is the class of the error a failed call raised, as an
	// SDK's guard reports it (never the message), screened as a record's
	// fields are; empty when none was reported.
	ErrorClass string    `json:"error_class,omitempty"`
	TokenName  string    `json:"token_name"`
	RecordedAt time.Time `json:"recorded_at"`
}

// Verification is the result envelope's verification block, without its
// checks.
type Verification struct {
	OK bool `json:"ok"`
}

// Attempt is the result envelope's repair or rollback block.
type Attempt struct {
	Attempted bool `json:"attempted"`
	OK        bool `json:"ok"`
}

// OutcomeInput is what a runtime reports about one decision. Output is
// the raw JSON it sent (nil: none), already known to be valid JSON;
// OutputConforms is what gated found checking it (nil: not checked).
type OutcomeInput struct {
	DecisionID     string
	Status         actionresult.Status
	Verification   *Verification
	Repair         *Attempt
	Rollback       *Attempt
	Output         json.RawMessage
	OutputConforms *bool
	ErrorClass     string
	TokenName      string
	Time           time.Time
}

// BuildOutcome redacts in into an Outcome: the output becomes its keyed
// fingerprint, and the token name is screened as a Record's is, so that
// it compares equal to the name on the decision's record.
func (r *Redactor) BuildOutcome(in OutcomeInput) *Outcome {
	o := &Outcome{
		DecisionID: in.DecisionID, Status: in.Status,
		Verification: in.Verification, Repair: in.Repair, Rollback: in.Rollback,
		OutputConforms: in.OutputConforms, ErrorClass: r.Screen(in.ErrorClass),
		TokenName:  r.Screen(in.TokenName),
		RecordedAt: in.Time.UTC().Truncate(time.Microsecond), // PostgreSQL's precision
	}
	if in.Output != nil {
		// Decoded and encoded again, so that equal outputs give equal
		// fingerprints whatever their key order and spacing.
		dec := json.NewDecoder(bytes.NewReader(in.Output))
		dec.UseNumber()
		var v any
		if err := dec.Decode(&v); err == nil {
			o.OutputFingerprint = r.jsonHMAC(v)
		}
	}
	return o
}
