package contract

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"golang.org/x/text/language"
	"golang.org/x/text/message"

	"github.com/gatedhq/gated/api"
)

// ValidationError is one schema violation, located by a JSON path such as
// $.evidence_refs[0].kind.
type ValidationError struct {
	Path    string `json:"path"`
	Keyword string `json:"keyword"`
	Message string `json:"message"`
}

var (
	contractSchema = compileContractSchema()
	printer        = message.NewPrinter(language.English)
)

func compileContractSchema() *jsonschema.Schema {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(api.ContractSchema))
	if err != nil {
		panic(fmt.Sprintf("embedded contract schema is not JSON: %v", err))
	}
	c := jsonschema.NewCompiler()
	const url = "https://aana.dev/schemas/agent_action_contract_v1.schema.json"
	if err := c.AddResource(url, doc); err != nil {
		panic(fmt.Sprintf("embedded contract schema: %v", err))
	}
	return c.MustCompile(url)
}

// validate checks doc against the contract schema and returns every leaf
// violation, unsorted (Prepare sorts them with its own).
func validate(doc map[string]any) []ValidationError {
	err := contractSchema.Validate(doc)
	if err == nil {
		return nil
	}
	verr, ok := err.(*jsonschema.ValidationError)
	if !ok {
		return []ValidationError{{Path: "$", Keyword: "schema", Message: err.Error()}}
	}
	var out []ValidationError
	collectLeaves(verr, doc, &out)
	return out
}

func collectLeaves(e *jsonschema.ValidationError, doc any, out *[]ValidationError) {
	if len(e.Causes) == 0 {
		*out = append(*out, ValidationError{
			Path:    jsonPath(e.InstanceLocation, doc),
			Keyword: strings.Join(e.ErrorKind.KeywordPath(), "/"),
			Message: e.ErrorKind.LocalizedString(printer),
		})
		return
	}
	for _, c := range e.Causes {
		collectLeaves(c, doc, out)
	}
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
