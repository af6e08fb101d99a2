package actionapi

import (
	"strings"
	"testing"
	"time"

	"github.com/gatedhq/gated/internal/contract"
	"github.com/gatedhq/gated/internal/route"
)

func TestEventVouchesForTheExecutor(t *testing.T) {
	t.Parallel()
	plan := func(ext string) *Plan {
		p, err := Decode([]byte(`{"actionType": "diagnose_error", "riskTier": "R0", "input": {"service": "api"}` + ext + `}`))
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	refs := func(ev map[string]any) []any { r, _ := ev["evidence_refs"].([]any); return r }

	// Without a token: the plan's word alone.
	ev := plan("").Event(route.PrivateRead, "")
	if ev["authorization_state"] != "none" || len(refs(ev)) != 0 {
		t.Errorf("unauthenticated: %v %v", ev["authorization_state"], refs(ev))
	}

	// With one: gated's ref, at authenticated.
	ev = plan("").Event(route.PrivateRead, "runtime")
	got := refs(ev)
	if ev["authorization_state"] != "authenticated" || len(got) != 1 {
		t.Fatalf("authenticated: %v %v", ev["authorization_state"], got)
	}
	ref, _ := got[0].(map[string]any)
	id, _ := ref["source_id"].(string)
	if !strings.HasPrefix(id, "gated-executor:runtime:plan:sha256-") || ref["kind"] != "auth_event" || ref["trust_tier"] != "verified" {
		t.Errorf("gated's ref: %v", ref)
	}
	// The ref names the plan: another input is another ref, the same plan the same.
	other, _ := refs(plan(`, "reason": "x"`).Event(route.PrivateRead, "runtime"))[0].(map[string]any)
	if other["source_id"] != id {
		t.Errorf("the reason changed the plan's name: %v, %v", other["source_id"], id)
	}
	p2, _ := Decode([]byte(`{"actionType": "diagnose_error", "riskTier": "R0", "input": {"service": "db"}}`))
	if r, _ := refs(p2.Event(route.PrivateRead, "runtime"))[0].(map[string]any); r["source_id"] == id {
		t.Errorf("two inputs, one name: %v", id)
	}

	// A declared state below authenticated is raised; one above is kept,
	// for its own evidence to support; the plan's refs stay its own.
	ext := `, "gated": {"authorization_state": "%s", "evidence_refs": ["ticket.7"]}`
	for declared, want := range map[string]string{"user_claimed": "authenticated", "none": "authenticated", "validated": "validated", "confirmed": "confirmed"} {
		p := plan(strings.Replace(ext, "%s", declared, 1))
		ev := p.Event(route.PrivateRead, "runtime")
		if ev["authorization_state"] != want || len(refs(ev)) != 2 || refs(ev)[0] != "ticket.7" {
			t.Errorf("declared %s: %v %v", declared, ev["authorization_state"], refs(ev))
		}
		if len(p.Gated.EvidenceRefs) != 1 {
			t.Errorf("declared %s: the plan's own refs grew to %v", declared, p.Gated.EvidenceRefs)
		}
	}
}

func TestTokenName(t *testing.T) {
	t.Parallel()
	for name, plain := range map[string]bool{
		"runtime": true, "ci.deploy-bot_2": true,
		"alice@example.com": false, "with space": false, "4111111111111111": false,
		"AKIAIOSFODNN7EXAMPLE": false, strings.Repeat("a", 65): false,
	} {
		got := tokenName(name)
		if (got == name) != plain || (!plain && !strings.HasPrefix(got, "sha256-")) {
			t.Errorf("tokenName(%q) = %q, plain %v", name, got, plain)
		}
	}
}

func TestDecodeRefusesGatedsExecutorRef(t *testing.T) {
	t.Parallel()
	for _, ref := range []string{
		`"gated-executor:runtime"`, `"Gated-Executor:x"`, `"  gated-executor:x"`,
		// Fullwidth letters read as gated's in a record; NFKC folds them.
		`"ｇａｔｅｄ-ＥＸＥＣＵＴＯＲ：x"`, `"ｇated-executor:x"`,
		`{"source_id": "gated-executor:runtime:plan:sha256-x", "kind": "auth_event"}`,
	} {
		_, err := Decode([]byte(`{"actionType": "x", "input": {}, "gated": {"evidence_refs": ["ok", ` + ref + `]}}`))
		if err == nil || !strings.Contains(err.Error(), "gated.evidence_refs.1") {
			t.Errorf("Decode with %s: %v", ref, err)
		}
	}
	if _, err := Decode([]byte(`{"actionType": "x", "input": {}, "gated": {"evidence_refs": ["runtime.gated-executor:x", {"source_id": "auth.1", "kind": "auth_event"}]}}`)); err != nil {
		t.Errorf("a plan's own auth_event: %v", err)
	}
}

// gated's executor ref supports authenticated and nothing more, whatever
// the token is called: the contract reads confirmation into any ref whose
// source id says "confirmed", and a plain token name such as
// "unconfirmed-planner" would otherwise make gated vouch that every write
// it sends was confirmed.
func TestExecutorRefNeverReadsAsConfirmation(t *testing.T) {
	t.Parallel()
	p, err := Decode([]byte(`{"actionType": "example_action", "riskTier": "R2", "input": {}, "gated": {"authorization_state": "confirmed"}}`))
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"runtime", "unconfirmed-planner", "User-Confirmed", "ci.CONFIRMED.bot", "confirmed"} {
		prep := contract.Prepare(p.Event(route.Write, name))
		if prep.Event == nil {
			t.Fatalf("token %q: the event is invalid: %v", name, prep.ValidationErrors)
		}
		ev := contract.Evaluate(prep.Event, route.Write, time.Now())
		if ev.Auth.EvidenceSupportedState != route.AuthAuthenticated || ev.Auth.EffectiveState >= route.AuthConfirmed {
			t.Errorf("token %q: gated's ref supports %s, the call is decided %s", name, ev.Auth.EvidenceSupportedState, ev.Auth.EffectiveState)
		}
	}
}
