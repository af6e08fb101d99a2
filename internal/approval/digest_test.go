package approval

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"regexp"
	"testing"

	"github.com/gowebpki/jcs"
)

func subject() Subject {
	return Subject{
		ToolName:          "payments.refund",
		ToolCategory:      "write",
		RiskDomain:        "payments",
		ProposedArguments: json.RawMessage(`{"order":"A-17","amount":12.5,"notify":true,"lines":[1,2]}`),
		Requester:         Identity{TokenName: "runtime-a", Principals: []string{"operator://bob", "group://ops"}},
		AgentID:           "agent-7",
	}
}

func digest(t *testing.T, s Subject) string {
	t.Helper()
	d, err := Digest(s)
	if err != nil {
		t.Fatalf("Digest: %v", err)
	}
	return d
}

func TestDigestForm(t *testing.T) {
	if d := digest(t, subject()); !regexp.MustCompile(`^sha256:[0-9a-f]{64}$`).MatchString(d) {
		t.Fatalf("digest %q is not sha256:<64 hex>", d)
	}
}

// The digest is stored and compared across releases, so its input form is
// pinned: this is sha256sum of the canonical JSON written out by hand.
func TestDigestPinned(t *testing.T) {
	// {"agent_id":"agent-7","proposed_arguments":{"amount":12.5,"lines":[1,2],"notify":true,"order":"A-17"},
	//  "requester":{"principals":["group://ops","operator://bob"],"token_name":"runtime-a"},
	//  "risk_domain":"payments","tool_category":"write","tool_name":"payments.refund"}
	const want = "sha256:e6c1a0738aaf67cd14bcb525abfdf406b77de122de557002b43a0a7725885ed7"
	if d := digest(t, subject()); d != want {
		t.Fatalf("digest %s, want %s", d, want)
	}
}

// Encodings of the same call give the same digest.
func TestDigestIgnoresEncoding(t *testing.T) {
	base := digest(t, subject())
	for name, change := range map[string]func(*Subject){
		"key order and whitespace": func(s *Subject) {
			s.ProposedArguments = json.RawMessage("{\n  \"notify\": true,\n  \"lines\": [1, 2],\n  \"amount\": 12.5,\n  \"order\": \"A-17\"\n}")
		},
		"number spelling": func(s *Subject) {
			s.ProposedArguments = json.RawMessage(`{"order":"A-17","amount":1.25e1,"notify":true,"lines":[1.0,2E0]}`)
		},
		"string escapes": func(s *Subject) {
			s.ProposedArguments = json.RawMessage(`{"order":"\u0041-17","amount":12.5,"notify":true,"lines":[1,2]}`)
		},
		"principal order and repeats": func(s *Subject) {
			s.Requester.Principals = []string{"group://ops", "operator://bob", "group://ops"}
		},
	} {
		s := subject()
		change(&s)
		if d := digest(t, s); d != base {
			t.Errorf("%s changed the digest", name)
		}
	}
}

// Any change to what the approver approves gives another digest.
func TestDigestBindsTheCall(t *testing.T) {
	base := digest(t, subject())
	for name, change := range map[string]func(*Subject){
		"argument value": func(s *Subject) {
			s.ProposedArguments = json.RawMessage(`{"order":"A-17","amount":1250,"notify":true,"lines":[1,2]}`)
		},
		"argument added": func(s *Subject) {
			s.ProposedArguments = json.RawMessage(`{"order":"A-17","amount":12.5,"notify":true,"lines":[1,2],"x":null}`)
		},
		"array order": func(s *Subject) {
			s.ProposedArguments = json.RawMessage(`{"order":"A-17","amount":12.5,"notify":true,"lines":[2,1]}`)
		},
		"no arguments":     func(s *Subject) { s.ProposedArguments = nil },
		"tool":             func(s *Subject) { s.ToolName = "payments.charge" },
		"category":         func(s *Subject) { s.ToolCategory = "read" },
		"risk domain":      func(s *Subject) { s.RiskDomain = "identity" },
		"token":            func(s *Subject) { s.Requester.TokenName = "runtime-b" },
		"principal added":  func(s *Subject) { s.Requester.Principals = append(s.Requester.Principals, "bot://agent-7") },
		"principal gone":   func(s *Subject) { s.Requester.Principals = []string{"group://ops"} },
		"agent":            func(s *Subject) { s.AgentID = "agent-8" },
		"field boundaries": func(s *Subject) { s.ToolName, s.ToolCategory = "payments.refundwrite", "" },
	} {
		s := subject()
		change(&s)
		if d := digest(t, s); d == base {
			t.Errorf("%s left the digest unchanged", name)
		}
	}
}

// Absent arguments and JSON null are the same call; principals nil and
// empty are the same set.
func TestDigestEmptyForms(t *testing.T) {
	a, b := subject(), subject()
	a.ProposedArguments, b.ProposedArguments = nil, json.RawMessage("null")
	a.Requester.Principals, b.Requester.Principals = nil, []string{}
	if digest(t, a) != digest(t, b) {
		t.Fatal("absent and null arguments, or nil and empty principals, differ")
	}
}

func TestDigestRejectsBadArguments(t *testing.T) {
	for _, args := range []string{`{"a":`, `{"a":1}{"b":2}`, `not json`, `{"a":1e400}`, `{"a":1,"a":2}`, `{"a":[{"b":1,"b":1}]}`, `{"a":1e-9999999999}`} {
		s := subject()
		s.ProposedArguments = json.RawMessage(args)
		if d, err := Digest(s); err == nil {
			t.Errorf("arguments %s digested as %s, want an error", args, d)
		}
	}
}

func withArguments(args string) Subject {
	s := subject()
	s.ProposedArguments = json.RawMessage(args)
	return s
}

// Issue 25 §4: a number is bound by its exact value. JCS alone reads both
// numbers of each pair as one double, so an approval of the first spent
// itself on the second.
func TestDigestBindsTheExactNumber(t *testing.T) {
	for _, c := range []struct{ approved, retried string }{
		{`{"account":1234567890123456789}`, `{"account":1234567890123456800}`},
		{`{"account":9007199254740993}`, `{"account":9007199254740992}`},
		{`{"account":-9007199254740993}`, `{"account":-9007199254740992}`},
		{`{"amount":0.1}`, `{"amount":0.10000000000000000001}`},
		{`{"amount":[1e-400]}`, `{"amount":[0]}`},
		{`{"n":{"deep":[1,12345678901234567890123]}}`, `{"n":{"deep":[1,12345678901234567000000]}}`},
	} {
		if digest(t, withArguments(c.approved)) == digest(t, withArguments(c.retried)) {
			t.Errorf("%s and %s have one digest", c.approved, c.retried)
		}
	}
}

// A number bound by its exact value cannot be imitated by the string that
// stands for it in the digested document.
func TestDigestExactNumberIsNotAString(t *testing.T) {
	n := digest(t, withArguments(`{"account":1234567890123456789}`))
	for _, args := range []string{
		`{"account":"1234567890123456789e0"}`,
		`{"account":"1234567890123456789e0","exact_numbers":["/proposed_arguments/account"]}`,
	} {
		if digest(t, withArguments(args)) == n {
			t.Errorf("%s has the digest of the number", args)
		}
	}
}

// Spellings of one value bind as one: what differs is the text, not the
// call. -0 is 0, as RFC 8785 has it; an upstream that reads numbers
// exactly reads these as one value too.
func TestDigestNumberSpellingsOfOneValue(t *testing.T) {
	for _, spellings := range [][]string{
		{`{"n":1000}`, `{"n":1e3}`, `{"n":1E+3}`, `{"n":1000.000}`, `{"n":0.1e4}`},
		{`{"n":1}`, `{"n":1.0}`, `{"n":10e-1}`},
		{`{"n":0}`, `{"n":-0}`, `{"n":0.0e5}`, `{"n":-0.0}`},
		{`{"n":1234567890123456789}`, `{"n":1.234567890123456789e18}`, `{"n":12345678901234567890e-1}`},
		{`{"n":-9007199254740993}`, `{"n":-9.007199254740993E15}`},
	} {
		want := digest(t, withArguments(spellings[0]))
		for _, s := range spellings[1:] {
			if digest(t, withArguments(s)) != want {
				t.Errorf("%s and %s have different digests", spellings[0], s)
			}
		}
	}
}

// Numbers a double holds exactly digest as RFC 8785 alone has them, so
// approvals opened before exact numbers existed keep their digests.
func TestDigestOfDoublesIsPlainJCS(t *testing.T) {
	s := withArguments(`{"n":[9007199254740992,-9007199254740992,0.1,1e21,5e-324,1.7976931348623157e308]}`)
	raw, err := json.Marshal(Subject{ToolName: s.ToolName, ToolCategory: s.ToolCategory, RiskDomain: s.RiskDomain,
		ProposedArguments: s.ProposedArguments, Requester: Identity{TokenName: "runtime-a",
			Principals: []string{"group://ops", "operator://bob"}}, AgentID: s.AgentID})
	if err != nil {
		t.Fatal(err)
	}
	canonical, err := jcs.Transform(raw)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(canonical)
	if d := digest(t, s); d != "sha256:"+hex.EncodeToString(sum[:]) {
		t.Fatalf("digest %s is not the SHA-256 of the RFC 8785 form", d)
	}
}

func TestDecimalValue(t *testing.T) {
	for in, want := range map[string]string{
		"0": "0", "-0": "0", "0.000": "0", "0e99": "0",
		"1000": "1e3", "1e3": "1e3", "1.000E3": "1e3", "100e+1": "1e3",
		"0.5": "5e-1", "-0.050": "-5e-2", "12.5": "125e-1",
		"9007199254740993": "9007199254740993e0",
		"1E-7":             "1e-7",
	} {
		got, err := decimalValue(in)
		if err != nil || got != want {
			t.Errorf("decimalValue(%s) = %q, %v; want %q", in, got, err, want)
		}
	}
	if got, err := decimalValue("1e1000000000"); err == nil {
		t.Errorf("decimalValue(1e1000000000) = %q, want an error", got)
	}
}
