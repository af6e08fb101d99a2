// Package actionapi is the Action API v4 LTS plan envelope (spec
// action-api-lts.md): it decodes a plan strictly, turns it into an Agent
// Action Contract v1 event for gate's one decision path, adds the plan's
// own frozen rules as findings after the catalog join, and maps the route
// to the LTS terminal status. See docs/action-api.md.
package actionapi

import (
	stdjson "encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
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
//
// Member names match exactly and only once, as a runtime reading the same
// body by its field names does: encoding/json would also take "INPUT" or
// "RollbackPlan" for input and rollbackPlan (the last of them winning), so
// gated would decide on one part of the body while the runtime ran
// another. encoding/json/v2's semantics (its prototype, go-json-experiment)
// refuse both.
func Decode(body []byte) (*Plan, error) {
	var p Plan
	if err := json.Unmarshal(body, &p, json.RejectUnknownMembers(true), json.WithUnmarshalers(exactNumbers)); err != nil {
		return nil, planError(err)
	}
	switch {
	case strings.TrimSpace(p.ActionType) == "":
		return nil, errors.New("the action plan is invalid: actionType is required and must be a non-empty string")
	case p.Input == nil:
		return nil, errors.New("the action plan is invalid: input is required and must be an object")
	case p.Confidence != nil && (*p.Confidence < 0 || *p.Confidence > 1):
		return nil, errors.New("the action plan is invalid: confidence must be a number from 0 to 1")
	}
	if err := checkNoExecutorRef(p.Gated); err != nil {
		return nil, err
	}
	return &p, nil
}

// exactNumbers keeps a number inside input or the rollback plan as the
// encoding/json Number of its text, as DecodeEvent does for an event's
// arguments: the schema checks and the approval digest see it exactly.
var exactNumbers = json.UnmarshalFromFunc(func(dec *jsontext.Decoder, v *any) error {
	if dec.PeekKind() != '0' {
		return json.SkipFunc
	}
	tok, err := dec.ReadToken()
	if err != nil {
		return err
	}
	*v = stdjson.Number(tok.String())
	return nil
})

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

// planError rewords the decoder's errors, which name Go types, as the
// plan's fields.
func planError(err error) error {
	if serr, ok := errors.AsType[*jsontext.SyntacticError](err); ok && serr.Err == jsontext.ErrDuplicateName {
		return fmt.Errorf("the action plan is invalid: %s is given more than once", fieldName(serr.JSONPointer))
	}
	if serr, ok := errors.AsType[*json.SemanticError](err); ok {
		switch {
		case serr.Err == json.ErrUnknownName:
			return fmt.Errorf("the action plan is invalid: unknown field %q (the Action API LTS envelope does not define it)", serr.JSONPointer.LastToken())
		case serr.JSONKind != 0:
			return fmt.Errorf("the action plan is invalid: %s must not be a JSON %s", fieldName(serr.JSONPointer), kindName(serr.JSONKind))
		}
	}
	return fmt.Errorf("the action plan is invalid: %w", err)
}

// fieldName is the field at p as the LTS spec writes it (verification.commands).
func fieldName(p jsontext.Pointer) string {
	if p == "" {
		return "the plan"
	}
	return strings.Join(slices.Collect(p.Tokens()), ".")
}

func kindName(k jsontext.Kind) string {
	switch k {
	case 'n':
		return "null"
	case 'f', 't':
		return "boolean"
	case '"':
		return "string"
	case '0':
		return "number"
	case '{':
		return "object"
	case '[':
		return "array"
	}
	return "value"
}
