package route

import (
	"encoding/json"
	"slices"
	"testing"
)

func TestRouteOrderAndStricter(t *testing.T) {
	t.Parallel()
	order := []Route{Accept, Ask, Defer, Refuse}
	for i, a := range order {
		for j, b := range order {
			want := order[max(i, j)]
			if got := Stricter(a, b); got != want {
				t.Errorf("Stricter(%s, %s) = %s, want %s", a, b, got, want)
			}
		}
	}
}

func TestRouteParseAndText(t *testing.T) {
	t.Parallel()
	for _, r := range []Route{Accept, Ask, Defer, Refuse} {
		got, err := ParseRoute(r.String())
		if err != nil || got != r {
			t.Errorf("ParseRoute(%q) = %v, %v; want %v", r.String(), got, err, r)
		}
		b, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		var back Route
		if err := json.Unmarshal(b, &back); err != nil || back != r {
			t.Errorf("round trip of %s via %s = %v, %v", r, b, back, err)
		}
	}
	for _, bad := range []string{"", "Accept", "ACCEPT", "allow", "accept ", "revise"} {
		got, err := ParseRoute(bad)
		if err == nil {
			t.Errorf("ParseRoute(%q) accepted", bad)
		}
		if got != Refuse {
			t.Errorf("ParseRoute(%q) = %s on error, want refuse", bad, got)
		}
		var r Route
		if err := json.Unmarshal([]byte(`"`+bad+`"`), &r); err == nil || r != Refuse {
			t.Errorf("unmarshal %q = %s, %v; want refuse and an error", bad, r, err)
		}
	}
	// An out-of-range value never reads as permissive.
	if s := Route(42).String(); s != "refuse" {
		t.Errorf("Route(42) = %q", s)
	}
}

func TestAuthStateOrderParseAndText(t *testing.T) {
	t.Parallel()
	states := []AuthState{AuthNone, AuthUserClaimed, AuthAuthenticated, AuthValidated, AuthConfirmed}
	names := []string{"none", "user_claimed", "authenticated", "validated", "confirmed"}
	for i, a := range states {
		if a.String() != names[i] {
			t.Errorf("%d.String() = %q, want %q", a, a.String(), names[i])
		}
		if i > 0 && !(states[i-1] < a) {
			t.Errorf("%s is not weaker than %s", states[i-1], a)
		}
		b, err := json.Marshal(a)
		if err != nil || string(b) != `"`+names[i]+`"` {
			t.Errorf("marshal %s = %s, %v", a, b, err)
		}
		var back AuthState
		if err := json.Unmarshal(b, &back); err != nil || back != a {
			t.Errorf("round trip %s = %s, %v", a, back, err)
		}
	}
	for _, bad := range []string{"", "None", "admin", "verified"} {
		got, err := ParseAuthState(bad)
		if err == nil || got != AuthNone {
			t.Errorf("ParseAuthState(%q) = %s, %v; want none and an error", bad, got, err)
		}
	}
	// An out-of-range state never reads as authorized.
	if s := AuthState(9).String(); s != "none" {
		t.Errorf("AuthState(9) = %q", s)
	}
}

func TestCategoryValid(t *testing.T) {
	t.Parallel()
	for _, c := range []Category{PublicRead, PrivateRead, Write, Unknown} {
		if !c.Valid() {
			t.Errorf("%s not valid", c)
		}
	}
	for _, c := range []Category{"", "read", "Write", "public-read"} {
		if c.Valid() {
			t.Errorf("%q valid", c)
		}
	}
}

func TestCombine(t *testing.T) {
	t.Parallel()
	f := func(code string, r Route, blocking bool) Finding {
		return Finding{Source: SourceContract, Code: code, Route: r, Blocking: blocking}
	}
	tests := []struct {
		name     string
		in       []Finding
		route    Route
		blockers []string
	}{
		{"no findings accept", nil, Accept, []string{}},
		{"empty slice accept", []Finding{}, Accept, []string{}},
		{"non-blocking accept warning", []Finding{f("w", Accept, false)}, Accept, []string{}},
		{"non-blocking raises route", []Finding{f("runtime_recommended_defer", Defer, false)}, Defer, []string{}},
		{"max of routes", []Finding{f("a", Ask, true), f("r", Refuse, true), f("d", Defer, true)}, Refuse, []string{"a", "r", "d"}},
		{"blocking accept is at least ask", []Finding{f("b", Accept, true)}, Ask, []string{"b"}},
		{"dedupe keeps first order", []Finding{f("x", Ask, true), f("y", Defer, true), f("x", Refuse, true)}, Refuse, []string{"x", "y"}},
		{"non-blocking same code is not a blocker", []Finding{f("x", Defer, false), f("x", Ask, true)}, Defer, []string{"x"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := Combine(tt.in)
			if o.Route != tt.route {
				t.Errorf("route = %s, want %s", o.Route, tt.route)
			}
			if o.HardBlockers == nil || !slices.Equal(o.HardBlockers, tt.blockers) {
				t.Errorf("hard blockers = %#v, want %#v", o.HardBlockers, tt.blockers)
			}
			if pass := o.Route == Accept && len(tt.blockers) == 0; o.Pass() != pass {
				t.Errorf("Pass() = %v, want %v", o.Pass(), pass)
			}
		})
	}
}

// Adding a finding never loosens the outcome.
func TestCombineMonotone(t *testing.T) {
	t.Parallel()
	all := []Finding{}
	for _, r := range []Route{Accept, Ask, Defer, Refuse} {
		for _, b := range []bool{false, true} {
			all = append(all, Finding{Code: r.String(), Route: r, Blocking: b})
		}
	}
	for i := range all {
		for j := range all {
			one := Combine(all[i : i+1])
			two := Combine([]Finding{all[i], all[j]})
			if two.Route < one.Route || len(two.HardBlockers) < len(one.HardBlockers) {
				t.Errorf("adding %+v to %+v loosened %+v to %+v", all[j], all[i], one, two)
			}
		}
	}
}

func TestOutcomePass(t *testing.T) {
	t.Parallel()
	if !(Outcome{Route: Accept, HardBlockers: []string{}}).Pass() {
		t.Error("accept without blockers must pass")
	}
	if (Outcome{Route: Accept, HardBlockers: []string{"x"}}).Pass() {
		t.Error("accept with a blocker must not pass")
	}
	if (Outcome{Route: Ask}).Pass() {
		t.Error("ask must not pass")
	}
}

func TestVerifiedApprovals(t *testing.T) {
	t.Parallel()
	ev := Event{EvidenceRefs: []EvidenceRef{
		{Kind: "approval", TrustTier: "verified"},
		{Kind: "approval", TrustTier: "user_claimed"},
		{Kind: "policy", TrustTier: "verified"},
		{Kind: "approval", TrustTier: "verified"},
	}}
	if n := ev.VerifiedApprovals(); n != 2 {
		t.Errorf("VerifiedApprovals = %d, want 2", n)
	}
	if n := (&Event{}).VerifiedApprovals(); n != 0 {
		t.Errorf("no refs: %d", n)
	}
}

// A ref naming a gated approval counts only once gated has verified it:
// the caller's trust_tier on it is a claim gated does not take.
func TestVerifiedApprovalsGatedRefs(t *testing.T) {
	t.Parallel()
	forged := EvidenceRef{SourceID: ApprovalRefPrefix + "0193a5b4-7c3e-7a1b-8f00-000000000001", Kind: "approval", TrustTier: "verified"}
	ev := Event{EvidenceRefs: []EvidenceRef{forged}}
	if n := ev.VerifiedApprovals(); n != 0 {
		t.Errorf("a forged verified gated approval counts: %d", n)
	}
	ev.EvidenceRefs[0].GatedVerified = true
	ev.EvidenceRefs[0].TrustTier = "runtime"
	if n := ev.VerifiedApprovals(); n != 1 {
		t.Errorf("a gated-verified approval: %d, want 1", n)
	}
	if id, ok := forged.GatedApproval(); !ok || id != "0193a5b4-7c3e-7a1b-8f00-000000000001" {
		t.Errorf("GatedApproval = %q, %v", id, ok)
	}
	other := forged
	other.Kind = "other"
	if _, ok := other.GatedApproval(); ok {
		t.Error("a ref of kind other names a gated approval")
	}
}
