package approval

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"

	"github.com/gowebpki/jcs"
)

// Subject is the call an approval is bound to. Its digest is stored with
// the approval and recomputed for the retried call: any difference in tool,
// arguments, requester or agent gives another digest, so an approval cannot
// be spent on a call the approver did not see.
type Subject struct {
	ToolName          string          `json:"tool_name"`
	ToolCategory      string          `json:"tool_category"`
	RiskDomain        string          `json:"risk_domain"`
	ProposedArguments json.RawMessage `json:"proposed_arguments"`
	Requester         Identity        `json:"requester"`
	AgentID           string          `json:"agent_id"`
}

// Digest returns "sha256:" and the hex SHA-256 of the subject's RFC 8785
// (JSON Canonicalization Scheme) form. JCS makes the digest independent of
// key order, whitespace and number spelling (1.0 and 1 are one number), so
// two encodings of the same call agree. Principals are a set, so they are
// sorted and de-duplicated first: their order must not change the digest.
// Absent arguments count as null. Arguments that are not valid JSON, or
// that hold a number JCS cannot represent, are an error.
func Digest(s Subject) (string, error) {
	s.Requester.Principals = principalSet(s.Requester.Principals)
	if len(s.ProposedArguments) == 0 {
		s.ProposedArguments = json.RawMessage("null")
	}
	raw, err := json.Marshal(s)
	if err != nil {
		return "", fmt.Errorf("the proposed arguments are not valid JSON: %w", err)
	}
	canonical, err := jcs.Transform(raw)
	if err != nil {
		return "", fmt.Errorf("the proposed arguments cannot be canonicalised (RFC 8785): %w", err)
	}
	sum := sha256.Sum256(canonical)
	return "sha256:" + hex.EncodeToString(sum[:]), nil
}
