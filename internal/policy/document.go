package policy

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"math"
	"net/netip"
	"strings"
	"time"

	"github.com/gatedhq/gated/internal/opfile"
)

// Problem is one error or warning found while loading policy; Field is the
// JSON Pointer of the offending field, Line the line of a Rego module's.
type Problem = opfile.Problem

// Document is one parsed, validated POLICY.md (policy/v1 frontmatter).
type Document struct {
	File         string
	ID           string
	Default      string // "allow" or "deny"
	Grants       []Grant
	Limits       []Limit
	Requirements []Requirement
}

// Grant is one entry of `grants`.
type Grant struct {
	Principal  string // "" when the principal uses a form gated cannot match (inline identity, file)
	Actions    []ActionGrant
	Conditions []Condition
	TTLSeconds int64      // 0 = no TTL
	GrantedAt  *time.Time // nil when absent
	Revoked    bool
}

// ActionGrant is one `{action, scope?}` entry of a grant.
type ActionGrant struct {
	Action string `json:"action"`
	Scope  string `json:"scope"`
}

// Condition is a grant condition. Only the fields of the kinds gated
// supports are decoded; other kinds keep just their Kind.
type Condition struct {
	Kind          string   `json:"kind"`
	Timezone      string   `json:"timezone"`
	Start         string   `json:"start"`
	End           string   `json:"end"`
	Days          []string `json:"days"`
	CIDR          string   `json:"cidr"`
	WithinSeconds int64    `json:"within_seconds"`

	// Filled by validation for during-business-hours.
	startMin, endMin int
	weekdays         []string
}

// Limit is one entry of `limits`.
type Limit struct {
	Kind      string   `json:"kind"`
	Value     float64  `json:"value"`
	Per       string   `json:"per"`
	AppliesTo []string `json:"applies_to"`
}

// Requirement is one entry of `requirements`.
type Requirement struct {
	Kind          string   `json:"kind"`
	AppliesTo     []string `json:"applies_to"`
	WithinSeconds int64    `json:"within_seconds"`
	Count         *int     `json:"count"`
}

// Kinds gated implements.
const (
	condBusinessHours = "during-business-hours"
	condIPRange       = "ip-range"
	kindMFARecent     = "mfa-recent"
	kindApprovalFrom  = "approval-from"
	limitRateCalls    = "rate-tool-calls"
)

//go:embed POLICY.schema.json
var schemaJSON []byte

// policySchema asserts formats, so granted_at must really be a date-time.
var policySchema = opfile.MustCompileSchema("https://agentproto.sh/schemas/aip-38/POLICY.schema.json", schemaJSON)

// Parse reads one POLICY.md: frontmatter split, YAML, the AIP-38 JSON schema,
// then the rules the schema cannot express. It does no I/O and resolves no
// references (AIP-38 conformance rule 7). A nil Document means errors were
// found; warnings may accompany a valid Document.
func Parse(file string, data []byte) (doc *Document, errs, warns []Problem) {
	p := &parser{file: file}
	doc = p.parse(data)
	if len(p.errs) > 0 {
		return nil, p.errs, p.warns
	}
	return doc, nil, p.warns
}

type parser struct {
	file        string
	errs, warns []Problem
}

func (p *parser) errorf(field, code, format string, args ...any) {
	p.errs = append(p.errs, Problem{File: p.file, Field: field, Code: code, Message: fmt.Sprintf(format, args...)})
}

func (p *parser) warnf(field, code, format string, args ...any) {
	p.warns = append(p.warns, Problem{File: p.file, Field: field, Code: code, Message: fmt.Sprintf(format, args...)})
}

func (p *parser) parse(data []byte) *Document {
	// The frontmatter is the whole policy, so the file's own bound is its
	// bound.
	front, err := opfile.ParseFrontmatter(data, maxPolicyFileBytes)
	if err != nil {
		p.errorf("", parseCode(err), "%v", err)
		return nil
	}
	if vs := opfile.Validate(policySchema, front.Value, opfile.Message); len(vs) > 0 {
		for _, v := range vs {
			p.errorf(v.Pointer(), "schema", "%s", v.Message)
		}
		return nil
	}
	var raw rawDocument
	if err := json.Unmarshal(front.JSON, &raw); err != nil {
		p.errorf("", "schema", "%v", err)
		return nil
	}
	return p.check(&raw)
}

// parseCode is the problem code of a POLICY.md that does not parse:
// opfile's, except that a YAML error keeps the name docs/policy.md has
// always given it.
func parseCode(err error) string {
	if code := opfile.Code(err); code != "yaml_invalid" {
		return code
	}
	return "yaml_syntax"
}

type rawDocument struct {
	ID           string            `json:"id"`
	Default      string            `json:"default"`
	Grants       []rawGrant        `json:"grants"`
	Limits       []json.RawMessage `json:"limits"`
	Requirements []json.RawMessage `json:"requirements"`
}

type rawGrant struct {
	Principal  json.RawMessage   `json:"principal"`
	Actions    []ActionGrant     `json:"actions"`
	Conditions []json.RawMessage `json:"conditions"`
	TTLSeconds int64             `json:"ttl_seconds"`
	GrantedAt  string            `json:"granted_at"`
	Revoked    bool              `json:"revoked"`
}

// check applies the rules beyond the JSON schema and builds the Document.
func (p *parser) check(raw *rawDocument) *Document {
	doc := &Document{File: p.file, ID: raw.ID, Default: raw.Default}
	if doc.ID == "" {
		p.errorf("/id", "id_required", "a standalone POLICY.md needs an id `@<owner>/<slug>` or `@<owner>/<path>/<slug>`")
	}
	if doc.Default == "" {
		doc.Default = "deny" // AIP-38 conformance rule 1
	}
	if doc.Default == "allow" {
		p.warnf("/default", "default_allow", "default: allow lets every action through unless another composed policy says deny")
	}
	for i, rg := range raw.Grants {
		doc.Grants = append(doc.Grants, p.grant(fmt.Sprintf("/grants/%d", i), rg))
	}
	for i, rl := range raw.Limits {
		field := fmt.Sprintf("/limits/%d", i)
		var l Limit
		if err := json.Unmarshal(rl, &l); err != nil {
			p.errorf(field, "limit_invalid", "%v", err)
			continue
		}
		if l.Kind != limitRateCalls {
			p.warnf(field, "limit_ignored", "limit kind %q is not about tool calls; gated ignores it", l.Kind)
			continue
		}
		if l.Value != math.Trunc(l.Value) {
			p.errorf(field+"/value", "limit_invalid", "rate-tool-calls value must be a whole number, got %v", l.Value)
		}
		if l.Per == "" {
			p.errorf(field+"/per", "limit_invalid", "rate-tool-calls needs per: second|minute|hour|day")
		}
		p.actionRefs(field+"/applies_to", l.AppliesTo)
		doc.Limits = append(doc.Limits, l)
	}
	for i, rr := range raw.Requirements {
		field := fmt.Sprintf("/requirements/%d", i)
		var r Requirement
		if err := json.Unmarshal(rr, &r); err != nil {
			p.errorf(field, "requirement_invalid", "%v", err)
			continue
		}
		switch r.Kind {
		case kindMFARecent:
			if r.WithinSeconds <= 0 {
				p.errorf(field+"/within_seconds", "requirement_invalid", "mfa-recent needs within_seconds > 0")
			}
		case kindApprovalFrom:
			if r.Count != nil && *r.Count < 1 {
				p.errorf(field+"/count", "requirement_invalid", "approval-from count must be at least 1")
			}
		default:
			p.warnf(field+"/kind", "requirement_unknown", "requirement kind %q is not supported: every action it applies to is deferred", r.Kind)
		}
		p.actionRefs(field+"/applies_to", r.AppliesTo)
		doc.Requirements = append(doc.Requirements, r)
	}
	return doc
}

func (p *parser) grant(field string, rg rawGrant) Grant {
	g := Grant{Actions: rg.Actions, TTLSeconds: rg.TTLSeconds, Revoked: rg.Revoked}
	g.Principal = p.principal(field+"/principal", rg.Principal)
	for j, a := range rg.Actions {
		af := fmt.Sprintf("%s/actions/%d", field, j)
		if err := validActionRef(a.Action); err != nil {
			p.errorf(af+"/action", "action_ref_invalid", "%v", err)
		}
		if a.Scope != "" {
			p.warnf(af+"/scope", "scope_unsupported", "gated cannot check scope %q, so this entry grants nothing", a.Scope)
		}
	}
	if rg.GrantedAt != "" {
		t, err := time.Parse(time.RFC3339Nano, rg.GrantedAt)
		if err != nil {
			p.errorf(field+"/granted_at", "granted_at_invalid", "%v", err)
		} else {
			g.GrantedAt = &t
		}
	}
	if g.TTLSeconds > 0 && rg.GrantedAt == "" {
		p.warnf(field+"/ttl_seconds", "ttl_without_granted_at", "a TTL without granted_at is always expired")
	}
	for j, rc := range rg.Conditions {
		g.Conditions = append(g.Conditions, p.condition(fmt.Sprintf("%s/conditions/%d", field, j), rc))
	}
	return g
}

// principal maps an AIP-23 identity-ref to the string gated matches against
// the request's principals: the shorthand string itself, or an object's ref.
func (p *parser) principal(field string, raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var obj struct {
		Ref string `json:"ref"`
	}
	if json.Unmarshal(raw, &obj) == nil && obj.Ref != "" {
		return obj.Ref
	}
	p.warnf(field, "principal_unmatchable", "only string and {ref} principals can match a request; this grant never matches")
	return ""
}

var dayNames = map[string]string{
	"mon": "Monday", "tue": "Tuesday", "wed": "Wednesday", "thu": "Thursday",
	"fri": "Friday", "sat": "Saturday", "sun": "Sunday",
}

func (p *parser) condition(field string, raw json.RawMessage) Condition {
	var c Condition
	if err := json.Unmarshal(raw, &c); err != nil {
		p.errorf(field, "condition_invalid", "%v", err)
		return c
	}
	switch c.Kind {
	case condBusinessHours:
		if _, err := time.LoadLocation(c.Timezone); err != nil || c.Timezone == "" {
			p.errorf(field+"/timezone", "condition_invalid", "unknown timezone %q", c.Timezone)
		}
		var ok1, ok2 bool
		c.startMin, ok1 = clockMinutes(c.Start, 9*60)
		c.endMin, ok2 = clockMinutes(c.End, 17*60)
		if !ok1 || !ok2 {
			p.errorf(field, "condition_invalid", "start and end must be HH:MM (24h)")
		} else if c.endMin <= c.startMin {
			p.errorf(field+"/end", "condition_invalid", "end %q must be after start %q (windows across midnight need two grants)", c.End, c.Start)
		}
		days := c.Days
		if len(days) == 0 {
			days = []string{"mon", "tue", "wed", "thu", "fri"}
		}
		for k, d := range days {
			name, ok := dayNames[strings.ToLower(d[:min(3, len(d))])]
			if !ok || (len(d) > 3 && !strings.EqualFold(d, name)) {
				p.errorf(fmt.Sprintf("%s/days/%d", field, k), "condition_invalid", "unknown day %q", d)
				continue
			}
			c.weekdays = append(c.weekdays, name)
		}
	case condIPRange:
		if _, err := netip.ParsePrefix(c.CIDR); err != nil {
			p.errorf(field+"/cidr", "condition_invalid", "%v", err)
		}
	case kindMFARecent:
		if c.WithinSeconds <= 0 {
			p.errorf(field+"/within_seconds", "condition_invalid", "mfa-recent needs within_seconds > 0")
		}
	default:
		p.warnf(field+"/kind", "condition_unknown", "condition kind %q is not supported: the grant is skipped", c.Kind)
	}
	return c
}

// clockMinutes parses "HH:MM" into minutes after midnight; "" gives def.
func clockMinutes(s string, def int) (int, bool) {
	if s == "" {
		return def, true
	}
	t, err := time.Parse("15:04", s)
	if err != nil {
		if s == "24:00" {
			return 24 * 60, true
		}
		return 0, false
	}
	return t.Hour()*60 + t.Minute(), true
}

// actionRefs checks refs used by requirements and limits.
func (p *parser) actionRefs(field string, refs []string) {
	for i, r := range refs {
		if err := validActionRef(r); err != nil {
			p.errorf(fmt.Sprintf("%s/%d", field, i), "action_ref_invalid", "%v", err)
		}
	}
}
