package console_test

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/gatedhq/gated/client"
	"github.com/gatedhq/gated/internal/auth"
	"github.com/gatedhq/gated/internal/pgtest"
	"github.com/gatedhq/gated/internal/testgated"
)

// The browser test runs under `make test-browser` (part of make test-e2e),
// which sets GATED_BROWSER_TEST=1; without Chromium it then fails rather
// than skips. Screenshots go to a temporary directory, or to docs/img with
// -update-screenshots (or GATED_UPDATE_SCREENSHOTS=1), which is how the
// committed ones are made.
var updateScreenshots = flag.Bool("update-screenshots", os.Getenv("GATED_UPDATE_SCREENSHOTS") == "1",
	"write the browser test's screenshots to docs/img")

// The people and programs of the browser test.
const (
	opsSecret     = "browser-ops-0123456789abcdef0123456789abcdef"
	runtimeSecret = "browser-runtime-0123456789abcdef0123456789ab"
	hmacKey       = "browser-test-audit-hmac-key-0123456789"
)

// chromium finds the browser: $GATED_CHROMIUM, else Debian's chromium.
func chromium(t *testing.T) string {
	t.Helper()
	if os.Getenv("GATED_BROWSER_TEST") == "" {
		t.Skip("the browser test runs under make test-browser (GATED_BROWSER_TEST=1)")
	}
	for _, name := range []string{os.Getenv("GATED_CHROMIUM"), "chromium", "chromium-browser", "google-chrome"} {
		if name == "" {
			continue
		}
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Fatal("GATED_BROWSER_TEST is set but no Chromium was found: install Debian's chromium package (apt-get install chromium) or set GATED_CHROMIUM")
	return ""
}

// shots writes the test's screenshots.
type shots struct {
	t   *testing.T
	ctx context.Context
	dir string
}

// take captures the page as name.png. A capture is given 20 s and tried
// twice: headless Chromium now and then never answers one (about one run in
// eight, with the page itself fine), and the screenshots illustrate the docs
// rather than assert anything, so outside -update-screenshots a capture that
// does not come is logged, not a failure.
func (s shots) take(name string) {
	s.t.Helper()
	var png []byte
	var err error
	for range 2 {
		ctx, cancel := context.WithTimeout(s.ctx, 20*time.Second)
		png, err = chromedp.Run(ctx, chromedp.CaptureScreenshot())
		cancel()
		if err == nil {
			break
		}
	}
	if err != nil {
		if *updateScreenshots {
			s.t.Fatalf("screenshot %s: %v", name, err)
		}
		s.t.Logf("screenshot %s not taken: %v", name, err)
		return
	}
	path := filepath.Join(s.dir, name+".png")
	if err := os.WriteFile(path, png, 0o644); err != nil {
		s.t.Fatal(err)
	}
	s.t.Logf("screenshot %s", path)
}

// TestBrowserApprovalFlow drives the console in headless Chromium against
// a real gated and PostgreSQL: an operator signs in, watches an approval
// appear while the runtime's SDK call waits on it, approves it, sees the
// call run its tool, finds the used approval and both decisions in the
// explorer, and cannot approve a request of their own.
func TestBrowserApprovalFlow(t *testing.T) {
	chrome := chromium(t)
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()

	_, dbURL := pgtest.Fresh(t)
	dir := t.TempDir()
	tokens := filepath.Join(dir, "tokens.yaml")
	if err := os.WriteFile(tokens, fmt.Appendf(nil, `
- name: ops-alice
  sha256: %s
  scopes: [approve, decisions_read, catalog_read, policy_read, pre_tool_check]
  principals: ["operator://alice"]
- name: support-runtime
  sha256: %s
  scopes: [pre_tool_check]
  principals: ["bot://support-agent"]
`, auth.Hash(opsSecret), auth.Hash(runtimeSecret)), 0o600); err != nil {
		t.Fatal(err)
	}
	policyDir := filepath.Join(dir, "policy")
	if err := os.Mkdir(policyDir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(policyDir, "POLICY.md"), []byte(supportPolicy), 0o644); err != nil {
		t.Fatal(err)
	}
	gated := testgated.Start(t, "--database-url", dbURL, "--audit-hmac-key", hmacKey, "--audit-durability", "sync",
		"--tokens", tokens, "--catalog", "../../examples/catalog", "--policy", policyDir)

	shotDir := t.TempDir()
	if *updateScreenshots {
		shotDir = filepath.Join("..", "..", "docs", "img")
	}
	alloc, stop := chromedp.NewExecAllocator(ctx, append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chrome), chromedp.NoSandbox, chromedp.WindowSize(1440, 900))...)
	defer stop()
	bctx, closeBrowser := chromedp.NewContext(alloc, chromedp.WithErrorf(t.Logf))
	defer closeBrowser()
	shot := shots{t: t, ctx: bctx, dir: shotDir}
	do := func(what string, steps ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		if err := chromedp.Do(bctx, steps...); err != nil {
			// What the browser showed, for the failure's reader.
			sctx, cancel := context.WithTimeout(context.WithoutCancel(bctx), 30*time.Second)
			defer cancel()
			if png, serr := chromedp.Run(sctx, chromedp.CaptureScreenshot()); serr == nil {
				_ = os.WriteFile(filepath.Join(shotDir, "failure.png"), png, 0o644)
			}
			body, _ := chromedp.Run(sctx, chromedp.Evaluate[string](`location.href + "\n" + document.body.innerText`))
			t.Fatalf("%s: %v\nthe page (%s):\n%s\ngated's log:\n%s", what, err, filepath.Join(shotDir, "failure.png"), body, gated.Logs())
		}
	}
	text := func(sel string) string {
		t.Helper()
		s, err := chromedp.Run(bctx, chromedp.Text(chromedp.CSS(sel)))
		if err != nil {
			t.Fatalf("text of %s: %v", sel, err)
		}
		return s
	}
	// until waits for a JavaScript condition on the page; the test's
	// context bounds it, not a timer of its own.
	until := func(what, js string) {
		t.Helper()
		if _, err := chromedp.Run(bctx, chromedp.Poll[bool](js, chromedp.WithPollingTimeout(4*time.Minute))); err != nil {
			t.Fatalf("waiting for %s: %v", what, err)
		}
	}

	// Sign in: the console sends us to the sign-in page and back.
	do("sign in",
		chromedp.EmulateViewport(1440, 900),
		chromedp.Navigate(gated.URL+"/ui/"),
		chromedp.WaitVisible(chromedp.ID("token")),
	)
	shot.take("console-sign-in")
	do("sign in",
		chromedp.SendKeys(chromedp.ID("token"), opsSecret),
		chromedp.Submit(chromedp.ID("token")),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="who"]`)),
	)
	if who := text(`[data-testid="who"]`); who != "ops-alice" {
		t.Fatalf("signed in as %q", who)
	}
	until("the live queue to connect", `document.getElementById("live").textContent.startsWith("Live")`)
	// A mark on the page: if it survives, the card arrived without a reload.
	do("mark the page", chromedp.Evaluate[chromedp.Void](`window.gatedMark = 1`))

	// The runtime guards a refund with its SDK and waits for a person.
	var decisions []*client.Decision
	first := make(chan *client.Decision, 1)
	ran := make(chan struct{})
	type result struct {
		out string
		err error
	}
	done := make(chan result, 1)
	go func() {
		out, err := client.Guard(ctx, client.New(gated.URL, client.WithToken(runtimeSecret),
			client.WithOnDecision(func(d *client.Decision) {
				if len(decisions) == 0 {
					first <- d
				}
				decisions = append(decisions, d)
			})),
			refundEvent(), func(context.Context) (string, error) {
				close(ran)
				return "refund re_4411 issued", nil
			}, client.WaitForApproval(4*time.Minute))
		done <- result{out, err}
	}()

	// gated asks for a person: the answer carries a pending approval.
	select {
	case d := <-first:
		if d.Approval == nil {
			t.Fatalf("the refund was not offered an approval: route %s, blockers %v\n%s", d.Route, d.HardBlockers, d.Raw)
		}
	case <-ctx.Done():
		t.Fatalf("no decision:\n%s", gated.Logs())
	}

	// It appears in the queue, live, with what an approver needs.
	do("see the approval appear", chromedp.WaitVisible(chromedp.CSS("li.card[data-id]")))
	if marked, err := chromedp.Run(bctx, chromedp.Evaluate[bool](`window.gatedMark === 1`)); err != nil || !marked {
		t.Fatalf("the queue reloaded the page instead of updating in place (%v)", err)
	}
	card := text("li.card")
	for _, want := range []string{"issue_refund", "support-runtime", "support-agent-1", "irreversible_action_requires_verified_approval", `"amount": 120`} {
		if !strings.Contains(card, want) {
			t.Errorf("the queue's card lacks %q:\n%s", want, card)
		}
	}
	select {
	case r := <-done:
		t.Fatalf("the SDK call returned before anyone approved: %q %v", r.out, r.err)
	default:
	}
	do("type a reason", chromedp.SendKeys(chromedp.CSS("li.card textarea"), "Customer called; damaged on arrival, photos in ticket 4411."))
	until("the arrival highlight to fade", `!document.querySelector(".fresh")`)
	shot.take("console-approvals-queue")

	// Approve it: the waiting call runs the tool.
	id, err := chromedp.Run(bctx, chromedp.AttributeValue(chromedp.CSS("li.card"), "data-id"))
	if err != nil || !id.Exists {
		t.Fatalf("approval id: %v", err)
	}
	do("approve", chromedp.Click(chromedp.CSS("li.card button.approve")), chromedp.WaitVisible(chromedp.CSS("p.notice")))
	var r result
	select {
	case r = <-done:
	case <-ctx.Done():
		t.Fatalf("the SDK call did not return after the approval:\n%s", gated.Logs())
	}
	if r.err != nil || r.out != "refund re_4411 issued" {
		t.Fatalf("the approved call: %q, %v\n%s", r.out, r.err, gated.Logs())
	}
	<-ran
	if len(decisions) != 2 || decisions[0].Approval == nil || decisions[0].Approval.ID != id.Value || decisions[1].Route != "accept" {
		t.Fatalf("the SDK saw %d decisions: %+v", len(decisions), decisions)
	}
	asked, used := decisions[0].DecisionID, decisions[1].DecisionID

	// The approval is used, by the decision that ran the tool.
	do("open the approval",
		chromedp.Navigate(gated.URL+"/ui/approvals/"+id.Value),
		chromedp.WaitVisible(chromedp.CSS(".badge.status-used")),
	)
	page := text("main")
	for _, want := range []string{"ops-alice", "damaged on arrival", asked, used} {
		if !strings.Contains(page, want) {
			t.Errorf("the used approval's page lacks %q:\n%s", want, page)
		}
	}
	shot.take("console-approval-used")

	// Both decisions are in the explorer, linked to the approval.
	do("search the decisions",
		chromedp.Navigate(gated.URL+"/ui/decisions"),
		chromedp.WaitVisible(chromedp.ID("tool")),
		chromedp.SendKeys(chromedp.ID("tool"), "issue_refund"),
		chromedp.Submit(chromedp.ID("tool")),
		chromedp.WaitVisible(chromedp.CSS(`a[href="/ui/decisions/`+used+`"]`)),
		chromedp.WaitVisible(chromedp.CSS(`a[href="/ui/decisions/`+asked+`"]`)),
	)
	if n, err := chromedp.Run(bctx, chromedp.Evaluate[int](
		`document.querySelectorAll('table.decisions a[href="/ui/approvals/`+id.Value+`"]').length`)); err != nil || n != 2 {
		t.Errorf("%d decisions link to the approval, want 2 (%v)", n, err)
	}
	shot.take("console-decisions")
	do("open the asking decision",
		chromedp.Click(chromedp.CSS(`a[href="/ui/decisions/`+asked+`"]`)),
		chromedp.WaitVisible(chromedp.CSS(`a[href="/ui/approvals/`+id.Value+`"]`)),
	)
	if page := text("main"); !strings.Contains(page, "irreversible_action_requires_verified_approval") {
		t.Errorf("the asking decision's page lacks its blocker:\n%s", page)
	}
	shot.take("console-decision")

	// A request of one's own cannot be approved by oneself.
	own, err := client.New(gated.URL, client.WithToken(opsSecret)).Check(ctx, refundEvent())
	if err != nil || own.Approval == nil {
		t.Fatalf("alice's own request: %+v %v", own, err)
	}
	do("try to approve one's own request",
		chromedp.Navigate(gated.URL+"/ui/approvals/"+own.Approval.ID),
		chromedp.WaitVisible(chromedp.ID("reason")),
		chromedp.SendKeys(chromedp.ID("reason"), "I know what I asked for."),
		chromedp.Click(chromedp.CSS("button.approve")),
		chromedp.WaitVisible(chromedp.ID("problem")),
	)
	if p := text("#problem"); !strings.Contains(p, "You cannot decide your own request") {
		t.Fatalf("self-approval shows %q", p)
	}
	shot.take("console-self-approval")

	do("open the catalog", chromedp.Navigate(gated.URL+"/ui/catalog"), chromedp.WaitVisible(chromedp.ID("policy-title")))
	shot.take("console-catalog")

	// The keyboard reaches the main content first: the skip link.
	do("tab to the skip link", chromedp.Navigate(gated.URL+"/ui/approvals"), chromedp.WaitVisible(chromedp.CSS("h1")),
		chromedp.KeyEvent("\t"))
	if focused, err := chromedp.Run(bctx, chromedp.Evaluate[string](`document.activeElement.className`)); err != nil || focused != "skip" {
		t.Errorf("the first Tab focuses %q, want the skip link (%v)", focused, err)
	}
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		t.Fatal("the browser test ran out of time")
	}
}

// supportPolicy lets the support runtime, and alice, refund.
const supportPolicy = `---
schema: policy/v1
id: "@acme/support"
version: 1.0.0
default: deny
grants:
  - principal: "bot://support-agent"
    actions:
      - { action: "billing:refund" }
      - { action: "messaging:send-email" }
  - principal: "operator://alice"
    actions:
      - { action: "billing:refund" }
---

Support refunds, each approved by a person in the console.
`

// refundEvent is the call the runtime guards: a refund, which the example
// catalog marks irreversible (risk level 3, approval always).
func refundEvent() client.Event {
	return client.Event{
		"tool_name":           "issue_refund",
		"tool_category":       "write",
		"authorization_state": "user_claimed",
		"risk_domain":         "commerce",
		"agent_id":            "support-agent-1",
		"evidence_refs": []any{map[string]any{
			"source_id": "ticket.4411", "kind": "tool_result", "trust_tier": "runtime", "redaction_status": "redacted",
			"summary": "The customer reported the parcel damaged.", "provenance": "crm", "freshness": map[string]any{"status": "fresh"},
		}},
		"recommended_route":  "accept",
		"proposed_arguments": map[string]any{"payment_id": "pay_8842", "amount": 120, "reason": "damaged"},
	}
}
