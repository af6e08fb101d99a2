package console_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gatedhq/gated/internal/audit"
	"github.com/gatedhq/gated/internal/candidate"
	"github.com/gatedhq/gated/internal/console"
	"github.com/gatedhq/gated/internal/gate"
)

// The candidate's page lists where its route differs from the live one,
// newest first, filtered by tool, principal and direction, linking each
// decision, with the caller's text escaped; only tokens that read
// decisions see it, and only while a candidate runs.
func TestCandidateDisagreements(t *testing.T) {
	t.Parallel()
	cand := candidate.New(candidate.Config{Engine: gate.New(), Revisions: func() (string, string) { return "sha256:candcat", "sha256:candpol" }})
	e := newEnv(t, func(o *console.Options) { o.Candidate = cand })
	row := func(id string, ago time.Duration, tool, live, route, dir string, principals ...string) *audit.Candidate {
		return &audit.Candidate{DecisionID: id, DecidedAt: e.now.Add(-ago).Truncate(time.Microsecond), ToolName: tool, TokenName: "agent",
			Principals: principals, LiveRoute: live, Route: route, HardBlockers: []string{}, CatalogRevision: "sha256:candcat",
			PolicyRevision: "sha256:candpol", Direction: dir, RecordedAt: e.now}
	}
	narrow := row("dec-narrow", 3*time.Minute, "wire_transfer", "accept", "refuse", audit.DirectionNarrower, "bot://agent-7")
	narrow.HardBlockers = []string{"policy_no_grant"}
	rows := []*audit.Candidate{
		narrow,
		row("dec-wide", time.Minute, "get_weather", "refuse", "accept", audit.DirectionWider, "bot://agent-9"),
		row("dec-same", 2*time.Minute, "wire_transfer", "ask", "ask", audit.DirectionSame, "bot://agent-7"),
		row("dec-script", 4*time.Minute, "<script>alert(1)</script>", "ask", "defer", audit.DirectionNarrower, "bot://agent-9"),
	}
	if err := e.candidates.WriteCandidates(deadline(t), rows); err != nil {
		t.Fatal(err)
	}

	b := e.browser(t)
	mustSignIn(t, b, readerSecret)
	p := b.get("/ui/candidate")
	wantStatus(t, p, http.StatusOK, `href="/ui/candidate"`, "sha256:candpol"[:12], "policy_no_grant", "&lt;script&gt;alert(1)&lt;/script&gt;")
	if strings.Contains(p.body, "<script>alert(1)") {
		t.Error("a tool name is not escaped")
	}
	if i, j := strings.Index(p.body, "dec-wide"), strings.Index(p.body, "dec-narrow"); i < 0 || j < 0 || i > j {
		t.Error("disagreements are not newest first")
	}
	if row := rowOf(p.body, "dec-narrow"); !strings.Contains(row, "accept") || !strings.Contains(row, "refuse") || !strings.Contains(row, "narrower") {
		t.Errorf("dec-narrow's row lacks its routes and direction: %s", row)
	}
	only := func(query string, want ...string) {
		t.Helper()
		p := b.get("/ui/candidate?" + query)
		wantStatus(t, p, http.StatusOK)
		for _, id := range []string{"dec-narrow", "dec-wide", "dec-same", "dec-script"} {
			if shown, wanted := strings.Contains(p.body, "/ui/decisions/"+id+`"`), strings.Contains(strings.Join(want, " "), id); shown != wanted {
				t.Errorf("?%s: %s shown %v, want %v", query, id, shown, wanted)
			}
		}
	}
	only("", "dec-narrow", "dec-wide", "dec-script")
	only("direction=wider", "dec-wide")
	only("direction=narrower", "dec-narrow", "dec-script")
	only("tool=wire_transfer", "dec-narrow")
	only("principal=bot%3A%2F%2Fagent-9", "dec-wide", "dec-script")
	only("principal=bot%3A%2F%2Fagent-9&direction=narrower", "dec-script")
	wantStatus(t, b.get("/ui/candidate?direction=same"), http.StatusBadRequest, "cannot be made")

	// The decision's page shows what the candidate decided, and a
	// decision it did not decide shows nothing of it.
	e.record(t, decision("dec-narrow", narrow.DecidedAt, "wire_transfer", "accept"), decision("dec-alone", e.now, "wire_transfer", "accept"))
	wantStatus(t, b.get("/ui/decisions/dec-narrow"), http.StatusOK, "Candidate policy", "narrower", "policy_no_grant", "sha256:candpol")
	if p := b.get("/ui/decisions/dec-alone"); strings.Contains(p.body, "Candidate policy") {
		t.Error("a decision no candidate decided shows a candidate")
	}

	pol := e.browser(t)
	mustSignIn(t, pol, policySecret)
	wantStatus(t, pol.get("/ui/candidate"), http.StatusForbidden)

	// Without a candidate there is no page, and no link to one.
	off := newEnv(t)
	ob := off.browser(t)
	mustSignIn(t, ob, readerSecret)
	if strings.Contains(ob.get("/ui/decisions").body, `href="/ui/candidate"`) {
		t.Error("the console links a candidate page while none runs")
	}
	wantStatus(t, ob.get("/ui/candidate"), http.StatusNotFound, "No candidate policy runs")
}
