package eventcodec

import (
	"encoding/json"
	"sync"
	"unicode/utf8"
)

// parseObject is Decode's one-pass reader: it reads body into the values
// encoding/json with UseNumber would (map[string]any, []any, string,
// json.Number, bool, nil) and checks in the same pass what Decode checks
// in several — UTF-8, nesting, syntax, repeated names after unescaping,
// lone surrogate escapes, one object with only whitespace after it. It
// only says whether body passed; what it refuses is worded by the checked
// path, which it must agree with (FuzzDecodeAgrees).
func parseObject(body []byte, maxDepth int) (map[string]any, bool) {
	p := parsers.Get().(*parser)
	defer func() {
		clear(p.members[:cap(p.members)]) // drop the values read
		*p = parser{scratch: p.scratch[:0], members: p.members[:0]}
		parsers.Put(p)
	}()
	p.b, p.maxDepth = body, maxDepth
	p.space()
	if p.i >= len(p.b) || p.b[p.i] != '{' {
		return nil, false
	}
	obj, ok := p.object()
	if !ok {
		return nil, false
	}
	p.space()
	return obj, p.i == len(p.b)
}

// parsers keep their scratch space between events.
var parsers = sync.Pool{New: func() any { return new(parser) }}

type parser struct {
	b        []byte
	i        int
	depth    int
	maxDepth int
	scratch  []byte   // unescaped string text, reused
	members  []member // the members of the objects being read
}

type member struct {
	name  string
	value any
}

func (p *parser) space() {
	for p.i < len(p.b) {
		switch p.b[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

func (p *parser) value() (any, bool) {
	if p.i >= len(p.b) {
		return nil, false
	}
	switch c := p.b[p.i]; {
	case c == '{':
		return p.object()
	case c == '[':
		return p.array()
	case c == '"':
		return p.stringValue()
	case c == '-' || '0' <= c && c <= '9':
		return p.number()
	case c == 't':
		return true, p.literal("true")
	case c == 'f':
		return false, p.literal("false")
	case c == 'n':
		return nil, p.literal("null")
	}
	return nil, false
}

func (p *parser) literal(word string) bool {
	if len(p.b)-p.i < len(word) || string(p.b[p.i:p.i+len(word)]) != word {
		return false
	}
	p.i += len(word)
	return true
}

// enter counts one more level of nesting, as nestingWithin does.
func (p *parser) enter() bool {
	p.depth++
	p.i++
	return p.depth <= p.maxDepth
}

func (p *parser) object() (map[string]any, bool) {
	if !p.enter() {
		return nil, false
	}
	// The members are gathered first, so the map is made once at its size
	// rather than grown as members are read.
	base := len(p.members) // a refused body leaves members behind: parseObject drops them
	p.space()
	if p.i < len(p.b) && p.b[p.i] == '}' {
		p.i++
		p.depth--
		return map[string]any{}, true
	}
	for {
		if p.i >= len(p.b) || p.b[p.i] != '"' {
			return nil, false
		}
		k, ok := p.string()
		if !ok {
			return nil, false
		}
		p.space()
		if p.i >= len(p.b) || p.b[p.i] != ':' {
			return nil, false
		}
		p.i++
		p.space()
		v, ok := p.value()
		if !ok {
			return nil, false
		}
		p.members = append(p.members, member{k, v})
		p.space()
		if p.i >= len(p.b) {
			return nil, false
		}
		switch p.b[p.i] {
		case ',':
			p.i++
			p.space()
		case '}':
			p.i++
			p.depth--
			ms := p.members[base:]
			obj := make(map[string]any, len(ms))
			for _, m := range ms {
				obj[m.name] = m.value
			}
			if len(obj) != len(ms) {
				return nil, false // a name given twice
			}
			p.members = p.members[:base]
			return obj, true
		default:
			return nil, false
		}
	}
}

func (p *parser) array() ([]any, bool) {
	if !p.enter() {
		return nil, false
	}
	arr := make([]any, 0) // encoding/json's empty array is not nil either
	p.space()
	if p.i < len(p.b) && p.b[p.i] == ']' {
		p.i++
		p.depth--
		return arr, true
	}
	for {
		v, ok := p.value()
		if !ok {
			return nil, false
		}
		arr = append(arr, v)
		p.space()
		if p.i >= len(p.b) {
			return nil, false
		}
		switch p.b[p.i] {
		case ',':
			p.i++
			p.space()
		case ']':
			p.i++
			p.depth--
			return arr, true
		default:
			return nil, false
		}
	}
}

// stringValue is string as a value: the contract's values come boxed
// already, as converting a string to any copies its header to the heap.
func (p *parser) stringValue() (any, bool) {
	if j := p.i + 1; j < len(p.b) {
		// The common values are short and unescaped: look for the closing
		// quote within a few bytes.
		for k := j; k < len(p.b) && k-j <= longestCommon; k++ {
			if c := p.b[k]; c == '"' {
				if v, ok := commonValues[string(p.b[j:k])]; ok {
					p.i = k + 1
					return v, true
				}
				break
			} else if c == '\\' || c < 0x20 || c >= utf8.RuneSelf {
				break
			}
		}
	}
	return p.string()
}

// string reads a string at p.i, which is '"'. Text without escapes is
// copied once, or not at all when it is one of the contract's names and
// values.
func (p *parser) string() (string, bool) {
	p.i++
	start := p.i
	for p.i < len(p.b) {
		c := p.b[p.i]
		switch {
		case c == '"':
			raw := p.b[start:p.i]
			p.i++
			if s, ok := common[string(raw)]; ok {
				return s, true
			}
			return string(raw), true
		case c == '\\':
			s, ok, buf := p.escaped(start, p.scratch[:0])
			p.scratch = buf
			return s, ok
		case c < 0x20:
			return "", false
		case c < utf8.RuneSelf:
			p.i++
		default:
			r, n := utf8.DecodeRune(p.b[p.i:])
			if r == utf8.RuneError && n == 1 {
				return "", false
			}
			p.i += n
		}
	}
	return "", false
}

// escaped reads the rest of a string that began at start and has an
// escape at p.i, unescaping into buf, which it returns for reuse.
func (p *parser) escaped(start int, buf []byte) (string, bool, []byte) {
	buf = append(buf, p.b[start:p.i]...)
	for p.i < len(p.b) {
		c := p.b[p.i]
		switch {
		case c == '"':
			p.i++
			return string(buf), true, buf
		case c == '\\':
			if p.i+1 >= len(p.b) {
				return "", false, buf
			}
			e := p.b[p.i+1]
			p.i += 2
			switch e {
			case '"', '\\', '/':
				buf = append(buf, e)
			case 'b':
				buf = append(buf, '\b')
			case 'f':
				buf = append(buf, '\f')
			case 'n':
				buf = append(buf, '\n')
			case 'r':
				buf = append(buf, '\r')
			case 't':
				buf = append(buf, '\t')
			case 'u':
				r, ok := p.hex4()
				if !ok {
					return "", false, buf
				}
				if 0xDC00 <= r && r <= 0xDFFF {
					return "", false, buf // a low surrogate alone
				}
				if 0xD800 <= r && r <= 0xDBFF {
					// A high surrogate must be followed by a low one:
					// jsontext refuses it alone, encoding/json would read U+FFFD.
					if len(p.b)-p.i < 2 || p.b[p.i] != '\\' || p.b[p.i+1] != 'u' {
						return "", false, buf
					}
					p.i += 2
					lo, ok := p.hex4()
					if !ok || lo < 0xDC00 || lo > 0xDFFF {
						return "", false, buf
					}
					r = 0x10000 + (r-0xD800)<<10 + (lo - 0xDC00)
				}
				buf = utf8.AppendRune(buf, r)
			default:
				return "", false, buf
			}
		case c < 0x20:
			return "", false, buf
		case c < utf8.RuneSelf:
			buf = append(buf, c)
			p.i++
		default:
			r, n := utf8.DecodeRune(p.b[p.i:])
			if r == utf8.RuneError && n == 1 {
				return "", false, buf
			}
			buf = append(buf, p.b[p.i:p.i+n]...)
			p.i += n
		}
	}
	return "", false, buf
}

func (p *parser) hex4() (rune, bool) {
	if len(p.b)-p.i < 4 {
		return 0, false
	}
	var r rune
	for _, c := range p.b[p.i : p.i+4] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c -= 'a' - 10
		case 'A' <= c && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	p.i += 4
	return r, true
}

// number reads a number as RFC 8259 spells it, keeping its text.
func (p *parser) number() (json.Number, bool) {
	start := p.i
	if p.b[p.i] == '-' {
		p.i++
	}
	switch {
	case p.i < len(p.b) && p.b[p.i] == '0':
		p.i++
	case p.digits() == 0:
		return "", false
	}
	if p.i < len(p.b) && p.b[p.i] == '.' {
		p.i++
		if p.digits() == 0 {
			return "", false
		}
	}
	if p.i < len(p.b) && (p.b[p.i] == 'e' || p.b[p.i] == 'E') {
		p.i++
		if p.i < len(p.b) && (p.b[p.i] == '+' || p.b[p.i] == '-') {
			p.i++
		}
		if p.digits() == 0 {
			return "", false
		}
	}
	return json.Number(p.b[start:p.i]), true
}

func (p *parser) digits() int {
	n := 0
	for p.i < len(p.b) && '0' <= p.b[p.i] && p.b[p.i] <= '9' {
		p.i++
		n++
	}
	return n
}

// common holds the contract's member names and enumerated values, so the
// strings every event repeats are not copied out of each body;
// commonValues holds them boxed.
var common, commonValues, longestCommon = func() (map[string]string, map[string]any, int) {
	m, boxed, longest := map[string]string{}, map[string]any{}, 0
	for _, s := range []string{
		// Member names (spec/agent_action_contract_v1.schema.json).
		"age_hours", "agent_id", "authorization_state", "authorization_subject", "checked_at", "citation_url",
		"contradicts", "evidence_refs", "freshness", "kind", "max_age_hours", "proposed_arguments", "provenance",
		"recommended_route", "redaction_status", "request_id", "retrieval_url", "retrieved_at", "risk_domain",
		"schema_version", "source", "source_id", "status", "subject_ref", "subject_type", "summary", "supports",
		"tool_category", "tool_name", "trust_tier", "user_intent",
		// Enumerated values.
		"accept", "account", "approval", "ask", "assistant_message", "audit_record", "auth_event", "authenticated",
		"case", "client", "commerce", "confirmed", "customer_support", "defer", "devops", "education", "employee",
		"finance", "fresh", "healthcare", "hr", "legal", "none", "other", "patient", "personal_productivity",
		"pharma", "policy", "private_read", "public", "public_information", "public_read", "redacted", "refuse",
		"research", "runtime", "security", "sensitive", "service", "stale", "student", "system_state",
		"tool_result", "unknown", "unverified", "user", "user_claimed", "user_message", "validated", "verified",
		"write",
	} {
		m[s], boxed[s], longest = s, s, max(longest, len(s))
	}
	return m, boxed, longest
}()
