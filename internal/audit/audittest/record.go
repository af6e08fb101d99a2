package audittest

import (
	"fmt"
	"time"

	"github.com/gatedhq/gated/internal/audit"
)

// Record is a plausible redacted record with id dec-NNNNNN (i), decided at
// at; its tool and route vary with i (route accept when i%3 is 1).
func Record(i int, at time.Time) *audit.Record {
	rd := audit.NewRedactor([]byte("test-key"))
	return rd.Build(audit.Input{
		DecisionID: fmt.Sprintf("dec-%06d", i), Time: at,
		RequestID: fmt.Sprintf("req-%d", i), AgentID: "agent-1", ToolName: []string{"send_email", "get_weather"}[i%2],
		ActionID: "email:send", ActionVersion: "1.0.0",
		DeclaredCategory: "write", EffectiveCategory: "write", DeclaredAuth: "user_claimed", EffectiveAuth: "user_claimed",
		RiskDomain: "customer_support", RuntimeRoute: "accept", FinalRoute: []string{"ask", "accept", "refuse"}[i%3],
		GateDecision: "fail", HardBlockers: []string{"write_missing_explicit_confirmation"},
		Reasons: []string{"write needs confirmation"}, FindingCodes: []string{"contract.write_missing_explicit_confirmation"},
		Arguments: map[string]any{"to": "x", "body": "y"}, CatalogRevision: "cat-1", PolicyRevision: "pol-1",
		TokenName: "ci", Version: "test", Latency: 1500 * time.Microsecond,
	})
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
