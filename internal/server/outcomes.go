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

	"github.com/go-chi/chi/v5"

	"github.com/gatedhq/gated/internal/actionapi"
	"github.com/gatedhq/gated/internal/actionresult"
	"github.com/gatedhq/gated/internal/audit"
	"github.com/gatedhq/gated/internal/eventcodec"
)

// Error codes of POST /v1/decisions/{id}/outcome, for programs.
const (
	codeDecisionUnknown     = "decision_unknown"
	codeDecisionNotYours    = "decision_not_yours"
	codeDecisionNotExecuted = "decision_not_executed"
	codeOutcomeExists       = "outcome_exists"
	codeOutcomeOtherAction  = "outcome_action_mismatch"
)

// outcomeBody is the body of POST /v1/decisions/{id}/outcome: the Action
// API result envelope, whole and under its own names, and error_class.
// Every field inside a block is required: a flag left out would otherwise
// be stored as false. The envelope's fields gated does not store
// (actionType and riskTier, checked; verification.checks and feedback,
// free text that may quote what the call touched) are named in the
// answer's not_kept, so that none reads as recorded.
type outcomeBody struct {
	Status       *string `json:"status"`
	ActionType   *string `json:"actionType"`
	RiskTier     *string `json:"riskTier"`
	Verification *struct {
		OK     *bool           `json:"ok"`
		Checks json.RawMessage `json:"checks"`
	} `json:"verification"`
	Repair     *attemptBody    `json:"repair"`
	Rollback   *attemptBody    `json:"rollback"`
	Output     json.RawMessage `json:"output"`
	Feedback   json.RawMessage `json:"feedback"`
	ErrorClass *string         `json:"error_class"`
}

// outcomeRequest is a checked outcome body: what is stored, and what of
// the envelope is only checked or dropped.
type outcomeRequest struct {
	audit.OutcomeInput
	actionType string   // the envelope's actionType: must be the decision's tool
	notKept    []string // envelope fields accepted but not stored
}

// outcomeAnswer is the 201 answer: the stored outcome, and the fields of
// the body it does not hold.
type outcomeAnswer struct {
	*audit.Outcome
	NotKept []string `json:"not_kept,omitempty"`
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
// form cannot post it), bounded in size and nesting, and no field outside
// the result envelope and error_class.
func decodeOutcome(w http.ResponseWriter, r *http.Request, maxBytes int64, maxDepth int) (outcomeRequest, *bodyError) {
	var req outcomeRequest
	in := &req.OutcomeInput
	raw, berr := readJSON(w, r, maxBytes)
	if berr != nil {
		return req, berr
	}
	bad := func(msg string) (outcomeRequest, *bodyError) {
		return req, &bodyError{http.StatusBadRequest, msg}
	}
	if err := eventcodec.CheckText(raw, maxDepth); err != nil {
		return bad(err.Error())
	}
	var b outcomeBody
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&b); err != nil {
		return bad(`the body must be an Action API result envelope {"status", "actionType", "riskTier", "output", "verification", "repair", "rollback", "feedback"}, with "error_class" besides, and nothing else: ` + err.Error())
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
	if b.ActionType != nil {
		if *b.ActionType == "" {
			return bad("actionType, when sent, must name the decision's tool")
		}
		req.actionType = *b.ActionType
		req.notKept = append(req.notKept, "actionType")
	}
	if b.RiskTier != nil {
		if _, ok := actionapi.ParseTier(*b.RiskTier); !ok {
			return bad(fmt.Sprintf("riskTier %q is not one of R0, R1, R2, R3, R4", *b.RiskTier))
		}
		req.notKept = append(req.notKept, "riskTier")
	}
	if b.Verification != nil {
		if b.Verification.OK == nil {
			return bad("verification needs ok (a boolean)")
		}
		in.Verification = &audit.Verification{OK: *b.Verification.OK}
		if b.Verification.Checks != nil {
			req.notKept = append(req.notKept, "verification.checks")
		}
	}
	if b.Feedback != nil {
		req.notKept = append(req.notKept, "feedback")
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
	return req, nil
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
		req, berr := decodeOutcome(w, r, d.MaxBodyBytes, d.MaxDepth)
		if berr != nil {
			writeCodedError(w, berr.status, codeBadRequest, berr.msg)
			return
		}
		in := &req.OutcomeInput
		in.DecisionID, in.Time = chi.URLParam(r, "id"), time.Now()
		if t := tokenFrom(r.Context()); t != nil {
			in.TokenName = t.Name
		}
		// The decision's tool names the outputSchema and must be the
		// envelope's actionType; the store checks the rest (that it is the
		// caller's, and let the tool run).
		var rec *audit.Record
		if (in.Output != nil && d.Engine != nil) || req.actionType != "" {
			var err error
			if rec, err = d.Decisions.Get(r.Context(), in.DecisionID); err != nil {
				writeOutcomeError(w, err)
				return
			}
			if in.Output != nil && d.Engine != nil {
				in.OutputConforms = d.Engine.OutputConforms(rec.ToolName, decodeOutput(in.Output))
			}
		}
		o := d.Redactor.BuildOutcome(*in)
		if req.actionType != "" && req.actionType != rec.ToolName {
			// Said only to the token that asked: to anyone else, which tool
			// a decision was about is not theirs to learn.
			if rec.TokenName != o.TokenName {
				writeOutcomeError(w, audit.ErrNotYours)
				return
			}
			writeCodedError(w, http.StatusConflict, codeOutcomeOtherAction,
				"actionType does not name the tool this decision was about; report each call's outcome against its own decision")
			return
		}
		if err := d.Decisions.AddOutcome(r.Context(), o); err != nil {
			writeOutcomeError(w, err)
			return
		}
		if d.Metrics != nil {
			d.Metrics.OutcomeRecorded(o.Status)
		}
		writeJSON(w, http.StatusCreated, outcomeAnswer{o, req.notKept})
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
	if errors.Is(err, audit.ErrNotFound) {
		writeCodedError(w, storeStatus(err), storeCode(err),
			"no decision with that id is stored (one just answered may not be yet: in async audit mode its record is written within about 100 ms, later while the database is away)")
		return
	}
	writeStoreError(w, err, "", "the decision store is unavailable")
}
