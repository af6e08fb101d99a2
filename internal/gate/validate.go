package gate

import (
	"github.com/gatedhq/gated/internal/contract"
	"github.com/gatedhq/gated/internal/route"
)

// Validation is the answer of a validation-only call: whether an event is a
// valid Agent Action Contract v1 event, and where it is not. Nothing is
// decided or recorded.
type Validation struct {
	Valid         bool                       `json:"valid"`
	Errors        []contract.ValidationError `json:"errors"`
	SchemaVersion string                     `json:"schema_version"`
}

// Validate checks doc as the decision path would, without deciding on it.
func Validate(doc map[string]any) Validation {
	p := contract.Prepare(doc)
	v := Validation{Valid: p.Event != nil, Errors: p.ValidationErrors, SchemaVersion: route.ContractVersion}
	if v.Errors == nil {
		v.Errors = []contract.ValidationError{}
	}
	if !v.Valid && len(v.Errors) == 0 {
		// Normalisation refused the event before the schema ran.
		for _, f := range p.Findings {
			v.Errors = append(v.Errors, contract.ValidationError{Path: "$", Keyword: f.Code, Message: f.Message})
		}
	}
	return v
}
