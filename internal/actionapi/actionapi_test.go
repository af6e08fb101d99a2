package actionapi

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/gatedhq/gated/internal/route"
)

func TestStatus(t *testing.T) {
	t.Parallel()
	for r, want := range map[route.Route]string{route.Accept: "approved", route.Ask: "queued", route.Defer: "queued", route.Refuse: "rejected"} {
		if got := Status(r); got != want {
			t.Errorf("Status(%s) = %s, want %s", r, got, want)
		}
	}
}

func TestClean(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		in, want string
		ok       bool
	}{
		{"src/a.js", "src/a.js", true},
		{"./src//a.js", "src/a.js", true},
		{"src/x/../a.js", "src/a.js", true},
		{".", ".", true},
		{"a/../..", "", false},
		{"../a", "", false},
		{"..", "", false},
		{"/etc/passwd", "", false},
		{"", "", false},
		{`src\a.js`, "", false},
		{"src/a\x00.js", "", false},
		{"..a/b", "..a/b", true}, // a name starting with dots is not a climb
	} {
		got, ok := clean(tt.in)
		if got != tt.want || ok != tt.ok {
			t.Errorf("clean(%q) = %q, %v, want %q, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
	if !within("lib/a", "lib") || !within("lib", "lib") || within("library/a", "lib") || !within("x", ".") {
		t.Error("within does not match directories by whole segments")
	}
}

func TestTier(t *testing.T) {
	t.Parallel()
	s := func(v string) *string { return &v }
	for _, tt := range []struct {
		tier *string
		want int
	}{{s("R0"), 0}, {s("R2"), 2}, {s("R3"), 3}, {s("R4"), 4}, {nil, 4}, {s("R5"), 4}, {s("r1"), 4}, {s(""), 4}, {s("R1 "), 4}} {
		if got := (&Plan{RiskTier: tt.tier}).tier(); got != tt.want {
			t.Errorf("tier(%v) = %d, want %d", tt.tier, got, tt.want)
		}
	}
}

// TestDecodeReadsNamesAsARuntimeDoes: a plan means what a runtime that
// reads it by its field names runs. encoding/json matched names in any case
// and kept the last of a repeated one, so {"input": evil, "INPUT": benign}
// was decided on benign.
func TestDecodeReadsNamesAsARuntimeDoes(t *testing.T) {
	t.Parallel()
	for body, want := range map[string]string{
		`{"actionType": "drop_db", "ACTIONTYPE": "read_file", "input": {}}`:         `unknown field "ACTIONTYPE"`,
		`{"actionType": "x", "input": {"to": "evil"}, "INPUT": {"to": "benign"}}`:   `unknown field "INPUT"`,
		`{"actionType": "x", "input": {}, "rollbackPlan": "no", "RollbackPlan": 1}`: `unknown field "RollbackPlan"`,
		`{"actionType": "x", "input": {}, "verification": {"Commands": ["ls"]}}`:    `unknown field "Commands"`,
		`{"actionType": "x", "input": {}, "gated": {"Agent_ID": "bot-1"}}`:          `unknown field "Agent_ID"`,
		`{"actionType": "x", "input": {"to": "a"}, "input": {"to": "b"}}`:           "input is given more than once",
		`{"actionType": "x", "input": {"to": "a", "\u0074o": "b"}}`:                 "input.to is given more than once",
		`{"actionType": "x", "input": {}, "scope": {"allowedFiles": [1]}}`:          "scope.allowedFiles.0 must not be a JSON number",
	} {
		if _, err := Decode([]byte(body)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Decode(%s) = %v, want an error with %q", body, err, want)
		}
	}
}

// TestDecodeKeepsNumbersExact: input and rollback plan numbers stay the
// text sent, for the schema checks and the approval digest.
func TestDecodeKeepsNumbersExact(t *testing.T) {
	t.Parallel()
	p, err := Decode([]byte(`{"actionType": "x", "input": {"id": 12345678901234567890, "a": [0.10000000000000000001]}, "rollbackPlan": {"n": 1.0}, "confidence": 0.5}`))
	if err != nil {
		t.Fatal(err)
	}
	a, _ := p.Input["a"].([]any)
	rb, _ := p.RollbackPlan.(map[string]any)
	if p.Input["id"] != json.Number("12345678901234567890") || len(a) != 1 || a[0] != json.Number("0.10000000000000000001") ||
		rb["n"] != json.Number("1.0") || p.Confidence == nil || *p.Confidence != 0.5 {
		t.Errorf("Decode kept %#v, rollback %#v, confidence %v", p.Input, p.RollbackPlan, p.Confidence)
	}
}
