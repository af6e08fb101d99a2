package mcpproxy

import (
	"encoding/json"
	"slices"
	"sync"
	"time"

	"github.com/gatedhq/gated/internal/approval"
	"github.com/gatedhq/gated/internal/gate"
	"github.com/gatedhq/gated/internal/route"
)

// maxPending bounds the approvals the proxy remembers: past it, the one
// that expires first is forgotten (its call then asks again).
const maxPending = 1024

// pending remembers the approvals the proxy named to the client, by the
// call they were opened for, until they expire: the client cannot carry
// an approval's evidence ref, so the proxy adds it when the same call
// comes again. Keys are digests, so no argument value is kept.
type pending struct {
	mu     sync.Mutex
	byCall map[string]*gate.PendingApproval
}

// callKey names a call by its tool and its arguments as an approval's
// digest binds them (approval.Digest): key order and number spelling do
// not make another call, and numbers count by their exact value. ok is
// false for arguments that cannot be digested (gate cannot bind an
// approval to them either).
func callKey(tool string, args map[string]any) (key string, ok bool) {
	raw, err := json.Marshal(args)
	if err != nil {
		return "", false
	}
	key, err = approval.Digest(approval.Subject{ToolName: tool, ProposedArguments: raw})
	return key, err == nil
}

// get returns the approval remembered for the call, unless it has expired.
func (p *pending) get(key string, now time.Time) *gate.PendingApproval {
	p.mu.Lock()
	defer p.mu.Unlock()
	a := p.byCall[key]
	if a != nil && !now.Before(a.ExpiresAt) {
		delete(p.byCall, key)
		return nil
	}
	return a
}

// put remembers a for the call, dropping expired approvals and, when full,
// the one that expires first.
func (p *pending) put(key string, a *gate.PendingApproval, now time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.byCall == nil {
		p.byCall = map[string]*gate.PendingApproval{}
	}
	for k, v := range p.byCall {
		if !now.Before(v.ExpiresAt) {
			delete(p.byCall, k)
		}
	}
	if _, ok := p.byCall[key]; !ok && len(p.byCall) >= maxPending {
		first := ""
		for k, v := range p.byCall {
			if first == "" || v.ExpiresAt.Before(p.byCall[first].ExpiresAt) {
				first = k
			}
		}
		delete(p.byCall, first)
	}
	p.byCall[key] = a
}

// forget drops the call's approval if it is still id.
func (p *pending) forget(key, id string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if a := p.byCall[key]; a != nil && a.ID == id {
		delete(p.byCall, key)
	}
}

// spentOrGone are the refusals after which a remembered approval can
// never allow its call: the next call asks afresh. A pending approval, a
// store that could not be read, or another blocker leave it remembered.
var spentOrGone = []string{
	route.CodeApprovalUsed, route.CodeApprovalDenied, route.CodeApprovalExpired, route.CodeApprovalUnknown,
	route.CodeApprovalDigestMismatch, route.CodeApprovalRequesterMismatch,
}

func settlesApproval(d *gate.Decision) bool {
	return slices.ContainsFunc(d.HardBlockers, func(b string) bool { return slices.Contains(spentOrGone, b) })
}
