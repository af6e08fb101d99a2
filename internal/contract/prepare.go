// Package contract applies the rules of the Agent Action Contract v1 as the
// AANA reference gate applies them: normalisation, schema validation,
// evidence-supported authorization, the category routes and the evidence
// checks (see spec/aana-v1-reference.md). Every rule is a pure
// function of the event and the time; the results are route.Findings.
package contract

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"maps"
	"slices"

	"github.com/gatedhq/gated/internal/route"
)

// Declared is what the runtime sent, read leniently so that even an invalid
// event can be described in the answer and the audit record.
type Declared struct {
	ToolName           string
	ToolCategory       string
	AuthorizationState string
	RiskDomain         string
	RecommendedRoute   string
	RequestID          string
	AgentID            string
	Arguments          any // proposed_arguments as sent; may be absent or not an object
}

// Prepared is an event after normalisation and validation.
type Prepared struct {
	Event            *route.Event // nil when the event is invalid
	Declared         Declared
	Findings         []route.Finding // the refusal of an invalid event
	ValidationErrors []ValidationError
	// RuntimeRoute is the runtime's recommended route after normalisation
	// lowered a forbidden accept (section 1.1 of the reference).
	RuntimeRoute string
	// Lifted is set when evidence lifted the declared authorization state
	// so that the runtime's accept satisfies the schema (section 1.3).
	Lifted bool

	// sentRoute is the recommended route as sent, before lowering, and
	// versioned whether the event named its schema version: Confirmed
	// lowers the route again for the confirmed state.
	sentRoute string
	versioned bool
}

// Prepare normalises a decoded JSON object the way the reference does and
// validates it against the contract schema. doc is not modified.
func Prepare(doc map[string]any) *Prepared {
	p := &Prepared{Declared: declaredOf(doc)}
	// The bounds come first, on the document as decoded: an event that
	// breaks one is refused before anything is copied, normalised or
	// validated (see bounds.go).
	if errs := sizeErrors(doc); len(errs) > 0 {
		p.ValidationErrors, p.Findings = errs, []route.Finding{schemaFailed()}
		return p
	}
	if !NumbersInRange(doc) {
		p.ValidationErrors = numberErrors(doc)
		p.Findings = []route.Finding{{
			Source: route.SourceContract, Code: route.CodeArgumentNumberOutOfRange, Route: route.Refuse, Blocking: true,
			Message: fmt.Sprintf("the number at %s has more than %d significant digits or an exponent beyond ±%d; gated does not decide on such numbers",
				p.ValidationErrors[0].Path, MaxNumberDigits, MaxNumberExponent),
		}}
		return p
	}
	work := maps.Clone(doc)

	_, p.versioned = doc["schema_version"]
	p.sentRoute, _ = work["recommended_route"].(string)
	normFailed := false
	if !p.versioned {
		// Unversioned events are the quickstart dialect: enums must be exact
		// and a forbidden runtime accept is lowered before validation.
		normFailed = !enumsExact(work)
		if !normFailed {
			lowerForbiddenAccept(work)
		}
	}
	if refs, ok := work["evidence_refs"].([]any); ok {
		work["evidence_refs"] = normalizeRefs(refs)
	}
	p.Lifted = liftAuthorization(work)
	p.RuntimeRoute, _ = work["recommended_route"].(string)

	p.ValidationErrors = append(validate(work), identifierErrors(doc)...)
	sortByPath(p.ValidationErrors)
	switch {
	case normFailed:
		p.Findings = []route.Finding{{
			Source: route.SourceContract, Code: route.CodeContractNormalizationFailed, Route: route.Refuse, Blocking: true,
			Message: "an enum field or proposed_arguments has a value the contract does not allow",
		}}
	case len(p.ValidationErrors) > 0:
		p.Findings = []route.Finding{schemaFailed()}
	default:
		p.Event = toEvent(work)
	}
	return p
}

// Confirmed is p as Prepare makes the same event declaring
// authorization_state confirmed (what an approval resolves), without
// preparing it again: only the state and the runtime's route, lowered for
// the declared state, can differ. The schema needs no second look:
// confirmed meets every condition it puts on the state, so the event
// validates confirmed whenever it validated as sent. nil for an invalid
// event.
func (p *Prepared) Confirmed() *Prepared {
	if p.Event == nil {
		return nil
	}
	ev := *p.Event
	ev.AuthorizationState = route.AuthConfirmed
	ev.EvidenceRefs = slices.Clone(ev.EvidenceRefs)
	q := &Prepared{Event: &ev, Declared: p.Declared, RuntimeRoute: p.sentRoute, sentRoute: p.sentRoute, versioned: p.versioned}
	if !p.versioned {
		doc := map[string]any{"recommended_route": p.sentRoute, "tool_category": string(ev.ToolCategory),
			"authorization_state": route.AuthConfirmed.String()}
		lowerForbiddenAccept(doc)
		q.RuntimeRoute = str(doc["recommended_route"])
	}
	ev.RecommendedRoute, _ = route.ParseRoute(q.RuntimeRoute)
	return q
}

// Lowered reports whether the event recommended accept and the contract
// lowered it: the route in RuntimeRoute is then the contract's.
func (p *Prepared) Lowered() bool {
	return p.sentRoute == route.Accept.String() && p.RuntimeRoute != p.sentRoute
}

func schemaFailed() route.Finding {
	return route.Finding{
		Source: route.SourceContract, Code: route.CodeSchemaValidationFailed, Route: route.Refuse, Blocking: true,
		Message: "the event does not validate against the Agent Action Contract v1 schema",
	}
}

// declaredOf reads what the runtime sent. Strings are cleaned: they reach
// the answer and the audit record even when the event is refused for them.
func declaredOf(doc map[string]any) Declared {
	s := func(k string) string { v, _ := doc[k].(string); return clean(v) }
	e := func(k string) string { v, _ := doc[k].(string); return enumValue(k, v) }
	return Declared{
		ToolName:           s("tool_name"),
		ToolCategory:       e("tool_category"),
		AuthorizationState: e("authorization_state"),
		RiskDomain:         e("risk_domain"),
		RecommendedRoute:   e("recommended_route"),
		RequestID:          s("request_id"),
		AgentID:            s("agent_id"),
		Arguments:          doc["proposed_arguments"],
	}
}

// enumValue is an enum field as sent when it is one of its values, and
// otherwise a marker with the value's length and fingerprint: free text in
// an enum field (30 KB of it, say) is echoed, logged and stored as the
// marker, never as the text.
func enumValue(field, v string) string {
	if v == "" || enumFields[field][v] {
		return v
	}
	sum := sha256.Sum256([]byte(v))
	return fmt.Sprintf("invalid:len=%d:sha256=%x", len(v), sum[:6])
}

var enumFields = map[string]map[string]bool{
	"tool_category":       set("public_read", "private_read", "write", "unknown"),
	"authorization_state": set("none", "user_claimed", "authenticated", "validated", "confirmed"),
	"recommended_route":   set(route.Names()...),
	"risk_domain": set("devops", "finance", "education", "hr", "legal", "pharma", "healthcare",
		"commerce", "customer_support", "security", "research", "personal_productivity",
		"public_information", "unknown"),
}

func set(vs ...string) map[string]bool {
	m := make(map[string]bool, len(vs))
	for _, v := range vs {
		m[v] = true
	}
	return m
}

// enumsExact reports whether every enum field that is present holds an
// allowed value and proposed_arguments, when present, is an object. Absent
// fields are left to the schema (gated does not fill defaults).
func enumsExact(doc map[string]any) bool {
	for field, allowed := range enumFields {
		v, present := doc[field]
		if !present {
			continue
		}
		if s, ok := v.(string); !ok || !allowed[s] {
			return false
		}
	}
	if v, present := doc["proposed_arguments"]; present {
		if _, ok := v.(map[string]any); !ok {
			return false
		}
	}
	return true
}

// lowerForbiddenAccept lowers a runtime accept that the contract forbids,
// judged on the declared authorization state.
func lowerForbiddenAccept(doc map[string]any) {
	if doc["recommended_route"] != route.Accept.String() {
		return
	}
	auth, _ := route.ParseAuthState(str(doc["authorization_state"]))
	switch route.Category(str(doc["tool_category"])) {
	case route.Write:
		if auth < route.AuthValidated {
			doc["recommended_route"] = route.Ask.String()
		}
	case route.PrivateRead:
		if auth < route.AuthAuthenticated {
			doc["recommended_route"] = route.Ask.String()
		}
	case route.Unknown:
		doc["recommended_route"] = route.Defer.String()
	}
}

// liftAuthorization replaces a declared state that is too low for the
// runtime's accept by the state the evidence supports, when that is enough.
func liftAuthorization(doc map[string]any) bool {
	if doc["recommended_route"] != route.Accept.String() {
		return false
	}
	need := route.AuthValidated
	switch route.Category(str(doc["tool_category"])) {
	case route.Write:
	case route.PrivateRead:
		need = route.AuthAuthenticated
	default:
		return false
	}
	declared, err := route.ParseAuthState(str(doc["authorization_state"]))
	if err != nil || declared >= need {
		return false
	}
	refs, _ := doc["evidence_refs"].([]any)
	supported := route.AuthNone
	for _, r := range refs {
		if m, ok := r.(map[string]any); ok {
			supported = max(supported, support(str(m["kind"]), str(m["trust_tier"]), str(m["source_id"]), str(m["summary"])))
		}
	}
	if supported < need {
		return false
	}
	doc["authorization_state"] = supported.String()
	return true
}

// normalizeRefs turns quickstart string refs into structured refs and fills
// the reference's defaults into object refs. Other values are kept so that
// the schema reports them.
func normalizeRefs(refs []any) []any {
	out := make([]any, len(refs))
	for i, r := range refs {
		switch v := r.(type) {
		case string:
			out[i] = map[string]any{
				"source_id": v, "kind": "other", "trust_tier": "runtime", "redaction_status": "redacted",
				"freshness": map[string]any{"status": "fresh"}, "provenance": "runtime_quickstart",
			}
		case map[string]any:
			out[i] = withRefDefaults(v)
		default:
			out[i] = r
		}
	}
	return out
}

// refDefaults are the members an object ref gets when it lacks them.
var refDefaults = [...]struct {
	key   string
	value func() any
}{
	{"kind", func() any { return "other" }},
	{"trust_tier", func() any { return "unknown" }},
	{"redaction_status", func() any { return "unknown" }},
	{"provenance", func() any { return "runtime" }},
	{"freshness", func() any { return map[string]any{"status": "unknown"} }},
}

// withRefDefaults is ref with the defaults it lacks. A ref that lacks none
// is returned as it is, not copied (most runtimes send every member, and
// Prepare only reads refs after this); one that lacks any is copied first,
// as doc is not modified.
func withRefDefaults(ref map[string]any) map[string]any {
	var m map[string]any
	for _, d := range refDefaults {
		if _, ok := ref[d.key]; ok {
			continue
		}
		if m == nil {
			m = maps.Clone(ref)
		}
		m[d.key] = d.value()
	}
	if m == nil {
		return ref
	}
	return m
}

func str(v any) string { s, _ := v.(string); return s }

// toEvent converts a document that passed the schema into the typed event.
func toEvent(doc map[string]any) *route.Event {
	ev := &route.Event{
		SchemaVersion:     str(doc["schema_version"]),
		ToolName:          str(doc["tool_name"]),
		ToolCategory:      route.Category(str(doc["tool_category"])),
		RiskDomain:        str(doc["risk_domain"]),
		ProposedArguments: doc["proposed_arguments"].(map[string]any),
		RequestID:         str(doc["request_id"]),
		AgentID:           str(doc["agent_id"]),
		UserIntent:        str(doc["user_intent"]),
	}
	ev.AuthorizationState, _ = route.ParseAuthState(str(doc["authorization_state"]))
	ev.RecommendedRoute, _ = route.ParseRoute(str(doc["recommended_route"]))
	if s, ok := doc["authorization_subject"].(map[string]any); ok {
		ev.AuthorizationSubject = &route.Subject{SubjectType: str(s["subject_type"]), SubjectRef: str(s["subject_ref"])}
	}
	refs, _ := doc["evidence_refs"].([]any)
	ev.EvidenceRefs = make([]route.EvidenceRef, len(refs))
	for i, r := range refs {
		m := r.(map[string]any)
		f, _ := m["freshness"].(map[string]any)
		ev.EvidenceRefs[i] = route.EvidenceRef{
			SourceID:        str(m["source_id"]),
			Kind:            str(m["kind"]),
			TrustTier:       str(m["trust_tier"]),
			RedactionStatus: str(m["redaction_status"]),
			Summary:         str(m["summary"]),
			RetrievedAt:     str(m["retrieved_at"]),
			CitationURL:     str(m["citation_url"]),
			RetrievalURL:    str(m["retrieval_url"]),
			Provenance:      str(m["provenance"]),
			Supports:        strs(m["supports"]),
			Contradicts:     strs(m["contradicts"]),
			Freshness: route.Freshness{
				Status:      str(f["status"]),
				CheckedAt:   str(f["checked_at"]),
				MaxAgeHours: num(f["max_age_hours"]),
				AgeHours:    num(f["age_hours"]),
				Source:      str(f["source"]),
			},
		}
	}
	return ev
}

func strs(v any) []string {
	a, _ := v.([]any)
	if len(a) == 0 {
		return nil
	}
	out := make([]string, len(a))
	for i, x := range a {
		out[i] = str(x)
	}
	return out
}

func num(v any) *float64 {
	var f float64
	switch n := v.(type) {
	case float64:
		f = n
	case json.Number:
		var err error
		if f, err = n.Float64(); err != nil {
			return nil
		}
	default:
		return nil
	}
	return &f
}
