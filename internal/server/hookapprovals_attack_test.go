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
// is another agent's call, and opens its own.
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
