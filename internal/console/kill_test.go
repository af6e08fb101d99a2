package console_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gatedhq/gated/internal/console"
	"github.com/gatedhq/gated/internal/kill"
	killpg "github.com/gatedhq/gated/internal/kill/postgres"
	"github.com/gatedhq/gated/internal/pgtest"
	pgdb "github.com/gatedhq/gated/internal/postgres"
)

// The kill switch page lists every kill kept, for scope admin only.
func TestKillPage(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	_, dbURL := pgtest.Fresh(t)
	if err := pgdb.Migrate(ctx, dbURL, "up", io.Discard); err != nil {
		t.Fatal(err)
	}
	ks := killpg.New(pgtest.DB(t, dbURL))
	inForce := kill.Kill{Scope: kill.ScopeAgent, Value: "agent-7", Reason: "runaway <loop>", CreatedBy: "oncall"}
	lifted := kill.Kill{Scope: kill.ScopeAll, Reason: "incident 42", CreatedBy: "oncall"}
	for _, k := range []*kill.Kill{&inForce, &lifted} {
		if err := ks.Create(ctx, k, time.Now()); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := ks.Lift(ctx, lifted.ID, "lead", time.Now()); err != nil {
		t.Fatal(err)
	}
	e := newEnv(t, func(o *console.Options) { o.Kills = ks })

	admin := e.browser(t)
	if p := admin.signIn(adminSecret, "/ui/"); p.status != http.StatusSeeOther {
		t.Fatalf("sign-in: %d\n%s", p.status, p.body)
	}
	if to := admin.get("/ui/"); to.status != http.StatusSeeOther || !strings.Contains(to.header.Get("Location"), "/ui/kill") {
		t.Errorf("an admin-only token lands on %q", to.header.Get("Location"))
	}
	p := admin.get("/ui/kill")
	wantStatus(t, p, http.StatusOK, inForce.ID, lifted.ID, "agent-7", "runaway &lt;loop&gt;", "in force", "by lead", `href="/ui/kill"`)
	if strings.Contains(p.body, `href="/ui/approvals"`) {
		t.Error("an admin-only token is shown the approvals")
	}

	alice := e.browser(t)
	mustSignIn(t, alice, aliceSecret)
	wantStatus(t, alice.get("/ui/kill"), http.StatusForbidden)
	if strings.Contains(alice.get("/ui/approvals").body, `href="/ui/kill"`) {
		t.Error("a token without scope admin is shown the kill switch link")
	}

	off := newEnv(t)
	b := off.browser(t)
	mustSignIn(t, b, adminSecret)
	wantStatus(t, b.get("/ui/kill"), http.StatusOK, "The kill switch is off")
}
