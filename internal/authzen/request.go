// Package authzen translates the OpenID AuthZEN Authorization API 1.0
// (Access Evaluation and Access Evaluations) onto gated's decision path:
// a request read from its decoded JSON, top-level defaults merged into each
// evaluation, the Agent Action Contract v1 event each evaluation stands
// for, and the decision answered as AuthZEN's {decision, context}. It also
// reads a COAZ-MCP (Draft 1) tools/call, the OpenID binding of AuthZEN to
// MCP: the person is the subject, the agent is context.agent, the tool is
// the resource. The HTTP handlers are internal/server/authzen.go; the
// mapping is documented in docs/integrations.md.
package authzen

import "fmt"

// MaxEvaluations bounds the evaluations of one Access Evaluations request:
// each is a whole decision (catalog, policy, audit record), so a batch
// beyond it is refused with 400 rather than decided in part.
const MaxEvaluations = 64

// Semantic is an Access Evaluations request's options.evaluations_semantic.
type Semantic string

// The three semantics of the specification (section 7.1.2.1).
const (
	ExecuteAll          Semantic = "execute_all"
	DenyOnFirstDeny     Semantic = "deny_on_first_deny"
	PermitOnFirstPermit Semantic = "permit_on_first_permit"
)

// Entity is a subject or a resource: a type, an id scoped to it, and the
// properties the PEP sends along.
type Entity struct {
	Type       string
	ID         string
	Properties map[string]any // nil when the request has none
}

// Action is what the subject means to do.
type Action struct {
	Name       string
	Properties map[string]any
}

// Evaluation is one access request. A field is nil when the request left
// it out (a batch's item then takes the top-level default).
type Evaluation struct {
	Subject  *Entity
	Action   *Action
	Resource *Entity
	Context  map[string]any
}

// Item is one evaluation of a batch after the defaults were merged, or why
// it cannot be decided (then Err is set and the item answers false).
type Item struct {
	Evaluation Evaluation
	Err        error
}

// Batch is an Access Evaluations request. Single is set when it carries no
// evaluations (absent or empty): it is then one Access Evaluation request,
// answered as one.
type Batch struct {
	Single   bool
	Items    []Item
	Semantic Semantic
}

// ParseEvaluation reads an Access Evaluation request: subject, action and
// resource are required, context is optional. Unknown fields are ignored,
// as the specification requires.
func ParseEvaluation(doc map[string]any) (Evaluation, error) {
	e, err := parseEvaluation(doc, "")
	if err != nil {
		return Evaluation{}, err
	}
	return e, e.complete("")
}

// ParseEvaluations reads an Access Evaluations request. What pertains to
// the whole request (a malformed top-level value, evaluations that are no
// array or too many, an unknown semantic) is an error; what pertains to one
// evaluation (a malformed or missing field in it) is that item's Err, which
// the specification answers with decision false in its place.
func ParseEvaluations(doc map[string]any) (*Batch, error) {
	top, err := parseEvaluation(doc, "")
	if err != nil {
		return nil, err
	}
	b := &Batch{Semantic: ExecuteAll}
	if err := b.parseOptions(doc["options"]); err != nil {
		return nil, err
	}
	raw, present := doc["evaluations"]
	var list []any
	if present && raw != nil {
		var ok bool
		if list, ok = raw.([]any); !ok {
			return nil, fmt.Errorf("evaluations must be an array, not %s", kind(raw))
		}
	}
	if len(list) == 0 {
		// Backwards compatible with the Access Evaluation API (7.1).
		if err := top.complete(""); err != nil {
			return nil, err
		}
		return &Batch{Single: true, Items: []Item{{Evaluation: top}}, Semantic: b.Semantic}, nil
	}
	if len(list) > MaxEvaluations {
		return nil, fmt.Errorf("evaluations holds %d evaluations; gated decides at most %d in one request", len(list), MaxEvaluations)
	}
	b.Items = make([]Item, len(list))
	for i, v := range list {
		b.Items[i] = item(top, v, fmt.Sprintf("evaluations[%d].", i))
	}
	return b, nil
}

// item merges one evaluation over the top-level defaults: a key the
// evaluation carries replaces the default whole (no merging inside an
// entity), as section 7.1.1 and the certification scenario's 3.2.7 say.
func item(top Evaluation, v any, at string) Item {
	m, ok := v.(map[string]any)
	if !ok {
		return Item{Err: fmt.Errorf("%s must be an object, not %s", at[:len(at)-1], kind(v))}
	}
	e, err := parseEvaluation(m, at)
	if err != nil {
		return Item{Err: err}
	}
	if e.Subject == nil {
		e.Subject = top.Subject
	}
	if e.Action == nil {
		e.Action = top.Action
	}
	if e.Resource == nil {
		e.Resource = top.Resource
	}
	if _, has := m["context"]; !has {
		e.Context = top.Context
	}
	if err := e.complete(at); err != nil {
		return Item{Err: err}
	}
	return Item{Evaluation: e}
}

func (b *Batch) parseOptions(v any) error {
	if v == nil {
		return nil
	}
	opts, ok := v.(map[string]any)
	if !ok {
		return fmt.Errorf("options must be an object, not %s", kind(v))
	}
	s, present := opts["evaluations_semantic"]
	if !present || s == nil {
		return nil
	}
	name, ok := s.(string)
	if !ok {
		return fmt.Errorf("options.evaluations_semantic must be a string, not %s", kind(s))
	}
	switch sem := Semantic(name); sem {
	case ExecuteAll, DenyOnFirstDeny, PermitOnFirstPermit:
		b.Semantic = sem
		return nil
	}
	return fmt.Errorf("options.evaluations_semantic %q is none of execute_all, deny_on_first_deny, permit_on_first_permit", name)
}

// parseEvaluation reads the four keys of doc that are present; at prefixes
// the names in errors. Other keys are ignored.
func parseEvaluation(doc map[string]any, at string) (Evaluation, error) {
	var e Evaluation
	var err error
	if v, ok := doc["subject"]; ok {
		if e.Subject, err = parseEntity(v, at+"subject"); err != nil {
			return e, err
		}
	}
	if v, ok := doc["action"]; ok {
		if e.Action, err = parseAction(v, at+"action"); err != nil {
			return e, err
		}
	}
	if v, ok := doc["resource"]; ok {
		if e.Resource, err = parseEntity(v, at+"resource"); err != nil {
			return e, err
		}
	}
	if v, ok := doc["context"]; ok {
		if e.Context, err = object(v, at+"context"); err != nil {
			return e, err
		}
	}
	return e, nil
}

// complete reports the first required key e lacks.
func (e Evaluation) complete(at string) error {
	switch {
	case e.Subject == nil:
		return missing(at + "subject")
	case e.Action == nil:
		return missing(at + "action")
	case e.Resource == nil:
		return missing(at + "resource")
	}
	return nil
}

func missing(name string) error {
	return fmt.Errorf("%s is required", name)
}

func parseEntity(v any, name string) (*Entity, error) {
	m, err := object(v, name)
	if err != nil {
		return nil, err
	}
	if m == nil {
		return nil, missing(name)
	}
	e := &Entity{}
	if e.Type, err = text(m, "type", name); err != nil {
		return nil, err
	}
	if e.ID, err = text(m, "id", name); err != nil {
		return nil, err
	}
	if e.Properties, err = object(m["properties"], name+".properties"); err != nil {
		return nil, err
	}
	return e, nil
}

func parseAction(v any, name string) (*Action, error) {
	m, err := object(v, name)
	if err != nil {
		return nil, err
	}
	if m == nil {
		return nil, missing(name)
	}
	a := &Action{}
	if a.Name, err = text(m, "name", name); err != nil {
		return nil, err
	}
	if a.Properties, err = object(m["properties"], name+".properties"); err != nil {
		return nil, err
	}
	return a, nil
}

// object is v as an object; nil (absent or JSON null) is nil.
func object(v any, name string) (map[string]any, error) {
	if v == nil {
		return nil, nil
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%s must be an object, not %s", name, kind(v))
	}
	return m, nil
}

// text is the required, non-empty string m[key].
func text(m map[string]any, key, name string) (string, error) {
	v, ok := m[key]
	if !ok || v == nil {
		return "", missing(name + "." + key)
	}
	s, ok := v.(string)
	if !ok {
		return "", fmt.Errorf("%s.%s must be a string, not %s", name, key, kind(v))
	}
	if s == "" {
		return "", fmt.Errorf("%s.%s must not be empty", name, key)
	}
	return s, nil
}

// kind names the JSON type of a decoded value for an error message.
func kind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case []any:
		return "an array"
	case map[string]any:
		return "an object"
	}
	return "a number"
}
