package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/gatedhq/gated/internal/server"
)

// specExamples are the JSON examples of spec/action-api-lts.md, in order:
// the plan envelope, the result envelope and the action.json minimum
// contract. They are read from the spec itself, so the tests decide the
// spec's own text.
func specExamples(t *testing.T) (plan, actionJSON map[string]any) {
	t.Helper()
	raw, err := os.ReadFile("../../spec/action-api-lts.md")
	if err != nil {
		t.Fatal(err)
	}
	var docs []map[string]any
	for i := 0; i < len(raw); {
		at := bytes.Index(raw[i:], []byte("\n{\n"))
		if at < 0 {
			break
		}
		var doc map[string]any
		dec := json.NewDecoder(bytes.NewReader(raw[i+at+1:]))
		if err := dec.Decode(&doc); err != nil {
			t.Fatalf("an example of the spec does not parse: %v", err)
		}
		docs = append(docs, doc)
		i += at + 1 + int(dec.InputOffset())
	}
	if len(docs) != 3 || docs[0]["actionId"] != "action:example" || docs[2]["name"] != "example_action" {
		t.Fatalf("the spec's examples are not the plan, result and action.json: %v", docs)
	}
	return docs[0], docs[2]
}

// edited is a deep copy of doc with the fields set (nil deletes) at
// slash-separated paths.
func edited(t *testing.T, doc map[string]any, set map[string]any) string {
	t.Helper()
	var c map[string]any
	b, _ := json.Marshal(doc)
	_ = json.Unmarshal(b, &c)
	for p, v := range set {
		keys := strings.Split(p, "/")
		m := c
		for _, k := range keys[:len(keys)-1] {
			next, ok := m[k].(map[string]any)
			if !ok {
				next = map[string]any{}
				m[k] = next
			}
			m = next
		}
		if v == nil {
			delete(m, keys[len(keys)-1])
		} else {
			m[keys[len(keys)-1]] = v
		}
	}
	out, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

// tierCatalog is action.json files made from the spec's example: the
// example itself (a write-like R2), an R1 and an R0 read, and R1s whose
// declarations say, or may say, that they change something.
func tierCatalog(t *testing.T, action map[string]any) map[string]string {
	t.Helper()
	read := func(name, tier string, set map[string]any) string {
		all := map[string]any{"name": name, "riskTier": tier, "permissions/filesystem": "none", "rollback/required": false}
		for k, v := range set {
			all[k] = v
		}
		if _, ok := set["permissions"]; ok {
			delete(all, "permissions/filesystem") // edited sets paths in no order
		}
		return edited(t, action, all)
	}
	return map[string]string{
		"example_action/action.json": edited(t, action, nil),
		// The spec's diagnose_error, declared as the spec's action.json
		// with filesystem none: an R1 read.
		"diagnose_error/action.json": read("diagnose_error", "R1", nil),
		// An R0 is read-only diagnostics: its workspace access reads.
		"collect_logs/action.json":  read("collect_logs", "R0", map[string]any{"permissions/filesystem": "workspace"}),
		"mutates/action.json":       read("r1_mutates", "R1", map[string]any{"mutates": []any{"workspace:src"}}),
		"misspelt/action.json":      read("r1_misspelt", "R1", map[string]any{"permissions/filesystem": nil, "permissions/filesytem": "none"}),
		"capital/action.json":       read("r1_capital", "R1", map[string]any{"permissions/filesystem": "None"}),
		"readonly/action.json":      read("r1_readonly", "R1", map[string]any{"permissions/filesystem": "read-only"}),
		"number/action.json":        read("r1_number", "R1", map[string]any{"permissions/filesystem": 0}),
		"network/action.json":       read("r1_network", "R1", map[string]any{"permissions/network": "internet"}),
		"nopermissions/action.json": read("r1_nopermissions", "R1", map[string]any{"permissions": nil}),
	}
}

type tierCase struct {
	name     string
	body     string
	status   string
	route    string
	tier     string
	blockers []string // all of these
	not      []string // none of these
	exact    bool     // and nothing else
}

func (tt tierCase) check(t *testing.T, r *response) {
	t.Helper()
	if r.status != http.StatusOK {
		t.Fatalf("%s: status %d: %.400s", tt.name, r.status, r.raw)
	}
	got := blockersOf(r)
	if r.str("status") != tt.status || r.str("route") != tt.route || r.str("riskTier") != tt.tier {
		t.Errorf("%s: status %s route %s tier %s (blockers %v), want %s %s %s", tt.name, r.str("status"), r.str("route"), r.str("riskTier"), got, tt.status, tt.route, tt.tier)
	}
	for _, b := range tt.blockers {
		if !slices.Contains(got, b) {
			t.Errorf("%s: blockers %v lack %s", tt.name, got, b)
		}
	}
	for _, b := range tt.not {
		if slices.Contains(got, b) {
			t.Errorf("%s: blockers %v hold %s", tt.name, got, b)
		}
	}
	if tt.exact && len(got) != len(tt.blockers) {
		t.Errorf("%s: blockers %v, want exactly %v", tt.name, got, tt.blockers)
	}
}

// Issue 29 §3: an authenticated executor is vouched for as a hook's
// runtime is, so a catalogued R0 or R1 read runs and a write still needs
// confirmation; write-likeness is what the action.json declares, so an R1
// read raised to R3 is queued, not rejected for want of a rollback plan.
func TestActionCheckTiers(t *testing.T) {
	t.Parallel()
	plan, action := specExamples(t)
	f, store := actionServerOf(t, tierCatalog(t, action), nil)
	const confirm = "write_missing_validation_or_confirmation"
	rollback := map[string]any{"strategy": "git checkout"}
	tests := []tierCase{
		// The spec's plan word for word, of an R1 that reads.
		{name: "spec plan, R1 read", body: edited(t, plan, nil), status: "approved", route: "accept", tier: "R1", exact: true},
		// Raised to R3 by the planner: R3 never runs automatically, and a
		// read needs no rollback plan. gated's vouching is no approval.
		{name: "R1 read raised to R3", body: edited(t, plan, map[string]any{"riskTier": "R3"}), status: "queued", route: "ask", tier: "R3",
			blockers: []string{"plan_risk_tier_requires_approval"}, exact: true},
		{name: "R0 read", body: edited(t, plan, map[string]any{"actionType": "collect_logs", "riskTier": "R0"}), status: "approved", route: "accept", tier: "R0", exact: true},

		// Writes as before: the spec's own action.json is write-like.
		{name: "R2 write without rollback", body: edited(t, plan, map[string]any{"actionType": "example_action", "riskTier": "R2"}),
			status: "rejected", route: "refuse", tier: "R2", blockers: []string{"plan_rollback_required", confirm}},
		{name: "R2 write needs confirmation", body: edited(t, plan, map[string]any{"actionType": "example_action", "riskTier": "R2", "rollbackPlan": rollback}),
			status: "queued", route: "ask", tier: "R2", blockers: []string{confirm, "risk_level_requires_confirmation"}, exact: true},
		{name: "R2 write without verification", body: edited(t, plan, map[string]any{"actionType": "example_action", "riskTier": "R2", "rollbackPlan": rollback, "verification/required": false}),
			status: "rejected", route: "refuse", tier: "R2", blockers: []string{"plan_verification_required"}},
		// A plan cannot make a catalogued write a read by its tier.
		{name: "write claimed R0", body: edited(t, plan, map[string]any{"actionType": "example_action", "riskTier": "R0", "rollbackPlan": rollback}),
			status: "queued", route: "ask", tier: "R2", blockers: []string{confirm, "risk_level_requires_confirmation"}, exact: true},
		{name: "write claimed R0 without rollback", body: edited(t, plan, map[string]any{"actionType": "example_action", "riskTier": "R0"}),
			status: "rejected", route: "refuse", tier: "R2", blockers: []string{"plan_rollback_required"}},
	}
	// Declarations that say, or may say, the action changes something:
	// write-like, failing closed on what gated does not know.
	for _, name := range []string{"r1_mutates", "r1_misspelt", "r1_capital", "r1_readonly", "r1_number", "r1_network", "r1_nopermissions"} {
		tests = append(tests,
			tierCase{name: name + " at R1", body: edited(t, plan, map[string]any{"actionType": name}), status: "queued", route: "ask", tier: "R1",
				blockers: []string{confirm}, exact: true},
			tierCase{name: name + " raised to R3", body: edited(t, plan, map[string]any{"actionType": name, "riskTier": "R3"}), status: "rejected", route: "refuse", tier: "R3",
				blockers: []string{"plan_rollback_required", "plan_risk_tier_requires_approval"}})
	}
	for _, tt := range tests {
		tt.check(t, f.plan(tt.body))
	}

	// gated recommends accept for the plan; the contract lowers it to ask
	// for a write at authenticated. The finding and the record say so and
	// do not put the ask in the runtime's mouth.
	w := f.plan(edited(t, plan, map[string]any{"actionType": "example_action", "riskTier": "R2", "rollbackPlan": rollback}))
	found := false
	for _, x := range w.body["findings"].([]any) {
		fd := x.(map[string]any)
		if fd["code"] != "runtime_recommended_ask" {
			continue
		}
		found = true
		if msg, _ := fd["message"].(string); fd["source"] != "contract" || strings.Contains(msg, "runtime") || !strings.Contains(msg, "lowered") {
			t.Errorf("the lowered accept is attributed to the runtime: %v", fd)
		}
	}
	if !found {
		t.Errorf("no runtime_recommended_ask finding for the lowered accept: %s", w.raw)
	}

	// The record names gated's ref: the executor's token and the plan.
	r := f.plan(edited(t, plan, nil))
	rec, err := store.Get(context.Background(), r.str("decisionId"))
	if err != nil {
		t.Fatal(err)
	}
	if rec.EffectiveAuth != "authenticated" || rec.DeclaredAuth != "authenticated" || len(rec.Evidence) != 1 ||
		!strings.HasPrefix(rec.Evidence[0].SourceID, "gated-executor:runtime:plan:sha256-") || rec.Evidence[0].Kind != "auth_event" || rec.TokenName != "runtime" {
		t.Errorf("record auth %s/%s evidence %+v token %s", rec.DeclaredAuth, rec.EffectiveAuth, rec.Evidence, rec.TokenName)
	}
	// Another plan is another ref.
	other := f.plan(edited(t, plan, map[string]any{"input": map[string]any{"service": "api"}}))
	rec2, err := store.Get(context.Background(), other.str("decisionId"))
	if err != nil {
		t.Fatal(err)
	}
	if len(rec2.Evidence) != 1 || rec2.Evidence[0].SourceID == rec.Evidence[0].SourceID {
		t.Errorf("two plans, one ref: %+v %+v", rec.Evidence, rec2.Evidence)
	}
}

// Without tokens gated authenticates nobody, so it vouches for nobody: a
// read stays queued for want of authority, and an R1 read raised to R3 is
// still queued, not rejected.
func TestActionCheckTiersOpen(t *testing.T) {
	t.Parallel()
	plan, action := specExamples(t)
	f, store := actionServerOf(t, tierCatalog(t, action), func(d *server.Deps) { d.Tokens = nil })
	send := func(body string) *response {
		return f.do(request{method: http.MethodPost, target: "/v1/action-check", body: strings.NewReader(body)})
	}
	unauthenticated := []string{"private_read_not_authenticated", "missing_evidence_refs"}
	for _, tt := range []tierCase{
		{name: "spec plan, R1 read", body: edited(t, plan, nil), status: "queued", route: "defer", tier: "R1", blockers: unauthenticated, exact: true},
		{name: "R1 read raised to R3", body: edited(t, plan, map[string]any{"riskTier": "R3"}), status: "queued", route: "defer", tier: "R3",
			blockers: append(slices.Clone(unauthenticated), "plan_risk_tier_requires_approval"), exact: true},
		{name: "R0 read", body: edited(t, plan, map[string]any{"actionType": "collect_logs", "riskTier": "R0"}), status: "queued", route: "defer", tier: "R0",
			blockers: unauthenticated, exact: true},
		{name: "R2 write without rollback", body: edited(t, plan, map[string]any{"actionType": "example_action", "riskTier": "R2"}),
			status: "rejected", route: "refuse", tier: "R2", blockers: []string{"plan_rollback_required"}},
	} {
		r := send(tt.body)
		tt.check(t, r)
		if rec, err := store.Get(context.Background(), r.str("decisionId")); err != nil || len(rec.Evidence) != 0 || rec.EffectiveAuth != "none" {
			t.Errorf("%s: an open gated vouched: %+v %v", tt.name, rec, err)
		}
	}
}

// A plan cannot carry gated's ref itself: only gated vouches, and only for
// the token it checked.
func TestActionCheckForgedExecutorRef(t *testing.T) {
	t.Parallel()
	plan, action := specExamples(t)
	for _, open := range []bool{false, true} {
		var mod func(*server.Deps)
		if open {
			mod = func(d *server.Deps) { d.Tokens = nil }
		}
		f, _ := actionServerOf(t, tierCatalog(t, action), mod)
		for _, ref := range []any{
			map[string]any{"source_id": "gated-executor:runtime:plan:sha256-aaaaaaaaaaaaaaaa", "kind": "auth_event", "trust_tier": "verified",
				"redaction_status": "redacted", "freshness": map[string]any{"status": "fresh"}, "provenance": "gated_action_check"},
			"GATED-EXECUTOR:runtime",
			" gated-executor:x",
		} {
			body := edited(t, plan, map[string]any{"gated": map[string]any{"authorization_state": "authenticated", "evidence_refs": []any{ref}}})
			r := f.plan(body)
			if r.status != http.StatusBadRequest || r.str("route") != "refuse" || !strings.Contains(r.str("error"), "which only gated gives") {
				t.Errorf("open %v, forged %v: %d %.300s", open, ref, r.status, r.raw)
			}
		}
	}
}

// The answers docs/action-api.md shows ("## Answer"): the spec's plan
// against the example catalog's diagnose_error (a write: filesystem
// workspace at R1), as the doc's command sends it and word for word.
func TestActionCheckDocAnswer(t *testing.T) {
	t.Parallel()
	plan, _ := specExamples(t)
	action, err := os.ReadFile("../../examples/catalog/plugins/diagnose_error/action.json")
	if err != nil {
		t.Fatal(err)
	}
	f, _ := actionServerOf(t, map[string]string{"diagnose_error/action.json": string(action)}, nil)
	const confirm = "write_missing_validation_or_confirmation"
	for _, tt := range []tierCase{
		{name: "doc's plan", body: edited(t, plan, map[string]any{"input": map[string]any{"service": "api"}}), status: "queued", route: "ask", tier: "R1",
			blockers: []string{confirm}, exact: true},
		{name: "spec's plan word for word", body: edited(t, plan, nil), status: "rejected", route: "refuse", tier: "R1",
			blockers: []string{confirm, "arguments_invalid"}, exact: true},
	} {
		tt.check(t, f.plan(tt.body))
	}
}
