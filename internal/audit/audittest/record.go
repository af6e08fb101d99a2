package audittest

import (
	"fmt"
	"time"

	"github.com/gatedhq/gated/internal/audit"
	"github.com/gatedhq/gated/internal/route"
)

// Record is a plausible redacted record with id dec-NNNNNN (i), decided at
// at; its tool and route vary with i (route accept when i%3 is 1). An ask
// names the approval it created and an accept the one it used (it was
// the retry the approval allowed), so the round trips store a value in
// every column.
func Record(i int, at time.Time) *audit.Record {
	rec := &audit.Record{
		DecisionID: fmt.Sprintf("dec-%06d", i), DecidedAt: at,
		RequestID: fmt.Sprintf("req-%d", i), AgentID: "agent-1", ToolName: []string{"send_email", "get_weather"}[i%2],
		ActionID: "email:send", ActionVersion: "1.0.0",
		DeclaredCategory: "write", EffectiveCategory: "write", DeclaredAuth: "user_claimed", EffectiveAuth: "user_claimed",
		RiskDomain: "customer_support", RuntimeRoute: "accept", FinalRoute: []string{"ask", "accept", "refuse"}[i%3],
		GateDecision: "fail", HardBlockers: []string{route.CodeWriteMissingExplicitConfirmation},
		Reasons: []string{"write needs confirmation"}, FindingCodes: []string{"contract.write_missing_explicit_confirmation"},
		CatalogRevision: "cat-1", PolicyRevision: "pol-1",
		TokenName: "ci", GatedVersion: "test", LatencyMS: audit.Milliseconds(1500 * time.Microsecond),
		ApprovalID: []string{approvalID(i), approvalID(i - 1), ""}[i%3],
	}
	audit.NewRedactor([]byte("test-key")).Redact(rec, audit.Raw{Arguments: map[string]any{"to": "x", "body": "y"}})
	return rec
}

// approvalID is a UUIDv7-shaped approval id numbered i.
func approvalID(i int) string {
	return fmt.Sprintf("0190a5b4-7c3e-7a1b-8f00-%012d", i%1_000_000_000_000)
}

// Records is n records for a benchmark, decided now, with ids no other run
// shares.
func Records(n int) []*audit.Record {
	recs := make([]*audit.Record, n)
	now := time.Now()
	for i := range recs {
		recs[i] = Record(i, now)
		recs[i].DecisionID = fmt.Sprintf("bench-%d-%d", now.UnixNano(), i)
	}
	return recs
}
