package server_test

import (
	"context"
	"encoding/json"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gatedhq/gated/internal/approval/approvaltest"
	approvalpg "github.com/gatedhq/gated/internal/approval/postgres"
	"github.com/gatedhq/gated/internal/audit"
	"github.com/gatedhq/gated/internal/audit/postgres"
	"github.com/gatedhq/gated/internal/catalog"
	"github.com/gatedhq/gated/internal/gate"
	"github.com/gatedhq/gated/internal/metrics"
	"github.com/gatedhq/gated/internal/pgtest"
	"github.com/gatedhq/gated/internal/route"
	"github.com/gatedhq/gated/internal/server"
	"github.com/gatedhq/gated/internal/testtree"
)

// The plugin actions the Action API tests decide against: the spec's own
// action.json example (a write-like R2 with a verification command), the
// examples' diagnose_error (R1), and an R3.
var actionCatalog = map[string]string{
	"example_action/action.json": `{
  "name": "example_action",
  "riskTier": "R2",
  "inputSchema": {"type": "object", "required": ["file"], "additionalProperties": false,
    "properties": {"file": {"type": "string", "format": "file-path"},
                   "also": {"type": "array", "items": {"type": "string", "format": "file-path"}}}},
  "outputSchema": {},
  "permissions": {"commands": ["node --check src/file.js"], "filesystem": "workspace"},
  "verification": {"required": true, "commands": ["node --check src/file.js"]},
  "rollback": {"required": true}
}`,
	"diagnose_error/action.json": `{"name": "diagnose_error", "riskTier": "R1",
  "inputSchema": {"type": "object", "properties": {"service": {"type": "string"}}},
  "permissions": {"commands": ["kubectl logs"]}}`,
	"scale_cluster/action.json": `{"name": "scale_cluster", "riskTier": "R3", "inputSchema": {"type": "object"}}`,
}

// specPlan is the spec's plan envelope example, word for word.
const specPlan = `{
"actionId": "action:example",
"actionType": "diagnose_error",
"riskTier": "R1",
"confidence": 0.9,
"reason": "why this action is proposed",
"input": {},
"rollbackPlan": null,
"verification": {
"required": true,
"commands": []
},
"scope": {
"allowedFiles": [],
"allowedDirs": [],
"forbiddenFiles": []
}
}`

// confirmedRef is the authority a runtime vouches for in gated's extension.
const confirmed = `{"authorization_state": "confirmed", "risk_domain": "devops", "evidence_refs": [{"source_id": "ticket.7",
  "kind": "approval", "trust_tier": "verified", "redaction_status": "redacted", "freshness": {"status": "fresh"},
  "provenance": "connector", "retrieved_at": "2026-11-20T11:00:00Z"}]}`

// actionServer is the real handler over the plugin catalog and a fresh
// PostgreSQL audit store.
func actionServer(t *testing.T) (*fixture, audit.Store) {
	t.Helper()
	return actionServerOf(t, actionCatalog, nil)
}

// actionServerOf is actionServer over the catalog files, with mod applied
// to the server's dependencies.
func actionServerOf(t *testing.T, files map[string]string, mod func(*server.Deps)) (*fixture, audit.Store) {
	t.Helper()
	dir := t.TempDir()
	testtree.Write(t, dir, files)
	cat, err := catalog.Load([]string{dir})
	if err != nil {
		t.Fatal(err)
	}
	_, dbURL := approvaltest.Database(t, fixedNow)
	rec := approvaltest.SyncRecorder(t, dbURL)
	store := postgres.NewStore(pgtest.DB(t, dbURL))
	m := metrics.New("test")
	red := audit.NewRedactor([]byte("0123456789abcdef0123456789abcdef"))
	f := newServer(t, func(d *server.Deps) {
		d.Engine = gate.New(gate.WithClock(func() time.Time { return fixedNow }),
			gate.WithCatalog(func() *catalog.Catalog { return cat }, gate.UnknownDefer, catalog.ArgumentsEnforce),
			gate.WithAudit(rec, red, "test"), gate.WithMetrics(m))
		d.Decisions, d.Redactor, d.Metrics = store, red, m
		if mod != nil {
			mod(d)
		}
	})
	return f, store
}

func (f *fixture) plan(body string) *response {
	f.t.Helper()
	return f.do(request{method: http.MethodPost, target: "/v1/action-check", body: strings.NewReader(body),
		header: map[string]string{"Authorization": "Bearer " + runtimeSecret}})
}

func blockersOf(r *response) []string {
	var out []string
	for _, b := range r.body["blockers"].([]any) {
		out = append(out, b.(string))
	}
	return out
}

// writePlan is a write-like R2 plan of example_action that passes every
// plan rule.
const writePlan = `{"actionId": "action:w1", "actionType": "example_action", "riskTier": "R2", "confidence": 0.8,
  "reason": "fix the syntax error", "input": {"file": "src/file.js"}, "rollbackPlan": {"strategy": "git checkout"},
  "verification": {"required": true, "commands": ["node --check src/file.js"]},
  "scope": {"allowedFiles": ["src/file.js"], "allowedDirs": ["lib"], "forbiddenFiles": ["lib/secret.js"]}}`

func TestActionCheckPlans(t *testing.T) {
	t.Parallel()
	f, store := actionServer(t)
	tests := []struct {
		name     string
		body     string
		status   string
		route    string
		tier     string
		blockers []string // all of these, and with want exact, nothing else
		exact    bool
	}{
		// The spec's example as sent to this diagnose_error, which declares
		// no filesystem "none" and so may write: gated vouches for the
		// executor's token, and a write needs more than that.
		{"spec example", specPlan, "queued", "ask", "R1", []string{"write_missing_validation_or_confirmation"}, true},
		{"spec example with authority", jsonWith(t, specPlan, map[string]string{"gated": confirmed}), "approved", "accept", "R1", nil, true},
		{"R2 write with everything", jsonWith(t, writePlan, map[string]string{"gated": confirmed}), "approved", "accept", "R2", nil, true},

		// riskTier: R4, missing or unknown never runs; R3 asks at least.
		{"R4", jsonWith(t, specPlan, map[string]string{"gated": confirmed, "riskTier": `"R4"`}), "rejected", "refuse", "R4", []string{"plan_risk_tier_never_auto"}, false},
		{"missing tier", jsonWith(t, specPlan, map[string]string{"gated": confirmed, "riskTier": ""}), "rejected", "refuse", "R4", []string{"plan_risk_tier_never_auto"}, false},
		{"null tier", jsonWith(t, specPlan, map[string]string{"gated": confirmed, "riskTier": "null"}), "rejected", "refuse", "R4", []string{"plan_risk_tier_never_auto"}, false},
		{"unknown tier", jsonWith(t, specPlan, map[string]string{"gated": confirmed, "riskTier": `"r1"`}), "rejected", "refuse", "R4", []string{"plan_risk_tier_never_auto"}, false},
		// confirmed carries the caller's own verified approval ref: it does not lift R3.
		{"R3", jsonWith(t, specPlan, map[string]string{"gated": confirmed, "riskTier": `"R3"`, "rollbackPlan": `"revert"`,
			"verification": `{"required": true}`}), "queued", "ask", "R3", []string{"plan_risk_tier_requires_approval"}, true},
		// The catalog's tier is a floor: scale_cluster is R3 whatever the plan says.
		{"catalog floor", jsonWith(t, specPlan, map[string]string{"gated": confirmed, "actionType": `"scale_cluster"`, "riskTier": `"R0"`,
			"rollbackPlan": `"revert"`}), "queued", "ask", "R3", []string{"plan_risk_tier_requires_approval"}, false},

		// An uncatalogued action defers (--unknown-tools) and allows no command.
		{"uncatalogued", jsonWith(t, specPlan, map[string]string{"gated": confirmed, "actionType": `"nope"`,
			"verification": `{"required": true, "commands": ["ls"]}`}), "rejected", "refuse", "R1",
			[]string{"unknown_tool_category", "tool_not_in_catalog", "plan_verification_command_not_allowed"}, true},

		// R2 write-like needs a rollbackPlan and verification.required true.
		{"R2 null rollback", jsonWith(t, writePlan, map[string]string{"gated": confirmed, "rollbackPlan": "null"}), "rejected", "refuse", "R2", []string{"plan_rollback_required"}, true},
		{"R2 empty rollback", jsonWith(t, writePlan, map[string]string{"gated": confirmed, "rollbackPlan": "{}"}), "rejected", "refuse", "R2", []string{"plan_rollback_required"}, true},
		{"R2 verification off", jsonWith(t, writePlan, map[string]string{"gated": confirmed, "verification": `{"required": false, "commands": []}`}), "rejected", "refuse", "R2", []string{"plan_verification_required"}, true},
		{"R2 no verification", jsonWith(t, writePlan, map[string]string{"gated": confirmed, "verification": ""}), "rejected", "refuse", "R2", []string{"plan_verification_required"}, true},
		// A plan may not lower the tier below the catalog's R2.
		{"R2 declared R1", jsonWith(t, writePlan, map[string]string{"gated": confirmed, "riskTier": `"R1"`, "rollbackPlan": ""}), "rejected", "refuse", "R2", []string{"plan_rollback_required"}, true},

		// inputSchema and the command allowlist.
		{"input fails the schema", jsonWith(t, writePlan, map[string]string{"gated": confirmed, "input": `{"file": 7}`}), "rejected", "refuse", "R2", []string{"arguments_invalid", "plan_path_invalid"}, true},
		{"command not allowed", jsonWith(t, writePlan, map[string]string{"gated": confirmed,
			"verification": `{"required": true, "commands": ["node --check src/file.js", "rm -rf /"]}`}), "rejected", "refuse", "R2", []string{"plan_verification_command_not_allowed"}, true},
		{"command with an extra argument", jsonWith(t, writePlan, map[string]string{"gated": confirmed,
			"verification": `{"required": true, "commands": ["node --check src/file.js --eval=x"]}`}), "rejected", "refuse", "R2", []string{"plan_verification_command_not_allowed"}, true},
		{"command spacing does not matter", jsonWith(t, writePlan, map[string]string{"gated": confirmed,
			"verification": `{"required": true, "commands": ["node   --check\tsrc/file.js"]}`}), "approved", "accept", "R2", nil, true},
		{"no command of an uncatalogued kind", jsonWith(t, specPlan, map[string]string{"gated": confirmed,
			"verification": `{"required": true, "commands": ["kubectl logs api"]}`}), "rejected", "refuse", "R1", []string{"plan_verification_command_not_allowed"}, true},

		// Scope paths.
		{"file in allowedDirs", jsonWith(t, writePlan, map[string]string{"gated": confirmed, "input": `{"file": "./lib/x/../a.js"}`}), "approved", "accept", "R2", nil, true},
		{"forbidden file wins", jsonWith(t, writePlan, map[string]string{"gated": confirmed, "input": `{"file": "lib/./secret.js"}`}), "rejected", "refuse", "R2", []string{"plan_path_forbidden"}, true},
		{"dot-dot escape", jsonWith(t, writePlan, map[string]string{"gated": confirmed, "input": `{"file": "lib/../../etc/passwd"}`}), "rejected", "refuse", "R2", []string{"plan_path_outside_workspace"}, true},
		{"dot-dot out of a dir", jsonWith(t, writePlan, map[string]string{"gated": confirmed, "input": `{"file": "lib/../src/other.js"}`}), "rejected", "refuse", "R2", []string{"plan_path_out_of_scope"}, true},
		{"absolute path", jsonWith(t, writePlan, map[string]string{"gated": confirmed, "input": `{"file": "/src/file.js"}`}), "rejected", "refuse", "R2", []string{"plan_path_outside_workspace"}, true},
		{"prefix is not a dir", jsonWith(t, writePlan, map[string]string{"gated": confirmed, "input": `{"file": "library/a.js"}`}), "rejected", "refuse", "R2", []string{"plan_path_out_of_scope"}, true},
		{"backslash", jsonWith(t, writePlan, map[string]string{"gated": confirmed, "input": `{"file": "lib\\..\\..\\x"}`}), "rejected", "refuse", "R2", []string{"plan_path_invalid"}, true},
		{"list of files", jsonWith(t, writePlan, map[string]string{"gated": confirmed, "input": `{"file": "src/file.js", "also": ["lib/a.js", "docs/x.md"]}`}), "rejected", "refuse", "R2", []string{"plan_path_out_of_scope"}, true},
		{"no scope", jsonWith(t, writePlan, map[string]string{"gated": confirmed, "scope": ""}), "rejected", "refuse", "R2", []string{"plan_path_out_of_scope"}, true},
		{"escaping scope entry", jsonWith(t, writePlan, map[string]string{"gated": confirmed, "scope": `{"allowedDirs": ["../"]}`}), "rejected", "refuse", "R2", []string{"plan_scope_invalid"}, true},
		{"workspace root", jsonWith(t, writePlan, map[string]string{"gated": confirmed, "scope": `{"allowedDirs": ["."]}`}), "approved", "accept", "R2", nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := f.plan(tt.body)
			if r.status != http.StatusOK {
				t.Fatalf("status %d: %.400s", r.status, r.raw)
			}
			got := blockersOf(r)
			if r.str("status") != tt.status || r.str("route") != tt.route || r.str("riskTier") != tt.tier {
				t.Errorf("status %s route %s tier %s (blockers %v), want %s %s %s\n%s", r.str("status"), r.str("route"), r.str("riskTier"), got, tt.status, tt.route, tt.tier, r.body["findings"])
			}
			for _, b := range tt.blockers {
				if !slices.Contains(got, b) {
					t.Errorf("blockers %v lack %s", got, b)
				}
			}
			if tt.exact && len(got) != len(tt.blockers) {
				t.Errorf("blockers %v, want exactly %v", got, tt.blockers)
			}
			if exec, _ := r.body["execute"].(bool); exec != (tt.status == "approved") {
				t.Errorf("execute %v with status %s", exec, tt.status)
			}
			// The one decision path recorded it, argument values redacted.
			rec, err := store.Get(context.Background(), r.str("decisionId"))
			if err != nil {
				t.Fatalf("the decision was not recorded: %v", err)
			}
			if rec.ToolName == "" || rec.FinalRoute != tt.route {
				t.Errorf("record tool %q route %q, want route %s", rec.ToolName, rec.FinalRoute, tt.route)
			}
		})
	}
}

func TestActionCheckRecordAndMetrics(t *testing.T) {
	t.Parallel()
	f, store := actionServer(t)
	r := f.plan(jsonWith(t, writePlan, map[string]string{"gated": confirmed, "input": `{"file": "lib/../../etc/passwd"}`}))
	rec, err := store.Get(context.Background(), r.str("decisionId"))
	if err != nil {
		t.Fatal(err)
	}
	if rec.ToolName != "example_action" || rec.ActionID != "example_action" || rec.RequestID != "action:w1" ||
		!slices.Contains(rec.HardBlockers, "plan_path_outside_workspace") || rec.FinalRoute != "refuse" {
		t.Errorf("record %+v", rec)
	}
	// Nothing secret leaves: neither the path, the reason nor the rollback
	// plan is in the record or the answer's messages.
	stored, _ := json.Marshal(rec)
	for _, secret := range []string{"etc/passwd", "fix the syntax error", "git checkout"} {
		if strings.Contains(string(stored), secret) {
			t.Errorf("the record holds %q: %s", secret, stored)
		}
		if strings.Contains(string(r.raw), secret) {
			t.Errorf("the answer holds %q: %s", secret, r.raw)
		}
	}
	mf := f.do(request{method: http.MethodGet, target: "/metrics", header: map[string]string{"Authorization": "Bearer " + scraperSecret}})
	if !strings.Contains(string(mf.raw), `plan_path_outside_workspace`) {
		t.Errorf("metrics do not count the plan decision:\n%s", mf.raw)
	}
}

func TestActionCheckBadInput(t *testing.T) {
	t.Parallel()
	f := newServer(t, nil)
	for _, c := range []struct {
		name, body string
		status     int
		msg        string
	}{
		{"unknown field", jsonWith(t, specPlan, map[string]string{"colour": `"red"`}), 400, `unknown field "colour"`},
		{"unknown nested field", jsonWith(t, specPlan, map[string]string{"scope": `{"allowedPaths": []}`}), 400, `unknown field "allowedPaths"`},
		{"no actionType", jsonWith(t, specPlan, map[string]string{"actionType": ""}), 400, "actionType is required"},
		{"empty actionType", jsonWith(t, specPlan, map[string]string{"actionType": `" "`}), 400, "actionType is required"},
		{"no input", jsonWith(t, specPlan, map[string]string{"input": ""}), 400, "input is required"},
		{"input not an object", jsonWith(t, specPlan, map[string]string{"input": `[1]`}), 400, "input must not be a JSON array"},
		{"tier of the wrong type", jsonWith(t, specPlan, map[string]string{"riskTier": `4`}), 400, "riskTier must not be a JSON number"},
		{"confidence out of range", jsonWith(t, specPlan, map[string]string{"confidence": `1.5`}), 400, "confidence must be a number from 0 to 1"},
		{"commands of the wrong type", jsonWith(t, specPlan, map[string]string{"verification": `{"commands": "ls"}`}), 400, "verification.commands must not be a JSON string"},
		// A runtime reads input by its name; encoding/json also took INPUT
		// (the last one winning), so gated decided on another input.
		{"a field in another case", jsonWith(t, specPlan, map[string]string{"INPUT": `{"replicas": 1}`}), 400, `unknown field "INPUT"`},
		{"a field given twice", `{"actionType": "scale_cluster", "input": {"replicas": 90}, "input": {"replicas": 1}}`, 400, "is given more than once"},
		{"an input key given twice", `{"actionType": "scale_cluster", "input": {"replicas": 90, "r\u0065plicas": 1}}`, 400, "replicas\" is given more than once"},
		{"array body", `[]`, 400, "must be a JSON object"},
		{"malformed", `{"actionType":`, 400, "malformed JSON"},
		{"too deep", `{"actionType": "x", "input": ` + strings.Repeat(`{"a":`, 100) + `1` + strings.Repeat(`}`, 100) + `}`, 400, "nesting exceeds"},
		{"huge", `{"actionType": "x", "input": {"a": "` + strings.Repeat("x", 1<<20) + `"}}`, 413, "exceeds"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := f.plan(c.body)
			if r.status != c.status || r.str("route") != "refuse" || !strings.Contains(r.str("error"), c.msg) {
				t.Errorf("%d %.300s, want %d with %q", r.status, r.raw, c.status, c.msg)
			}
		})
	}
	// Without a token, nothing is decided.
	if r := f.do(request{method: http.MethodPost, target: "/v1/action-check", body: strings.NewReader(specPlan)}); r.status != http.StatusUnauthorized {
		t.Errorf("unauthenticated: %d", r.status)
	}
}

// approvalPlans serves the Action API with approvals on a real approval
// store, and sends R3 scale_cluster plans; the plan's parts outside the
// gated extension are body, the evidence refs past the fixed one refs.
func approvalPlans(t *testing.T) (f *fixture, plan func(body, refs string) *response) {
	_, dbURL := approvaltest.Database(t, time.Now())
	rec := approvaltest.SyncRecorder(t, dbURL)
	store := approvalpg.New(pgtest.DB(t, dbURL))
	t.Cleanup(store.Close)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "action.json"), []byte(actionCatalog["scale_cluster/action.json"]), 0o644); err != nil {
		t.Fatal(err)
	}
	cat, err := catalog.Load([]string{dir})
	if err != nil {
		t.Fatal(err)
	}
	f = newServer(t, func(d *server.Deps) {
		d.Engine = gate.New(gate.WithCatalog(func() *catalog.Catalog { return cat }, gate.UnknownDefer, catalog.ArgumentsEnforce),
			gate.WithAudit(rec, audit.NewRedactor([]byte("0123456789abcdef0123456789abcdef")), "test"),
			gate.WithApprovals(store, ""))
		d.Tokens, d.Approvals = approvalTokens(t), store
	})
	ext := func(extra string) string {
		return `{"agent_id": "agent-7", "authorization_state": "confirmed", "risk_domain": "devops", "evidence_refs": [{"source_id": "ticket.7",
  "kind": "policy", "trust_tier": "verified", "redaction_status": "redacted", "freshness": {"status": "fresh"}, "provenance": "connector"}` + extra + `]}`
	}
	return f, func(body, refs string) *response {
		body = `{"actionId": "action:s1", "actionType": "scale_cluster", ` + body + `, "gated": ` + ext(refs) + `}`
		return f.do(request{method: http.MethodPost, target: "/v1/action-check", body: strings.NewReader(body), header: bearer(askerSecret)})
	}
}

// approvedPlan sends body, approves the approval it is queued with, and
// returns the approval's evidence ref for the retry.
func approvedPlan(t *testing.T, f *fixture, plan func(body, refs string) *response, body string) string {
	t.Helper()
	first := plan(body, "")
	a, _ := first.body["approval"].(map[string]any)
	if first.str("status") != "queued" || a == nil || !slices.Contains(blockersOf(first), "plan_risk_tier_requires_approval") {
		t.Fatalf("R3 plan: %.600s", first.raw)
	}
	if r := f.decideApproval(a["id"].(string), "approve", aliceSecret, `{}`); r.status != http.StatusOK {
		t.Fatalf("approve: %d %.300s", r.status, r.raw)
	}
	ref, _ := json.Marshal(a["evidence_ref"])
	return "," + string(ref)
}

const scalePlan = `"riskTier": "R3", "input": {"nodes": 12},
  "rollbackPlan": {"nodes": 8}, "verification": {"required": true, "commands": []}`

// An R3 plan is queued with one of gated's approvals; once a person
// approves it, the same plan with the approval's ref runs, once.
func TestActionCheckR3Approval(t *testing.T) {
	t.Parallel()
	f, plan := approvalPlans(t)
	ref := approvedPlan(t, f, plan, scalePlan)
	if r := plan(scalePlan, ref); r.str("status") != "approved" || r.str("route") != "accept" {
		t.Fatalf("the approved plan: %.600s", r.raw)
	}
	if r := plan(scalePlan, ref); r.str("status") == "approved" {
		t.Fatalf("the approval was spent twice: %.600s", r.raw)
	}
}

// Issue 25 §4: an approval binds the whole plan, not only its input. The
// approved plan resent with another rollback plan, verification, scope,
// tier or an input number past a double's precision is another call: its
// digest differs, and the approval stays unspent for the plan approved.
func TestActionCheckApprovalBindsThePlan(t *testing.T) {
	t.Parallel()
	f, plan := approvalPlans(t)
	approved := `"riskTier": "R3", "input": {"nodes": 12, "account": 1234567890123456789},
  "rollbackPlan": {"nodes": 8}, "verification": {"required": true, "commands": []}, "scope": {"allowedDirs": ["deploy"]}`
	ref := approvedPlan(t, f, plan, approved)
	for name, changed := range map[string]string{
		"rollback plan": `"riskTier": "R3", "input": {"nodes": 12, "account": 1234567890123456789},
  "rollbackPlan": "whatever", "verification": {"required": true, "commands": []}, "scope": {"allowedDirs": ["deploy"]}`,
		"verification": `"riskTier": "R3", "input": {"nodes": 12, "account": 1234567890123456789},
  "rollbackPlan": {"nodes": 8}, "verification": {"required": true, "commands": ["true"]}, "scope": {"allowedDirs": ["deploy"]}`,
		"scope": `"riskTier": "R3", "input": {"nodes": 12, "account": 1234567890123456789},
  "rollbackPlan": {"nodes": 8}, "verification": {"required": true, "commands": []}, "scope": {"allowedDirs": ["."]}`,
		"risk tier": `"riskTier": "R2", "input": {"nodes": 12, "account": 1234567890123456789},
  "rollbackPlan": {"nodes": 8}, "verification": {"required": true, "commands": []}, "scope": {"allowedDirs": ["deploy"]}`,
		"input number": `"riskTier": "R3", "input": {"nodes": 12, "account": 1234567890123456800},
  "rollbackPlan": {"nodes": 8}, "verification": {"required": true, "commands": []}, "scope": {"allowedDirs": ["deploy"]}`,
	} {
		r := plan(changed, ref)
		if r.str("status") == "approved" || !slices.Contains(blockersOf(r), route.CodeApprovalDigestMismatch) {
			t.Errorf("the approved plan with another %s: %.600s", name, r.raw)
		}
	}
	if r := plan(approved, ref); r.str("status") != "approved" {
		t.Fatalf("the approved plan itself: %.600s", r.raw)
	}
}

// The R4 refusal says how the plan came to R4: a tier the catalog raised
// is neither missing nor unknown, and reads as what it is.
func TestActionCheckSaysHowR4(t *testing.T) {
	t.Parallel()
	files := maps.Clone(actionCatalog)
	files["wipe_disk/action.json"] = `{"name": "wipe_disk", "riskTier": "R4", "inputSchema": {"type": "object"}}`
	f, _ := actionServerOf(t, files, nil)
	for tier, want := range map[string]string{
		`"R0"`: "action wipe_disk has risk tier R0, which its catalog entry raises to R4; R4 never runs automatically",
		`"R4"`: "action wipe_disk has risk tier R4; R4 never runs automatically",
		"":     "action wipe_disk has no risk tier, which counts as R4; R4 never runs automatically",
		`"r1"`: "action wipe_disk has an unknown risk tier, which counts as R4; R4 never runs automatically",
	} {
		res := f.plan(jsonWith(t, specPlan, map[string]string{"actionType": `"wipe_disk"`, "riskTier": tier}))
		var got []string
		for _, fd := range res.body["findings"].([]any) {
			if fd := fd.(map[string]any); fd["code"] == "plan_risk_tier_never_auto" {
				got = append(got, fd["message"].(string))
			}
		}
		if res.status != http.StatusOK || res.str("riskTier") != "R4" || !slices.Equal(got, []string{want}) {
			t.Errorf("riskTier %s: %d %q, want %q", tier, res.status, got, want)
		}
	}
}
