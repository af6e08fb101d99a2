package server_test

import (
	"context"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/gatedhq/gated/internal/candidate"
	"github.com/gatedhq/gated/internal/catalog"
	"github.com/gatedhq/gated/internal/gate"
	"github.com/gatedhq/gated/internal/route"
	"github.com/gatedhq/gated/internal/server"
	"github.com/gatedhq/gated/internal/testtree"
)

// GET /v1/candidate: this process's counts and the candidate's revisions
// (no stored sums without a database), a precise 400 for a bad since, and
// 404 without a candidate; every answer conforms to the OpenAPI document.
func TestCandidateSummary(t *testing.T) {
	t.Parallel()
	cand := candidate.New(candidate.Config{Engine: gate.New(), Revisions: func() (string, string) { return "sha256:c", "sha256:p" }})
	f := newServer(t, func(d *server.Deps) {
		d.Candidate = cand
		d.Engine = gate.New(gate.WithFollower(cand.Follow))
	})
	reader := map[string]string{"Authorization": "Bearer " + otherSecret} // scope decisions_read
	f.post(validEvent)
	res := f.do(request{method: http.MethodGet, target: "/v1/candidate", header: reader})
	if res.status != http.StatusOK || res.str("policy_revision") != "sha256:p" || res.body["queue_depth"] != float64(1) || res.body["stored"] != nil {
		t.Fatalf("%d %s", res.status, res.raw)
	}
	if res := f.do(request{method: http.MethodGet, target: "/v1/candidate?since=yesterday", header: reader}); res.status != http.StatusBadRequest ||
		res.str("error") != "since must be an RFC 3339 time" {
		t.Fatalf("bad since: %d %s", res.status, res.raw)
	}
	if res := f.do(request{method: http.MethodGet, target: "/v1/candidate", header: map[string]string{"Authorization": "Bearer " + runtimeSecret}}); res.status != http.StatusForbidden {
		t.Fatalf("a token without decisions_read: %d", res.status)
	}
	off := newServer(t, nil)
	if res := off.do(request{method: http.MethodGet, target: "/v1/candidate", header: reader}); res.status != http.StatusNotFound {
		t.Fatalf("without a candidate: %d %s", res.status, res.raw)
	}
}

// A candidate decides an Action API plan with the plan's rules, run anew
// (the live answer's check keeps the tier it applied).
func TestCandidateRunsThePlanRules(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	testtree.Write(t, dir, actionCatalog)
	cat, err := catalog.Load([]string{dir})
	if err != nil {
		t.Fatal(err)
	}
	sources := gate.WithCatalog(func() *catalog.Catalog { return cat }, gate.UnknownDefer, catalog.ArgumentsEnforce)
	var followed *gate.Followed
	f := newServer(t, func(d *server.Deps) {
		d.Engine = gate.New(gate.WithClock(func() time.Time { return fixedNow }), sources, gate.WithFollower(func(x *gate.Followed) { followed = x }))
	})
	r := f.plan(jsonWith(t, writePlan, map[string]string{"gated": confirmed, "rollbackPlan": "null"}))
	if r.str("route") != "refuse" || !slices.Contains(blockersOf(r), "plan_rollback_required") || followed == nil {
		t.Fatalf("live: %s %v", r.str("route"), blockersOf(r))
	}
	d := gate.New(sources).DecideFollowed(context.Background(), followed)
	if d.Route != route.Refuse || !slices.Contains(d.HardBlockers, "plan_rollback_required") {
		t.Fatalf("candidate: %s %v, want the plan's refusal", d.Route, d.HardBlockers)
	}
}
