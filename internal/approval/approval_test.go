package approval

import (
	"bytes"
	"encoding/json"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"
)

var t0 = time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)

func TestParseStatus(t *testing.T) {
	for _, s := range []Status{StatusPending, StatusApproved, StatusDenied, StatusExpired, StatusUsed} {
		if got, err := ParseStatus(string(s)); err != nil || got != s {
			t.Errorf("ParseStatus(%q) = %q, %v", s, got, err)
		}
	}
	for _, s := range []string{"", "Approved", "revoked", "pending "} {
		if got, err := ParseStatus(s); err == nil {
			t.Errorf("ParseStatus(%q) = %q, want an error", s, got)
		}
	}
}

func TestExpiresAt(t *testing.T) {
	if got := ExpiresAt(t0, 0); !got.Equal(t0.Add(15 * time.Minute)) {
		t.Errorf("no ttl: %v, want the 15 minute default", got)
	}
	if got := ExpiresAt(t0, -time.Second); !got.Equal(t0.Add(DefaultTTL)) {
		t.Errorf("negative ttl: %v, want the default", got)
	}
	if got := ExpiresAt(t0, time.Hour); !got.Equal(t0.Add(time.Hour)) {
		t.Errorf("1h ttl: %v", got)
	}
}

// Every field of an approval, as clients and the webhook see it, has a
// snake_case JSON name; an undecided, unused approval leaves out what has
// not happened yet; the masked arguments are never in it (approvers read
// them by their own endpoint).
func TestApprovalJSON(t *testing.T) {
	snake := regexp.MustCompile(`^[a-z]+(_[a-z]+)*$`)
	for _, typ := range []reflect.Type{reflect.TypeFor[Approval](), reflect.TypeFor[Finding](), reflect.TypeFor[Revisions](), reflect.TypeFor[Identity]()} {
		for f := range typ.Fields() {
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if f.Name == "MaskedArguments" && name == "-" {
				continue
			}
			if !snake.MatchString(name) {
				t.Errorf("%s.%s has JSON name %q, want snake_case", typ.Name(), f.Name, name)
			}
		}
	}
	a := pending()
	a.Route = "ask"
	a.Findings = []Finding{{Code: "contract.write_missing_explicit_confirmation", Route: "ask", Message: "a write needs confirmation"}}
	a.Revisions = Revisions{Catalog: "cat-1", Policy: "pol-1"}
	a.MaskedArguments = json.RawMessage(`{"note":"the whole arguments"}`)
	b, err := json.Marshal(a)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(b, []byte("the whole arguments")) {
		t.Errorf("an approval's JSON carries its masked arguments: %s", b)
	}
	a.MaskedArguments = nil
	for _, k := range []string{"decided_at", "used_at", "approver", "reason", "consumed_by"} {
		if _, ok := m[k]; ok {
			t.Errorf("a pending approval has %q: %s", k, b)
		}
	}
	for _, k := range []string{"route", "tool_category", "risk_domain", "action_id", "findings", "revisions", "requester"} {
		if _, ok := m[k]; !ok {
			t.Errorf("an approval lacks %q: %s", k, b)
		}
	}
	var back Approval
	if err := json.Unmarshal(b, &back); err != nil || !reflect.DeepEqual(&back, a) {
		t.Errorf("JSON round trip: %+v, %v", back, err)
	}
}
