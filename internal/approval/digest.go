package approval

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/gowebpki/jcs"

	"github.com/gatedhq/gated/internal/route"
)

// Subject is the call an approval is bound to. Its digest is stored with
// the approval and recomputed for the retried call: any difference in tool,
// arguments, requester, agent or subject gives another digest, so an approval cannot
// be spent on a call the approver did not see.
type Subject struct {
	ToolName          string          `json:"tool_name"`
	ToolCategory      string          `json:"tool_category"`
	RiskDomain        string          `json:"risk_domain"`
	ProposedArguments json.RawMessage `json:"proposed_arguments"`
	Requester         Identity        `json:"requester"`
	AgentID           string          `json:"agent_id"`
	// AuthorizationSubject is the person the call acts for, when the event
	// names one: a principal as the agent is (user://<subject_ref> for a
	// person, <type>://<subject_ref> for a service or account, with a
	// token that vouches for its events), so one person's approval allows
	// no one else's call. Absent for a call without one, whose digest is
	// what it was before it existed.
	AuthorizationSubject *route.Subject `json:"authorization_subject,omitempty"`
	// Plan is what else the call carries that decides what runs, when the
	// surface has more than arguments (the Action API's rollback plan,
	// verification, scope and risk tier); absent for every other call, so
	// their digests are what they were before it existed.
	Plan json.RawMessage `json:"plan,omitempty"`
}

// exactNumbersKey is the member of the digested document listing where a
// number was bound by its exact value (see Digest); Subject has no field
// of that name, so it cannot collide with one.
const exactNumbersKey = "exact_numbers"

// Digest returns "sha256:" and the hex SHA-256 of the subject's RFC 8785
// (JSON Canonicalization Scheme) form. JCS makes the digest independent of
// key order, whitespace and number spelling (1.0, 1e0 and 1 are one
// number, and so are -0 and 0), so two encodings of the same call agree.
// Principals are a set, so they are sorted and de-duplicated first: their
// order must not change the digest. Absent arguments count as null.
//
// JCS reads numbers as IEEE doubles, which would bind 9007199254740993 and
// 9007199254740992 (or 0.1 and 0.10000000000000000001) to one digest while
// an upstream that reads numbers exactly sees two calls. So a number whose
// value is not exactly the double JCS writes for it is bound by its exact
// value instead: it becomes the string of its significant digits and
// exponent, and the JSON Pointers of such numbers, sorted, are added to the
// document as exact_numbers, so no string can pass for one. A subject whose
// numbers all survive as doubles digests exactly as RFC 8785 alone would.
//
// Arguments that are not valid JSON, repeat a key, or hold a number no
// double can reach (±Inf, an exponent past a billion) are an error.
func Digest(s Subject) (string, error) {
	s.Requester.Principals = principalSet(s.Requester.Principals)
	if len(s.ProposedArguments) == 0 {
		s.ProposedArguments = json.RawMessage("null")
	}
	raw, err := json.Marshal(s)
	if err != nil {
		return "", fmt.Errorf("the proposed arguments are not valid JSON: %w", err)
	}
	// Transform first on the document as given: it refuses duplicate keys,
	// lone surrogates and infinite numbers, which decoding into Go values
	// would silently merge or replace.
	canonical, err := jcs.Transform(raw)
	if err != nil {
		return "", fmt.Errorf("the proposed arguments cannot be canonicalised (RFC 8785): %w", err)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var doc map[string]any
	if err := dec.Decode(&doc); err != nil {
		return "", fmt.Errorf("the proposed arguments are not valid JSON: %w", err)
	}
	var exact []string
	if err := bindExactNumbers(doc, "", &exact); err != nil {
		return "", err
	}
	if len(exact) > 0 {
		slices.Sort(exact)
		doc[exactNumbersKey] = exact
		if raw, err = json.Marshal(doc); err != nil {
			return "", fmt.Errorf("the proposed arguments cannot be canonicalised: %w", err)
		}
		if canonical, err = jcs.Transform(raw); err != nil {
			return "", fmt.Errorf("the proposed arguments cannot be canonicalised (RFC 8785): %w", err)
		}
	}
	sum := sha256.Sum256(canonical)
	return "sha256:" + hex.EncodeToString(sum[:]), nil
}

// bindExactNumbers replaces, in v (at the JSON Pointer at), every number
// that JCS would write as another value by the string of its exact value,
// and appends its pointer to exact.
func bindExactNumbers(v any, at string, exact *[]string) error {
	visit := func(x any, p string, set func(string)) error {
		n, ok := x.(json.Number)
		if !ok {
			return bindExactNumbers(x, p, exact)
		}
		value, changed, err := exactNumber(n)
		if err == nil && changed {
			set(value)
			*exact = append(*exact, p)
		}
		return err
	}
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			if err := visit(x, at+"/"+pointerEscaper.Replace(k), func(s string) { v[k] = s }); err != nil {
				return err
			}
		}
	case []any:
		for i, x := range v {
			if err := visit(x, at+"/"+strconv.Itoa(i), func(s string) { v[i] = s }); err != nil {
				return err
			}
		}
	}
	return nil
}

var pointerEscaper = strings.NewReplacer("~", "~0", "/", "~1")

// exactNumber returns the exact value of n, as decimalValue writes it, and
// whether it differs from the value of the double JCS writes for n.
func exactNumber(n json.Number) (value string, changed bool, err error) {
	value, err = decimalValue(string(n))
	if err != nil {
		return "", false, err
	}
	f, err := strconv.ParseFloat(string(n), 64)
	if err != nil {
		return "", false, fmt.Errorf("the proposed arguments hold a number no double can hold (%w), so an approval cannot be bound to them", err)
	}
	written, err := jcs.NumberToJSON(f)
	if err != nil {
		return "", false, fmt.Errorf("the proposed arguments cannot be canonicalised (RFC 8785): %w", err)
	}
	double, err := decimalValue(written)
	if err != nil {
		return "", false, err
	}
	return value, value != double, nil
}

// maxExponentDigits bounds the written exponent of a number: past a billion
// no double is near, and the exponent arithmetic below stays in an int.
const maxExponentDigits = 9

// decimalValue writes the value of the JSON number s as its significant
// digits (no leading or trailing zeros), "e" and the power of ten they are
// multiplied by, with a leading "-" when negative: 1000, 1e3 and 1.000e3
// are all "1e3", 0.5 is "5e-1", and -0 and 0 are "0". Two numbers have
// the same text exactly when they have the same value. It reads the text
// only, so 1e999999999 costs no arithmetic.
func decimalValue(s string) (string, error) {
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	mantissa, expText, hasExp := strings.Cut(strings.ToLower(s), "e")
	intPart, frac, _ := strings.Cut(mantissa, ".")
	exp := 0
	if hasExp {
		digits := strings.TrimLeft(strings.TrimLeft(expText, "+-"), "0")
		if len(digits) > maxExponentDigits {
			return "", errors.New("the proposed arguments hold a number whose exponent no double can reach, so an approval cannot be bound to them")
		}
		var err error
		if exp, err = strconv.Atoi(expText); err != nil {
			return "", fmt.Errorf("the proposed arguments hold a malformed number: %w", err)
		}
	}
	digits := strings.TrimLeft(intPart+frac, "0")
	if digits == "" {
		return "0", nil
	}
	exp -= len(frac)
	trimmed := strings.TrimRight(digits, "0")
	exp += len(digits) - len(trimmed)
	sign := ""
	if neg {
		sign = "-"
	}
	return sign + trimmed + "e" + strconv.Itoa(exp), nil
}
