package approval

import (
	"encoding/json"
	"regexp"
	"testing"
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
	for _, args := range []string{`{"a":`, `{"a":1}{"b":2}`, `not json`, `{"a":1e400}`} {
		s := subject()
		s.ProposedArguments = json.RawMessage(args)
		if d, err := Digest(s); err == nil {
			t.Errorf("arguments %s digested as %s, want an error", args, d)
		}
	}
}
