package authzen

import (
	"fmt"

	"github.com/gatedhq/gated/internal/contract"
	"github.com/gatedhq/gated/internal/route"
)

// COAZ-MCP Draft 1's default mapping of tools/call (section 7.2): the action
// is the method, the resource the tool.
const (
	MCPToolsCall = "tools/call"
	MCPToolType  = "tool"
)

// AgentType is the subject type that names the agent itself rather than a
// person: its id is the event's agent_id.
const AgentType = "agent"

// GatedKey is the member of an evaluation's context that carries the rest
// of gated's event (evidence refs, the authorization state, ...); every
// other member of the context is part of what the call acts on.
const GatedKey = "gated"

// The profiles an evaluation is read under, input.authzen.profile in
// policy: a COAZ-MCP tools/call, or any other AuthZEN request.
const (
	ProfileAuthZEN = "authzen-1.0"
	ProfileCOAZMCP = "coaz-mcp-draft-1"
)

// DefaultAuthorizationState is the state a call starts from: the PEP
// authenticated to gated with its token and names its subject, which an
// evidence ref of its own records. More (validated, confirmed) comes from
// evidence or an approval.
const DefaultAuthorizationState = "authenticated"

// Call is what one evaluation asks gated to decide, before the catalog
// gives its category.
type Call struct {
	Tool      string
	Arguments map[string]any
	AgentID   string
	// Subject is the event's authorization_subject; nil when the subject
	// is the agent.
	Subject *route.Subject
	// Request is the AuthZEN request as policy reads it (input.authzen):
	// its profile, subject, action, resource and context less
	// context.gated. It is a field of its own, never part of
	// proposed_arguments, so nothing an agent writes into a tool's
	// arguments can pass for the PEP's request.
	Request map[string]any
	// Binds is what an approval binds besides the event: for a COAZ-MCP
	// tools/call, whose arguments are the tool's own, the whole request
	// policy reads, so an approval for one person's call (or one
	// resource's properties) allows no other.
	Binds   any
	subject string // the subject's fingerprint, for its evidence ref
	gated   gatedContext
}

// gatedContext is context.gated: the event's fields beyond what the call
// acts on, which a PEP that knows gated may send.
type gatedContext struct {
	EvidenceRefs       []any
	AuthorizationState string
	RiskDomain         string
	RecommendedRoute   route.Route
	UserIntent         string
}

// subjectTypes are the event's authorization_subject types, the contract's
// enum: an AuthZEN subject of another type is "unknown" there, and COAZ's
// "identity" (the person on whose behalf the agent acts) is a "user".
// policy.Principals makes only a person's type user://<id>.
var subjectTypes = map[string]string{
	"user": "user", "account": "account", "client": "client", "employee": "employee", "student": "student",
	"patient": "patient", "case": "case", "service": "service", "identity": "user",
}

// Call maps e onto gated's event: the action's name is the tool (for a
// COAZ-MCP tools/call the resource's id is), the subject is the event's
// authorization subject (or its agent, for a subject of type agent),
// context.agent is the agent, context.gated the rest of the event. The
// request itself, less context.gated, is Request (policy's input.authzen)
// and, for a general evaluation, also what the call acts on: its
// proposed_arguments, which an approval binds and argument rules read. A
// COAZ-MCP tools/call's proposed_arguments are the tool's arguments only,
// sent in resource.properties.arguments.
func (e Evaluation) Call() (*Call, error) {
	c := &Call{Tool: e.Action.Name, subject: contract.Fingerprint(e.Subject.Type + ":" + e.Subject.ID)}
	rest := map[string]any{}
	for k, v := range e.Context {
		if k != GatedKey {
			rest[k] = v
		}
	}
	if err := c.gated.parse(e.Context[GatedKey]); err != nil {
		return nil, err
	}
	if a, ok := e.Context["agent"]; ok && a != nil {
		s, ok := a.(string)
		if !ok {
			return nil, fmt.Errorf("context.agent must be a string, not %s", kind(a))
		}
		c.AgentID = s
	}
	if e.Subject.Type == AgentType {
		if c.AgentID != "" && c.AgentID != e.Subject.ID {
			return nil, fmt.Errorf("the subject is agent %q, and context.agent names another", e.Subject.ID)
		}
		c.AgentID = e.Subject.ID
	} else {
		t, ok := subjectTypes[e.Subject.Type]
		if !ok {
			t = "unknown"
		}
		c.Subject = &route.Subject{SubjectType: t, SubjectRef: e.Subject.ID}
	}
	profile := ProfileAuthZEN
	if e.Action.Name == MCPToolsCall {
		profile = ProfileCOAZMCP
	}
	c.Request = map[string]any{
		"profile": profile, "subject": entityDoc(e.Subject), "action": actionDoc(e.Action),
		"resource": entityDoc(e.Resource), "context": rest,
	}
	if profile == ProfileCOAZMCP {
		return c, c.mcpToolCall(e)
	}
	c.Arguments = map[string]any{"subject": entityDoc(e.Subject), "action": actionDoc(e.Action), "resource": entityDoc(e.Resource)}
	if len(rest) > 0 {
		c.Arguments["context"] = rest
	}
	return c, nil
}

// mcpToolCall is COAZ-MCP's default tools/call mapping read back: the tool
// is resource.id, its arguments resource.properties.arguments (gated's
// addition: the draft's default mapping sends none, and a tool the catalog
// describes is checked against its input schema, so without them it is
// checked as called with none).
func (c *Call) mcpToolCall(e Evaluation) error {
	if e.Resource.Type != MCPToolType {
		return fmt.Errorf("a COAZ-MCP %s names its tool as the resource, of type %q, not %q", MCPToolsCall, MCPToolType, e.Resource.Type)
	}
	c.Tool, c.Arguments = e.Resource.ID, map[string]any{}
	if v, ok := e.Resource.Properties["arguments"]; ok && v != nil {
		args, ok := v.(map[string]any)
		if !ok {
			return fmt.Errorf("resource.properties.arguments must be an object, not %s", kind(v))
		}
		c.Arguments = args
	}
	c.Binds = map[string]any{"authzen": c.Request}
	return nil
}

func (g *gatedContext) parse(v any) error {
	m, err := object(v, "context."+GatedKey)
	if err != nil || m == nil {
		return err
	}
	if r, ok := m["evidence_refs"]; ok && r != nil {
		refs, ok := r.([]any)
		if !ok {
			return fmt.Errorf("context.gated.evidence_refs must be an array, not %s", kind(r))
		}
		g.EvidenceRefs = refs
	}
	str := func(key string) (string, error) {
		v, ok := m[key]
		if !ok || v == nil {
			return "", nil
		}
		s, ok := v.(string)
		if !ok {
			return "", fmt.Errorf("context.gated.%s must be a string, not %s", key, kind(v))
		}
		return s, nil
	}
	if g.AuthorizationState, err = str("authorization_state"); err != nil {
		return err
	}
	if g.AuthorizationState != "" {
		if _, err := route.ParseAuthState(g.AuthorizationState); err != nil {
			return fmt.Errorf("context.gated.authorization_state %q is no authorization state (none, user_claimed, authenticated, validated, confirmed)", g.AuthorizationState)
		}
	}
	if g.RiskDomain, err = str("risk_domain"); err != nil {
		return err
	}
	if g.UserIntent, err = str("user_intent"); err != nil {
		return err
	}
	rec, err := str("recommended_route")
	if err != nil || rec == "" {
		return err
	}
	r, perr := route.ParseRoute(rec)
	if perr != nil {
		return fmt.Errorf("context.gated.recommended_route %q is none of accept, ask, defer, refuse", rec)
	}
	g.RecommendedRoute = r
	return nil
}

// Event is the call as the Agent Action Contract v1 event gated decides,
// with category the one the catalog gives the tool. A tool no catalog
// describes is declared unknown, for which the contract allows no accept:
// the PEP's recommendation is then at least defer.
func (c *Call) Event(category route.Category) map[string]any {
	rec := c.gated.RecommendedRoute
	if category == "" || category == route.Unknown {
		category, rec = route.Unknown, max(rec, route.Defer)
	}
	state := c.gated.AuthorizationState
	if state == "" {
		state = DefaultAuthorizationState
	}
	domain := c.gated.RiskDomain
	if domain == "" {
		domain = "unknown"
	}
	refs := append([]any{contract.RefDoc(c.subjectRef())}, c.gated.EvidenceRefs...)
	return contract.Event{
		ToolName: c.Tool, Category: category, AuthorizationState: state, EvidenceRefs: refs,
		RiskDomain: domain, Arguments: c.Arguments, RecommendedRoute: rec, AgentID: c.AgentID,
		AuthorizationSubject: c.Subject, UserIntent: c.gated.UserIntent,
	}.Doc()
}

// subjectRef is the evidence the PEP's request is: its subject,
// authenticated by the PEP, which authenticated to gated. Its source id is
// a fingerprint of the subject, so no personal data reaches it, and its
// text is fixed, so nothing the subject's id holds can read as a stronger
// authorization.
func (c *Call) subjectRef() route.EvidenceRef {
	return route.EvidenceRef{
		SourceID: "authzen.subject." + c.subject, Kind: "auth_event", TrustTier: "runtime",
		RedactionStatus: "redacted", Summary: "Subject authenticated by the AuthZEN policy enforcement point",
		Provenance: "authzen_pep", Freshness: route.Freshness{Status: "fresh"},
	}
}

// fingerprint is base32, not hex: a hex fingerprint can be all digits,
// which the secret scan may take for a card number.
func entityDoc(e *Entity) map[string]any {
	doc := map[string]any{"type": e.Type, "id": e.ID}
	if e.Properties != nil {
		doc["properties"] = e.Properties
	}
	return doc
}

func actionDoc(a *Action) map[string]any {
	doc := map[string]any{"name": a.Name}
	if a.Properties != nil {
		doc["properties"] = a.Properties
	}
	return doc
}
