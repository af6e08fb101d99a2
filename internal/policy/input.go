package policy

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/open-policy-agent/opa/v1/ast"

	"github.com/gatedhq/gated/internal/route"
)

// The Rego input is built as an ast.Value straight from the Input: no JSON
// round trip, no ast.InterfaceToValue. It must stay the very document the
// round trip gave (TestInputMatchesJSONRoundTrip holds the two side by
// side): the event as json.Marshal shapes a route.Event and json.Unmarshal
// reads it back — omitempty fields absent, every number a float64, invalid
// UTF-8 replaced — and the other fields as ast.InterfaceToValue converts
// them.

// Keys of the input and the event, shared by every input: OPA never
// modifies an input's terms.
var (
	keyEvent           = ast.StringTerm("event")
	keyCategory        = ast.StringTerm("category")
	keyActionID        = ast.StringTerm("action_id")
	keyActionWildcards = ast.StringTerm("action_wildcards")
	keyAction          = ast.StringTerm("action")
	keyPrincipals      = ast.StringTerm("principals")
	keyPrincipalSet    = ast.StringTerm("principal_set")
	keyPrincipal       = ast.StringTerm("principal")
	keyClientIP        = ast.StringTerm("client_ip")
	keyNow             = ast.StringTerm("now")
	keyNowNs           = ast.StringTerm("now_ns")
	keyAuthEventsNs    = ast.StringTerm("auth_events_ns")
	keyAuthZEN         = ast.StringTerm("authzen")

	keySchemaVersion        = ast.StringTerm("schema_version")
	keyToolName             = ast.StringTerm("tool_name")
	keyToolCategory         = ast.StringTerm("tool_category")
	keyAuthorizationState   = ast.StringTerm("authorization_state")
	keyEvidenceRefs         = ast.StringTerm("evidence_refs")
	keyRiskDomain           = ast.StringTerm("risk_domain")
	keyProposedArguments    = ast.StringTerm("proposed_arguments")
	keyRecommendedRoute     = ast.StringTerm("recommended_route")
	keyRequestID            = ast.StringTerm("request_id")
	keyAgentID              = ast.StringTerm("agent_id")
	keyUserIntent           = ast.StringTerm("user_intent")
	keyAuthorizationSubject = ast.StringTerm("authorization_subject")
	keySubjectType          = ast.StringTerm("subject_type")
	keySubjectRef           = ast.StringTerm("subject_ref")

	keySourceID        = ast.StringTerm("source_id")
	keyKind            = ast.StringTerm("kind")
	keyTrustTier       = ast.StringTerm("trust_tier")
	keyRedactionStatus = ast.StringTerm("redaction_status")
	keySummary         = ast.StringTerm("summary")
	keyRetrievedAt     = ast.StringTerm("retrieved_at")
	keyFreshness       = ast.StringTerm("freshness")
	keyCitationURL     = ast.StringTerm("citation_url")
	keyRetrievalURL    = ast.StringTerm("retrieval_url")
	keyProvenance      = ast.StringTerm("provenance")
	keySupports        = ast.StringTerm("supports")
	keyContradicts     = ast.StringTerm("contradicts")
	keyStatus          = ast.StringTerm("status")
	keyCheckedAt       = ast.StringTerm("checked_at")
	keyMaxAgeHours     = ast.StringTerm("max_age_hours")
	keyAgeHours        = ast.StringTerm("age_hours")
	keySource          = ast.StringTerm("source")
)

// inputValue builds the documented Rego input (docs/policy.md); action is
// input.action, which actionValue converts once per view.
func inputValue(in Input, action ast.Value) (ast.Object, error) {
	event, err := eventValue(in.Event)
	if err != nil {
		return nil, fmt.Errorf("input: %w", err)
	}
	principals := make([]*ast.Term, len(in.Principals))
	set := ast.NewObjectWithCapacity(len(in.Principals))
	for i, p := range in.Principals {
		principals[i] = ast.StringTerm(p)
		set.Insert(principals[i], ast.InternedTerm(true))
	}
	ip := ""
	if in.ClientIP.IsValid() {
		ip = in.ClientIP.Unmap().String()
	}
	auth := authEventTimes(in.Event)
	authNs := make([]*ast.Term, len(auth))
	for i, t := range auth {
		authNs[i] = ast.InternedTerm(t)
	}
	obj := ast.NewObject(
		[2]*ast.Term{keyEvent, ast.NewTerm(event)},
		[2]*ast.Term{keyCategory, ast.StringTerm(string(in.Category))},
		[2]*ast.Term{keyActionID, ast.StringTerm(in.ActionID)},
		[2]*ast.Term{keyActionWildcards, ast.NewTerm(wildcardKeys(in.ActionID))},
		[2]*ast.Term{keyAction, ast.NewTerm(action)},
		[2]*ast.Term{keyPrincipals, ast.ArrayTerm(principals...)},
		[2]*ast.Term{keyPrincipalSet, ast.NewTerm(set)},
		[2]*ast.Term{keyPrincipal, ast.StringTerm(requestPrincipal(in.Principals))},
		[2]*ast.Term{keyClientIP, ast.StringTerm(ip)},
		[2]*ast.Term{keyNow, ast.StringTerm(in.Now.UTC().Format(time.RFC3339Nano))},
		[2]*ast.Term{keyNowNs, ast.InternedTerm(unixNanos(in.Now))},
		[2]*ast.Term{keyAuthEventsNs, ast.ArrayTerm(authNs...)},
	)
	if in.AuthZEN != nil {
		// A member of the input, as the event is: one level deep.
		v, err := argumentValue(in.AuthZEN, 1)
		if err != nil {
			return nil, fmt.Errorf("input.authzen: %w", err)
		}
		obj.Insert(keyAuthZEN, ast.NewTerm(v))
	}
	return obj, nil
}

// fields collects an object's members; omit adds an omitempty string.
type fields [][2]*ast.Term

func (f *fields) add(k *ast.Term, v *ast.Term) { *f = append(*f, [2]*ast.Term{k, v}) }

func (f *fields) str(k *ast.Term, s string) { f.add(k, jsonString(s)) }

func (f *fields) omit(k *ast.Term, s string) {
	if s != "" {
		f.str(k, s)
	}
}

// number adds an omitempty *float64.
func (f *fields) number(k *ast.Term, n *float64) error {
	if n == nil {
		return nil
	}
	t, err := floatTerm(*n)
	if err == nil {
		f.add(k, t)
	}
	return err
}

// eventValue is input.event: the event as its JSON encoding reads back.
func eventValue(ev *route.Event) (ast.Value, error) {
	f := make(fields, 0, 12)
	f.omit(keySchemaVersion, ev.SchemaVersion)
	f.str(keyToolName, ev.ToolName)
	f.str(keyToolCategory, string(ev.ToolCategory))
	f.str(keyAuthorizationState, ev.AuthorizationState.String())
	refs, err := evidenceValue(ev.EvidenceRefs)
	if err != nil {
		return nil, err
	}
	f.add(keyEvidenceRefs, ast.NewTerm(refs))
	f.str(keyRiskDomain, ev.RiskDomain)
	// The event object is one level deep, its arguments two.
	args, err := argumentValue(ev.ProposedArguments, 2)
	if err != nil {
		return nil, err
	}
	f.add(keyProposedArguments, ast.NewTerm(args))
	f.str(keyRecommendedRoute, ev.RecommendedRoute.String())
	f.omit(keyRequestID, ev.RequestID)
	f.omit(keyAgentID, ev.AgentID)
	f.omit(keyUserIntent, ev.UserIntent)
	if s := ev.AuthorizationSubject; s != nil {
		sf := make(fields, 0, 2)
		sf.omit(keySubjectType, s.SubjectType)
		sf.omit(keySubjectRef, s.SubjectRef)
		f.add(keyAuthorizationSubject, ast.ObjectTerm(sf...))
	}
	return ast.NewObject(f...), nil
}

func evidenceValue(refs []route.EvidenceRef) (ast.Value, error) {
	if refs == nil {
		return ast.NullValue, nil
	}
	out := make([]*ast.Term, len(refs))
	for i := range refs {
		r := &refs[i]
		fresh := make(fields, 0, 5)
		fresh.str(keyStatus, r.Freshness.Status)
		fresh.omit(keyCheckedAt, r.Freshness.CheckedAt)
		if err := fresh.number(keyMaxAgeHours, r.Freshness.MaxAgeHours); err != nil {
			return nil, err
		}
		if err := fresh.number(keyAgeHours, r.Freshness.AgeHours); err != nil {
			return nil, err
		}
		fresh.omit(keySource, r.Freshness.Source)

		f := make(fields, 0, 12)
		f.str(keySourceID, r.SourceID)
		f.str(keyKind, r.Kind)
		f.str(keyTrustTier, r.TrustTier)
		f.str(keyRedactionStatus, r.RedactionStatus)
		f.omit(keySummary, r.Summary)
		f.omit(keyRetrievedAt, r.RetrievedAt)
		f.add(keyFreshness, ast.ObjectTerm(fresh...))
		f.omit(keyCitationURL, r.CitationURL)
		f.omit(keyRetrievalURL, r.RetrievalURL)
		f.str(keyProvenance, r.Provenance)
		if len(r.Supports) > 0 {
			f.add(keySupports, stringsTerm(r.Supports))
		}
		if len(r.Contradicts) > 0 {
			f.add(keyContradicts, stringsTerm(r.Contradicts))
		}
		out[i] = ast.ObjectTerm(f...)
	}
	return ast.NewArray(out...), nil
}

func stringsTerm(ss []string) *ast.Term {
	ts := make([]*ast.Term, len(ss))
	for i, s := range ss {
		ts[i] = jsonString(s)
	}
	return ast.ArrayTerm(ts...)
}

// maxInputDepth is how deep json.Unmarshal nests; the round trip failed
// past it, so the input does too.
const maxInputDepth = 10000

var errInputDepth = errors.New("the event nests deeper than the policy input allows")

// argumentValue converts one value of proposed_arguments found at depth
// (the number of objects and arrays it is in, plus one if it is one): what
// gated's decoder produces directly, anything else (a Go caller's own
// types) through JSON, as the whole event used to be.
func argumentValue(v any, depth int) (ast.Value, error) {
	switch v := v.(type) {
	case nil:
		return ast.NullValue, nil
	case bool:
		return ast.Boolean(v), nil
	case string:
		return jsonString(v).Value, nil
	case json.Number:
		n, err := numberTerm(v)
		if err != nil {
			return nil, err
		}
		return n.Value, nil
	case float64:
		n, err := floatTerm(v)
		if err != nil {
			return nil, err
		}
		return n.Value, nil
	case []any:
		if v == nil {
			return ast.NullValue, nil
		}
		if depth > maxInputDepth {
			return nil, errInputDepth
		}
		ts := make([]*ast.Term, len(v))
		for i, e := range v {
			ev, err := argumentValue(e, depth+1)
			if err != nil {
				return nil, err
			}
			ts[i] = ast.NewTerm(ev)
		}
		return ast.NewArray(ts...), nil
	case map[string]any:
		if v == nil {
			return ast.NullValue, nil
		}
		if depth > maxInputDepth {
			return nil, errInputDepth
		}
		obj := ast.NewObjectWithCapacity(len(v))
		for k, e := range v {
			if !utf8.ValidString(k) {
				// Two keys could become one; JSON keeps the last in key order.
				return jsonValue(v, depth)
			}
			ev, err := argumentValue(e, depth+1)
			if err != nil {
				return nil, err
			}
			obj.Insert(ast.StringTerm(k), ast.NewTerm(ev))
		}
		return obj, nil
	}
	return jsonValue(v, depth)
}

// jsonValue converts v as the JSON round trip did, for the types
// argumentValue does not know.
func jsonValue(v any, depth int) (ast.Value, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var doc any
	if err := json.Unmarshal(raw, &doc); err != nil {
		return nil, err
	}
	// Unmarshal counts depth from v; argumentValue counts it from the event.
	return argumentValue(doc, depth)
}

// jsonString is s as JSON reads it back: each byte of invalid UTF-8 is
// U+FFFD, as json.Marshal writes it.
func jsonString(s string) *ast.Term {
	if !utf8.ValidString(s) {
		s = string([]rune(s))
	}
	return ast.StringTerm(s)
}

// numberTerm reads a json.Number as json.Marshal and Unmarshal did: a
// float64, an error when it is not a JSON number or out of range.
func numberTerm(n json.Number) (*ast.Term, error) {
	f, err := numberFloat(n)
	if err != nil {
		return nil, err
	}
	return ast.FloatNumberTerm(f), nil
}

// numberFloat is numberTerm's float64.
func numberFloat(n json.Number) (float64, error) {
	s := string(n)
	if s == "" {
		s = "0" // json.Marshal's encoding of the zero Number
	}
	if !validNumber(s) {
		return 0, fmt.Errorf("invalid number literal %q", s)
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0, fmt.Errorf("number %s does not fit a float64", s)
	}
	return f, nil
}

// floatTerm is f as a Number; JSON has no NaN or infinities.
func floatTerm(f float64) (*ast.Term, error) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return nil, fmt.Errorf("unsupported number %v", f)
	}
	return ast.FloatNumberTerm(f), nil
}

// validNumber reports whether s is a JSON number (RFC 8259 section 6).
func validNumber(s string) bool {
	i := 0
	digits := func() bool {
		start := i
		for i < len(s) && '0' <= s[i] && s[i] <= '9' {
			i++
		}
		return i > start
	}
	if i < len(s) && s[i] == '-' {
		i++
	}
	if i < len(s) && s[i] == '0' {
		i++
	} else if !digits() {
		return false
	}
	if i < len(s) && s[i] == '.' {
		i++
		if !digits() {
			return false
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		if !digits() {
			return false
		}
	}
	return i == len(s)
}
