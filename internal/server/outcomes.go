package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"time"
	"unicode/utf8"

	"github.com/go-chi/chi/v5"

	"github.com/gatedhq/gated/internal/actionresult"
	"github.com/gatedhq/gated/internal/audit"
)

// Error codes of POST /v1/decisions/{id}/outcome, for programs.
const (
	codeDecisionUnknown     = "decision_unknown"
	codeDecisionNotYours    = "decision_not_yours"
	codeDecisionNotExecuted = "decision_not_executed"
	codeOutcomeExists       = "outcome_exists"
)

// outcomeBody is the body of POST /v1/decisions/{id}/outcome: the Action
// API result envelope's status and flags, under its own names, and the
// output. Every field inside a block is required: a flag left out would
// otherwise be stored as false.
type outcomeBody struct {
	Status       *string `json:"status"`
	Verification *struct {
		OK *bool `json:"ok"`
	} `json:"verification"`
	Repair     *attemptBody    `json:"repair"`
	Rollback   *attemptBody    `json:"rollback"`
	Output     json.RawMessage `json:"output"`
	ErrorClass *string         `json:"error_class"`
}

// errorClassPattern is what an error_class may be: a class or type name as
// Python, JavaScript and Go's %T print one (dots, $, a pointer's *, a
// package path's slashes, generics' brackets), never free text — no space,
// quote or '=' — so that an error message cannot pass for a class.
var errorClassPattern = regexp.MustCompile(`^[A-Za-z_$*][A-Za-z0-9_$.*:<>\[\],/-]{0,127}$`)

type attemptBody struct {
	Attempted *bool `json:"attempted"`
	OK        *bool `json:"ok"`
}

// attempt checks one repair or rollback block.
func (a *attemptBody) attempt(name string) (*audit.Attempt, error) {
	switch {
	case a == nil:
		return nil, nil
	case a.Attempted == nil || a.OK == nil:
		return nil, fmt.Errorf("%s needs both attempted and ok (booleans)", name)
	}
	return &audit.Attempt{Attempted: *a.Attempted, OK: *a.OK}, nil
}

// decodeOutcome reads and checks an outcome body: JSON only (a cross-site
// form cannot post it), bounded in size and nesting, no field gated would
// not store — a field it ignored would read as recorded.
func decodeOutcome(w http.ResponseWriter, r *http.Request, maxBytes int64, maxDepth int) (audit.OutcomeInput, *bodyError) {
	var in audit.OutcomeInput
	raw, berr := readJSON(w, r, maxBytes)
	if berr != nil {
		return in, berr
	}
	bad := func(msg string) (audit.OutcomeInput, *bodyError) {
		return in, &bodyError{http.StatusBadRequest, msg}
	}
	if !utf8.Valid(raw) {
		return bad("the body is not valid UTF-8 (RFC 8259 requires UTF-8 JSON text)")
	}
	if depth, ok := nestingWithin(raw, maxDepth); !ok {
		return bad(fmt.Sprintf("JSON nesting exceeds %d levels (reached %d)", maxDepth, depth))
	}
	var b outcomeBody
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&b); err != nil {
		return bad(`the body must be a JSON object {"status", "verification", "repair", "rollback", "output", "error_class"} and nothing else: ` + err.Error())
	}
	if _, err := dec.Token(); err != io.EOF {
		return bad("malformed JSON: unexpected data after the object")
	}
	if b.Status == nil {
		return bad("status is required")
	}
	status, err := actionresult.ParseStatus(*b.Status)
	if err != nil {
		return bad(err.Error())
	}
	in.Status, in.Output = status, b.Output
	if b.Verification != nil {
		if b.Verification.OK == nil {
			return bad("verification needs ok (a boolean)")
		}
		in.Verification = &audit.Verification{OK: *b.Verification.OK}
	}
	if in.Repair, err = b.Repair.attempt("repair"); err != nil {
		return bad(err.Error())
	}
	if in.Rollback, err = b.Rollback.attempt("rollback"); err != nil {
		return bad(err.Error())
	}
	if b.ErrorClass != nil {
		switch {
		case status != actionresult.Failed && status != actionresult.Reverted:
			return bad("error_class goes with status failed or reverted only: the call failed")
		case !errorClassPattern.MatchString(*b.ErrorClass):
			return bad("error_class must be a class or type name (letters, digits and _ $ . * : < > [ ] , / -, at most 128), never an error's message")
		}
		in.ErrorClass = *b.ErrorClass
	}
	return in, nil
}

// handleRecordOutcome stores what happened after a call gated let run,
// for the token that asked for the decision (when gated runs open,
// decisions carry no token, and any caller may).
func handleRecordOutcome(d *Deps) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if d.Decisions == nil || d.Redactor == nil {
			writeError(w, http.StatusNotFound, noDecisionStore)
			return
		}
		in, berr := decodeOutcome(w, r, d.MaxBodyBytes, d.MaxDepth)
		if berr != nil {
			writeCodedError(w, berr.status, codeBadRequest, berr.msg)
			return
		}
		in.DecisionID, in.Time = chi.URLParam(r, "id"), time.Now()
		if t := tokenFrom(r.Context()); t != nil {
			in.TokenName = t.Name
		}
		if in.Output != nil && d.Engine != nil {
			// The decision's tool names the outputSchema; the store checks
			// the rest (that it is the caller's, and let the tool run).
			rec, err := d.Decisions.Get(r.Context(), in.DecisionID)
			if err != nil {
				writeOutcomeError(w, err)
				return
			}
			in.OutputConforms = d.Engine.OutputConforms(rec.ToolName, decodeOutput(in.Output))
		}
		o := d.Redactor.BuildOutcome(in)
		if err := d.Decisions.AddOutcome(r.Context(), o); err != nil {
			writeOutcomeError(w, err)
			return
		}
		if d.Metrics != nil {
			d.Metrics.OutcomeRecorded(o.Status)
		}
		writeJSON(w, http.StatusCreated, o)
	}
}

// decodeOutput decodes an output already known to be valid JSON, numbers
// as written, as the catalog's schemas expect them.
func decodeOutput(raw json.RawMessage) any {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	_ = dec.Decode(&v) // valid JSON: decodeOutcome decoded it
	return v
}

// writeOutcomeError answers a refusal of the decision store.
func writeOutcomeError(w http.ResponseWriter, err error) {
	switch {
	case errors.Is(err, audit.ErrNotFound):
		writeCodedError(w, http.StatusNotFound, codeDecisionUnknown,
			"no decision with that id is stored (one just answered may not be yet: in async audit mode its record is written within about 100 ms, later while the database is away)")
	case errors.Is(err, audit.ErrNotYours):
		writeCodedError(w, http.StatusForbidden, codeDecisionNotYours, err.Error())
	case errors.Is(err, audit.ErrNotExecuted):
		writeCodedError(w, http.StatusConflict, codeDecisionNotExecuted, err.Error())
	case errors.Is(err, audit.ErrOutcomeExists):
		writeCodedError(w, http.StatusConflict, codeOutcomeExists, err.Error())
	default:
		writeError(w, http.StatusServiceUnavailable, "the decision store is unavailable")
	}
}
