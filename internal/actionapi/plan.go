// Package actionapi is the Action API v4 LTS plan envelope (spec
// action-api-lts.md): it decodes a plan strictly, turns it into an Agent
// Action Contract v1 event for gate's one decision path, adds the plan's
// own frozen rules as findings after the catalog join, and maps the route
// to the LTS terminal status. See docs/action-api.md.
package actionapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
)

// Plan is one Action API plan envelope. Every field of the LTS envelope is
// known; anything else is refused, since an unknown field may carry a
// safety gate gated would silently skip.
type Plan struct {
	ActionID   string   `json:"actionId"`
	ActionType string   `json:"actionType"`
	RiskTier   *string  `json:"riskTier"`
	Confidence *float64 `json:"confidence"`
	// Reason is the planner's free text. It is neither stored nor logged.
	Reason       string         `json:"reason"`
	Input        map[string]any `json:"input"`
	RollbackPlan any            `json:"rollbackPlan"`
	Verification *Verification  `json:"verification"`
	Scope        *Scope         `json:"scope"`
	// Gated is gated's extension: what the LTS envelope cannot say about
	// who asks and on what authority, in Agent Action Contract v1 terms.
	Gated *Extension `json:"gated"`
}

// Verification is the plan's verification declaration.
type Verification struct {
	Required *bool    `json:"required"`
	Commands []string `json:"commands"`
}

// Scope is the workspace files the action may touch.
type Scope struct {
	AllowedFiles   []string `json:"allowedFiles"`
	AllowedDirs    []string `json:"allowedDirs"`
	ForbiddenFiles []string `json:"forbiddenFiles"`
}

// Extension carries the contract fields a plan has no place for. Their
// values are checked by the contract like any event's.
type Extension struct {
	AgentID            string `json:"agent_id,omitempty"`
	AuthorizationState string `json:"authorization_state,omitempty"`
	RiskDomain         string `json:"risk_domain,omitempty"`
	EvidenceRefs       []any  `json:"evidence_refs,omitempty"`
}

// Decode reads a plan from body, which must already be one JSON object
// (eventcodec.Decode checked UTF-8, nesting and trailing data; the server,
// size). Unknown fields, wrong types and missing required fields are
// errors naming them.
func Decode(body []byte) (*Plan, error) {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	dec.UseNumber() // input values stay exact for the schema and fingerprint
	var p Plan
	if err := dec.Decode(&p); err != nil {
		return nil, planError(err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("the action plan is invalid: unexpected data after the object")
	}
	switch {
	case strings.TrimSpace(p.ActionType) == "":
		return nil, errors.New("the action plan is invalid: actionType is required and must be a non-empty string")
	case p.Input == nil:
		return nil, errors.New("the action plan is invalid: input is required and must be an object")
	case p.Confidence != nil && (*p.Confidence < 0 || *p.Confidence > 1):
		return nil, errors.New("the action plan is invalid: confidence must be a number from 0 to 1")
	}
	return &p, nil
}

// Binds is what an approval of the plan binds besides its input (the
// event's arguments): every other part of the plan that decides what runs
// or how it is undone and checked. A plan resent with another rollback
// plan, verification, scope or tier is another call. The reason and the
// confidence are the planner's commentary, and the gated extension is the
// event's own (agent, domain, evidence), so neither is bound here.
func (p *Plan) Binds() any {
	return struct {
		RiskTier     *string       `json:"riskTier"`
		RollbackPlan any           `json:"rollbackPlan"`
		Verification *Verification `json:"verification"`
		Scope        *Scope        `json:"scope"`
	}{p.RiskTier, p.RollbackPlan, p.Verification, p.Scope}
}

// planError rewords encoding/json's errors: they name Go types and fields.
func planError(err error) error {
	if te, ok := errors.AsType[*json.UnmarshalTypeError](err); ok {
		return fmt.Errorf("the action plan is invalid: %s must not be a JSON %s", fieldName(te.Field), te.Value)
	}
	if name, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
		return fmt.Errorf("the action plan is invalid: unknown field %s (the Action API LTS envelope does not define it)", name)
	}
	return fmt.Errorf("the action plan is invalid: %w", err)
}

func fieldName(f string) string {
	if f == "" {
		return "the plan"
	}
	return f
}
