package server_test

import (
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/gatedhq/gated/internal/adapter/hook/wire"
)

// An approved hook call, retried by many identical calls at once, runs
// once: the others are denied (the approval is spent in the transaction
// that records the one that ran). The approval serves Codex's call only:
// the same tool, arguments, token and workspace through Gemini CLI's hook
// is another agent's call, and opens its own, and the approval's ref sent
// to /pre-tool-check with the event the hook built is refused
// approval_digest_mismatch.
func TestAttackedHookApprovalReuse(t *testing.T) {
	t.Parallel()
	h := hookApprovalsServer(t)
	call := codexCall(refundInput)
	id := h.denied(t, askerSecret, call)
	h.approve(t, id)

	gemini := `{"session_id":"s","cwd":"/w","hook_event_name":"BeforeTool","tool_name":"refund","tool_input":` + refundInput + `}`
	res := h.do(request{method: http.MethodPost, target: "/v1/hooks/gemini-cli", body: strings.NewReader(gemini), header: bearer(askerSecret)})
	if v, _, err := wire.GeminiCLI.Verdict(res.raw); err != nil || v != wire.Deny || strings.Contains(string(res.raw), id) {
		t.Fatalf("Gemini CLI's call used Codex's approval: %d %s", res.status, res.raw)
	}

	// The approval's ref, carried to /pre-tool-check with Codex's event as
	// the hook built it: that call binds no workspace, so it is another call.
	pre := `{"tool_name":"refund","tool_category":"write","authorization_state":"confirmed","risk_domain":"unknown",
		"agent_id":"codex","proposed_arguments":` + refundInput + `,"recommended_route":"accept",
		"evidence_refs":[{"source_id":"gated-approval:` + id + `","kind":"approval","trust_tier":"runtime",
			"redaction_status":"public","freshness":{"status":"fresh"},"provenance":"gated"}]}`
	if r := h.do(request{method: http.MethodPost, target: "/pre-tool-check", body: strings.NewReader(pre), header: bearer(askerSecret)}); r.str("route") == "accept" || !strings.Contains(string(r.raw), `"approval_digest_mismatch"`) {
		t.Fatalf("/pre-tool-check with the hook's approval: %.600s", r.raw)
	}
	if s := h.status(t, id); s != "approved" {
		t.Fatalf("other calls touched the approval: %s", s)
	}

	const n = 8
	verdicts := make(chan wire.Verdict, n)
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			r := h.do(request{method: http.MethodPost, target: "/v1/hooks/codex", body: strings.NewReader(call), header: bearer(askerSecret)})
			v, _, err := wire.Codex.Verdict(r.raw)
			if err != nil {
				v = "unreadable"
			}
			verdicts <- v
		})
	}
	wg.Wait()
	close(verdicts)
	allowed := 0
	for v := range verdicts {
		if v == wire.Allow {
			allowed++
		}
	}
	if allowed != 1 {
		t.Fatalf("%d of %d concurrent retries ran on one approval", allowed, n)
	}
	if s := h.status(t, id); s != "used" {
		t.Fatalf("the approval is %s, not used", s)
	}
}
