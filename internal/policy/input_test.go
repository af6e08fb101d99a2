package policy

import (
	"encoding/json"
	"fmt"
	"math"
	"net/netip"
	"reflect"
	"testing"
	"time"

	"github.com/open-policy-agent/opa/v1/ast"

	"github.com/gatedhq/gated/internal/route"
)

// roundTripInput is how the input was built before inputValue: the event
// through a JSON round trip, everything through ast.InterfaceToValue. It is
// the oracle inputValue must match.
func roundTripInput(in Input, action ast.Value) (ast.Value, error) {
	var event any
	raw, err := json.Marshal(in.Event)
	if err == nil {
		err = json.Unmarshal(raw, &event)
	}
	if err != nil {
		return nil, err
	}
	set := make(map[string]any, len(in.Principals))
	principals := make([]any, len(in.Principals))
	for i, p := range in.Principals {
		set[p] = true
		principals[i] = p
	}
	ip := ""
	if in.ClientIP.IsValid() {
		ip = in.ClientIP.Unmap().String()
	}
	auth := authEventTimes(in.Event)
	authNs := make([]any, len(auth))
	for i, t := range auth {
		authNs[i] = t
	}
	wildcards := map[string]any{}
	depth := 0
	for i := 0; i < len(in.ActionID); i++ {
		if in.ActionID[i] == ':' {
			depth++
			wildcards[fmt.Sprintf("w%d", depth)] = in.ActionID[:i+1] + "*"
		}
	}
	v, err := ast.InterfaceToValue(map[string]any{
		"event":            event,
		"category":         string(in.Category),
		"action_id":        in.ActionID,
		"action_wildcards": wildcards,
		"principals":       principals,
		"principal_set":    set,
		"principal":        requestPrincipal(in.Principals),
		"client_ip":        ip,
		"now":              in.Now.UTC().Format(time.RFC3339Nano),
		"now_ns":           unixNanos(in.Now),
		"auth_events_ns":   authNs,
	})
	if err != nil {
		return nil, err
	}
	v.(ast.Object).Insert(ast.InternedTerm("action"), ast.NewTerm(action))
	if in.AuthZEN != nil {
		var doc any
		raw, err := json.Marshal(in.AuthZEN)
		if err == nil {
			err = json.Unmarshal(raw, &doc)
		}
		if err != nil {
			return nil, err
		}
		a, err := ast.InterfaceToValue(doc)
		if err != nil {
			return nil, err
		}
		v.(ast.Object).Insert(ast.InternedTerm("authzen"), ast.NewTerm(a))
	}
	return v, nil
}

func ptr[T any](v T) *T { return &v }

// fullEvent sets every field of the event and of its evidence refs
// (TestFullEventSetsEveryField keeps it so as fields are added).
func fullEvent() *route.Event {
	return &route.Event{
		SchemaVersion:      route.ContractVersion,
		ToolName:           "envoyer_le_reçu 日本語 🚀 <b>&amp;</b> \u2028\u2029 \"quoted\" \\ \x00\x1f",
		ToolCategory:       route.Write,
		AuthorizationState: route.AuthConfirmed,
		EvidenceRefs: []route.EvidenceRef{{
			SourceID: "approval.user_confirmed_send", Kind: "approval", TrustTier: "verified", RedactionStatus: "redacted",
			Summary: "l'utilisateur a confirmé", RetrievedAt: "2026-05-04T14:59:00.123456789Z",
			Freshness: route.Freshness{Status: "fresh", CheckedAt: "2026-05-04T14:59:30Z", MaxAgeHours: ptr(24.0),
				AgeHours: ptr(0.016666666666666666), Source: "gated"},
			CitationURL: "https://example.com/a?b=c&d=é", RetrievalURL: "https://example.com/r",
			Provenance: "user", Supports: []string{"send", "日本"}, Contradicts: []string{"refund"}, GatedVerified: true,
		}, {
			SourceID: "auth.login", Kind: "auth_event", TrustTier: "verified", RedactionStatus: "public",
			RetrievedAt: "2026-05-04T14:58:00Z", Freshness: route.Freshness{Status: "unknown", MaxAgeHours: ptr(1e21), AgeHours: ptr(math.Copysign(0, -1))},
			Provenance: "idp", Supports: []string{}, Contradicts: nil,
		}, {
			SourceID: "auth.bad-time", Kind: "auth_event", TrustTier: "verified", RetrievedAt: "yesterday",
		}},
		RiskDomain: "customer_support",
		ProposedArguments: map[string]any{
			"to":      "customer@example.com",
			"subject": "Ünïcödé ✓",
			"empty":   "",
			"null":    nil,
			"yes":     true,
			"no":      false,
			"numbers": []any{json.Number("1"), json.Number("1.0"), json.Number("-0"), json.Number("1E+2"), json.Number("0.1"),
				json.Number("12345678901234567890"), json.Number("9007199254740993"), json.Number("1e-400"), json.Number("2.5e-3"),
				json.Number(""), 0.1, 1e21, 1e-7, math.Copysign(0, -1), 7, 123456789012345678},
			"nested": map[string]any{
				"list":  []any{map[string]any{"a": []any{}}, []any{[]any{nil}}, map[string]any{}},
				"deep":  map[string]any{"x": map[string]any{"y": map[string]any{"z": json.Number("3")}}},
				"nil":   []any(nil),
				"nomap": map[string]any(nil),
			},
			"clé 🔑": "valeur",
		},
		RecommendedRoute:     route.Defer,
		RequestID:            "req-1",
		AgentID:              "support-agent",
		UserIntent:           "send the receipt",
		AuthorizationSubject: &route.Subject{SubjectType: "user", SubjectRef: "u-42"},
	}
}

type goArgs struct {
	Name   string  `json:"name"`
	Hidden string  `json:"-"`
	Score  float32 `json:"score,omitempty"`
}

type myString string

// inputCases are the inputs both ways must agree on.
func inputCases() map[string]Input {
	base := func(ev *route.Event) Input {
		return Input{Event: ev, Category: route.Write, ActionID: "orders:refund", Principals: []string{"operator://ci"}, Now: t0}
	}
	cases := map[string]Input{
		"zero event":  {Event: &route.Event{}},
		"base":        input("git_commit"),
		"full":        base(fullEvent()),
		"empty parts": base(&route.Event{EvidenceRefs: []route.EvidenceRef{}, ProposedArguments: map[string]any{}, AuthorizationSubject: &route.Subject{}}),
		"out of range enums": base(&route.Event{ToolCategory: "mystery", AuthorizationState: route.AuthState(99), RecommendedRoute: route.Route(42),
			AuthorizationSubject: &route.Subject{SubjectRef: "only-ref"}}),
		"invalid utf-8": base(&route.Event{ToolName: "bad\xffname\xfe\xfd", RiskDomain: "\xc3", UserIntent: "ok",
			EvidenceRefs: []route.EvidenceRef{{SourceID: "\xff", Supports: []string{"a\x80b"}}},
			ProposedArguments: map[string]any{
				"v": "x\xffy", "a\xff": 1.0, "a\xfe": 2.0, "list": []any{"\xe2\x82"},
				"nested": map[string]any{"k\xff": map[string]any{"z\x80": "w"}, "k": true},
			}}),
		"go types": base(&route.Event{ProposedArguments: map[string]any{
			"strings": []string{"a", "b"}, "nilstrings": []string(nil), "map": map[string]string{"k": "v"},
			"float32": float32(0.1), "int64": int64(1 << 62), "uint8": uint8(200), "raw": json.RawMessage(`{"r": [1, 2.50]}`),
			"struct": goArgs{Name: "n", Hidden: "h", Score: 1.5}, "time": time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC),
			"nilptr": (*string)(nil), "ptr": ptr("p"), "named": myString("s"), "bytes": []byte("hi"),
			"maps": []map[string]any{{"x": 1}}, "anymap": map[string]any{"in": []int{1, 2}},
		}}),
	}
	many := base(fullEvent())
	many.Principals = []string{"operator://ci", "group://ops", "operator://ci", "bot://support-agent", "user://current", "ünï://cödé"}
	many.ActionID = "secrets:rotate:now"
	many.ClientIP = netip.MustParseAddr("::ffff:192.0.2.7")
	many.Now = time.Date(2026, 5, 4, 15, 0, 0, 123456789, time.FixedZone("X", 3600))
	cases["many principals, mapped ip"] = many
	az := base(fullEvent())
	az.AuthZEN = map[string]any{"profile": "authzen-1.0", "subject": map[string]any{"type": "user", "id": "alice\xff",
		"properties": map[string]any{"role": "admin", "n": json.Number("2.50")}}, "context": map[string]any{}}
	cases["authzen"] = az
	none := base(fullEvent())
	none.Principals, none.ActionID, none.Category = nil, "", route.Unknown
	none.ClientIP = netip.MustParseAddr("2001:db8::1%eth0")
	none.Now = time.Time{}
	cases["no principals, uncatalogued"] = none
	return cases
}

// sameValue is equality of two inputs, down to how each number is written.
func sameValue(a, b ast.Value) bool { return a.Compare(b) == 0 && a.String() == b.String() }

func TestInputMatchesJSONRoundTrip(t *testing.T) {
	t.Parallel()
	s := &Set{}
	view := &benchAction{ToolID: "orders.refund", ActionID: "orders:refund", RiskLevel: 3, Mutates: []string{"orders:*"},
		Annotations: map[string]string{"title": "Remboursement"}, Rules: []map[string]any{{"kind": "regex", "patterns": []string{"^x"}}}}
	for name, in := range inputCases() {
		for _, a := range []any{nil, view} {
			t.Run(fmt.Sprintf("%s/action=%t", name, a != nil), func(t *testing.T) {
				t.Parallel()
				action, err := s.actionValue(a)
				if err != nil {
					t.Fatal(err)
				}
				want, err := roundTripInput(in, action)
				if err != nil {
					t.Fatalf("round trip: %v", err)
				}
				got, err := inputValue(in, action)
				if err != nil {
					t.Fatalf("inputValue: %v", err)
				}
				if !sameValue(got, want) {
					t.Fatalf("input differs from the JSON round trip's:\n got %s\nwant %s", got, want)
				}
			})
		}
	}
}

// nested is v inside n arrays.
func nested(v any, n int) any {
	for range n {
		v = []any{v}
	}
	return v
}

// TestInputFailsWhereJSONRoundTripFailed: what the round trip could not
// encode or decode fails the input (a refusal), and nothing else does.
func TestInputFailsWhereJSONRoundTripFailed(t *testing.T) {
	t.Parallel()
	cyclic := map[string]any{}
	cyclic["self"] = cyclic
	cyclicList := []any{nil}
	cyclicList[0] = cyclicList
	args := map[string]any{
		"NaN":                       math.NaN(),
		"+Inf":                      math.Inf(1),
		"-Inf in a list":            []any{math.Inf(-1)},
		"number out of range":       json.Number("1e400"),
		"not a number":              json.Number("abc"),
		"number with spaces":        json.Number(" 1"),
		"leading zero":              json.Number("01"),
		"hex number":                json.Number("0x10"),
		"bare dot":                  json.Number("1."),
		"bare exponent":             json.Number("1e"),
		"NaN in a struct":           goArgs{Score: float32(math.NaN())},
		"channel":                   make(chan int),
		"cyclic map":                cyclic,
		"cyclic list":               cyclicList,
		"deepest allowed":           nested("x", maxInputDepth-2), // the event is level 1, proposed_arguments 2
		"one level too deep":        nested("x", maxInputDepth-1),
		"too deep behind a Go type": []any{[]string{}, map[string]string{}, nested([]string{"x"}, maxInputDepth-3)},
		"ok behind a Go type":       nested([]string{"x"}, maxInputDepth-3),
	}
	fresh := map[string]route.Freshness{
		"NaN max_age_hours": {MaxAgeHours: ptr(math.NaN())},
		"Inf age_hours":     {AgeHours: ptr(math.Inf(1))},
	}
	check := func(t *testing.T, ev *route.Event) {
		t.Parallel()
		in := Input{Event: ev, Now: t0}
		_, wantErr := roundTripInput(in, ast.NullValue)
		_, err := inputValue(in, ast.NullValue)
		if (err != nil) != (wantErr != nil) {
			t.Fatalf("inputValue error %v, the round trip's %v", err, wantErr)
		}
	}
	for name, v := range args {
		t.Run(name, func(t *testing.T) { check(t, &route.Event{ProposedArguments: map[string]any{"v": v}}) })
	}
	for name, f := range fresh {
		t.Run(name, func(t *testing.T) { check(t, &route.Event{EvidenceRefs: []route.EvidenceRef{{Freshness: f}}}) })
	}
	// Guard the guard: both outcomes occur above.
	for _, name := range []string{"deepest allowed", "ok behind a Go type"} {
		if _, err := inputValue(Input{Event: &route.Event{ProposedArguments: map[string]any{"v": args[name]}}}, ast.NullValue); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	if _, err := inputValue(Input{Event: &route.Event{ProposedArguments: map[string]any{"v": args["one level too deep"]}}}, ast.NullValue); err == nil {
		t.Error("one level too deep: no error")
	}
}

// TestFullEventSetsEveryField keeps TestInputMatchesJSONRoundTrip honest
// as route.Event grows: a field the test event leaves empty would hide a
// field eventValue forgot.
func TestFullEventSetsEveryField(t *testing.T) {
	t.Parallel()
	var walk func(path string, v reflect.Value)
	walk = func(path string, v reflect.Value) {
		switch v.Kind() {
		case reflect.Pointer:
			if v.IsNil() {
				t.Errorf("%s is nil", path)
				return
			}
			walk(path, v.Elem())
		case reflect.Struct:
			for i := range v.NumField() {
				walk(path+"."+v.Type().Field(i).Name, v.Field(i))
			}
		case reflect.Slice:
			if v.Len() == 0 {
				t.Errorf("%s is empty", path)
				return
			}
			if v.Type().Elem().Kind() == reflect.Struct {
				walk(path+"[0]", v.Index(0))
			}
		default:
			if v.IsZero() {
				t.Errorf("%s is not set", path)
			}
		}
	}
	walk("Event", reflect.ValueOf(fullEvent()))
}
