package contract

import (
	"strconv"
	"strings"

	"github.com/gatedhq/gated/api"
	"github.com/gatedhq/gated/internal/opfile"
)

// ValidationError is one schema violation, located by a JSON path such as
// $.evidence_refs[0].kind: the reference's form of validation_errors, not
// the JSON Pointers of operator files' problems.
type ValidationError struct {
	Path    string `json:"path"`
	Keyword string `json:"keyword"`
	Message string `json:"message"`
}

var contractSchema = opfile.MustCompileSchema("https://aana.dev/schemas/agent_action_contract_v1.schema.json", api.ContractSchema)

// validate checks doc against the contract schema and returns every leaf
// violation as the validator reports it, unsorted (Prepare sorts them with
// its own).
func validate(doc map[string]any) []ValidationError {
	vs := opfile.Leaves(contractSchema, doc, opfile.Message)
	if len(vs) == 0 {
		return nil
	}
	out := make([]ValidationError, len(vs))
	for i, v := range vs {
		out[i] = ValidationError{Path: jsonPath(v.Path, doc), Keyword: v.Keyword, Message: v.Message}
	}
	return out
}

// jsonPath renders a JSON-pointer token list as $.a.b[0], walking the
// document so that array indices are told apart from numeric keys.
func jsonPath(tokens []string, doc any) string {
	var b strings.Builder
	b.WriteByte('$')
	cur := doc
	for _, tok := range tokens {
		switch v := cur.(type) {
		case []any:
			b.WriteByte('[')
			b.WriteString(tok)
			b.WriteByte(']')
			if i, err := strconv.Atoi(tok); err == nil && i >= 0 && i < len(v) {
				cur = v[i]
			} else {
				cur = nil
			}
		default:
			if isIdent(tok) {
				b.WriteByte('.')
				b.WriteString(tok)
			} else {
				b.WriteString("[" + strconv.Quote(tok) + "]")
			}
			if m, ok := v.(map[string]any); ok {
				cur = m[tok]
			} else {
				cur = nil
			}
		}
	}
	return b.String()
}

func isIdent(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || i > 0 && c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}
