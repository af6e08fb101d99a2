package policy

import (
	"fmt"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/rego"
)

// resultValue keeps OPA's answer an ast.Value (rego.EvalGenerateJSON):
// output reads the few fields gated needs straight from it, instead of
// OPA converting all of it to Go values and gated taking those through
// JSON into evalOutput.
func resultValue(t *ast.Term, _ *rego.EvalContext) (any, error) { return t.Value, nil }

var (
	keyCandidates = ast.StringTerm("candidates")
	keyFindings   = ast.StringTerm("findings")
	keyMalformed  = ast.StringTerm("malformed")
	keyTotal      = ast.StringTerm("total")
	keyPolicy     = ast.StringTerm("policy")
	keyLayer      = ast.StringTerm("layer")
	keyGrant      = ast.StringTerm("grant")
	keyRevoked    = ast.StringTerm("revoked")
	keyExpired    = ast.StringTerm("expired")
	keyConditions = ast.StringTerm("conditions")
)

// output reads the decision module's `out` (decisionModule).
func output(v any) (*evalOutput, error) {
	r := &resultReader{}
	obj := r.object("out", v)
	out := &evalOutput{Malformed: r.int(obj, keyMalformed), Total: r.int(obj, keyTotal)}
	if cands, ok := r.field(obj, keyCandidates).(ast.Set); ok {
		out.Candidates = make([]candidate, 0, cands.Len())
		cands.Foreach(func(t *ast.Term) {
			c := r.object("candidate", t.Value)
			out.Candidates = append(out.Candidates, candidate{
				Policy: r.string(c, keyPolicy), Layer: r.int(c, keyLayer), Grant: r.int(c, keyGrant),
				Principal: r.string(c, keyPrincipal), Revoked: r.bool(c, keyRevoked),
				Expired: r.bool(c, keyExpired), Conditions: r.bool(c, keyConditions),
			})
		})
	} else {
		r.fail(keyCandidates)
	}
	if fs, ok := r.field(obj, keyFindings).(*ast.Array); ok {
		// Custom findings are few (maxCustomFindings) and checked field by
		// field as JSON by customFindings.
		out.Findings = make([]map[string]any, 0, fs.Len())
		fs.Foreach(func(t *ast.Term) {
			m, err := ast.JSON(t.Value)
			if f, ok := m.(map[string]any); ok && err == nil {
				out.Findings = append(out.Findings, f)
			} else {
				r.fail(keyFindings)
			}
		})
	} else {
		r.fail(keyFindings)
	}
	if r.err != nil {
		return nil, r.err
	}
	return out, nil
}

// resultReader reads fields of OPA's answer, keeping the first that is
// missing or of the wrong type; the decision module always gives every
// field, so that is a bug, which refuses like any evaluation error.
type resultReader struct{ err error }

func (r *resultReader) fail(what any) {
	if r.err == nil {
		r.err = fmt.Errorf("rego result: %v is missing or of the wrong type", what)
	}
}

func (r *resultReader) object(what string, v any) ast.Object {
	obj, ok := v.(ast.Object)
	if !ok {
		r.fail(what)
		return ast.NewObject()
	}
	return obj
}

func (r *resultReader) field(obj ast.Object, key *ast.Term) ast.Value {
	if t := obj.Get(key); t != nil {
		return t.Value
	}
	return nil
}

func (r *resultReader) string(obj ast.Object, key *ast.Term) string {
	s, ok := r.field(obj, key).(ast.String)
	if !ok {
		r.fail(key)
	}
	return string(s)
}

func (r *resultReader) bool(obj ast.Object, key *ast.Term) bool {
	b, ok := r.field(obj, key).(ast.Boolean)
	if !ok {
		r.fail(key)
	}
	return bool(b)
}

func (r *resultReader) int(obj ast.Object, key *ast.Term) int {
	n, ok := r.field(obj, key).(ast.Number)
	i, isInt := n.Int()
	if !ok || !isInt {
		r.fail(key)
	}
	return i
}
