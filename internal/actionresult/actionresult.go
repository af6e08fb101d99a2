// Package actionresult names what happened after a call gated let run: the
// terminal statuses of the Action API LTS result envelope
// (docs/audit.md#outcomes). It is the one definition of that set: the
// outcome API parses with it, the audit store and the metrics label with
// it. It imports nothing of gated's, so every layer can.
package actionresult

import (
	"fmt"
	"strings"
)

// Status is a result envelope's terminal status.
type Status string

// The Action API's stable terminal statuses.
const (
	Succeeded Status = "succeeded" // completed, and required verification passed
	Reverted  Status = "reverted"  // failed, but rollback restored the workspace
	Queued    Status = "queued"    // human approval is required
	Rejected  Status = "rejected"  // a policy, scope or safety gate rejected execution
	Failed    Status = "failed"    // failed, and could not be repaired or rolled back safely
)

// Statuses is every Status, in the specification's order.
var Statuses = []Status{Succeeded, Reverted, Queued, Rejected, Failed}

// ParseStatus returns the Status named s, or an error that lists them.
func ParseStatus(s string) (Status, error) {
	for _, st := range Statuses {
		if string(st) == s {
			return st, nil
		}
	}
	names := make([]string, len(Statuses))
	for i, st := range Statuses {
		names[i] = string(st)
	}
	return "", fmt.Errorf("status must be one of %s (the Action API's terminal statuses), not %q", strings.Join(names, ", "), s)
}
