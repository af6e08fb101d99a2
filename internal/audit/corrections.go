package audit

import (
	"slices"
	"time"

	"go.uber.org/zap"

	"github.com/gatedhq/gated/internal/audit/chain"
	"github.com/gatedhq/gated/internal/route"
)

// refusal is rec as a refused caller saw it: route refuse, no execution,
// blocker audit_unavailable.
func refusal(rec *Record) *Record {
	c := *rec
	c.FinalRoute, c.GateDecision, c.Execute = route.Refuse.String(), "fail", false
	add := func(list []string, s string) []string {
		if slices.Contains(list, s) {
			return list
		}
		return append(slices.Clip(list), s)
	}
	c.HardBlockers = add(rec.HardBlockers, route.CodeAuditUnavailable)
	c.FindingCodes = add(rec.FindingCodes, route.CodeAuditUnavailable)
	c.Reasons = add(rec.Reasons, "the record could not be confirmed stored, so the call was refused")
	return &c
}

// correct makes the store say refuse for records whose callers were
// refused: through the spool (durable at once) or the sink, else held in
// memory and retried until one takes them.
//
// A correction is a link of its own, later in the writer's chain, naming
// the link it supersedes (Supersedes); the superseded record goes with it,
// so its link stays checkable where the store keeps one row per decision.
func (r *recorder) correct(recs []*Record) {
	fixes := make([]Fix, len(recs))
	corrected := make([]*Record, len(recs))
	for i, rec := range recs {
		c := refusal(rec)
		c.Supersedes = rec.ChainSeq
		fixes[i], corrected[i] = Fix{Record: c, Superseded: rec}, c
		r.cfg.Logger.Warn("audit record corrected to the refusal its caller got",
			zap.String("decision_id", rec.DecisionID))
	}
	// Held and retried until stored, never undone: the links stay.
	_, cps := r.links.assign(corrected, time.Now(), false)
	r.storeFixes(fixes, cps)
}

func (r *recorder) storeFixes(fixes []Fix, cps []chain.Checkpoint) {
	b := Batch{Fixes: fixes, Checkpoints: cps}
	if r.spool != nil {
		if err := r.spoolAppend(b, 0); err == nil {
			return
		}
	}
	if r.spool == nil || r.primaryOK.Load() {
		if err := r.writePrimary(r.ctx, b); err == nil {
			return
		}
	}
	r.fixMu.Lock()
	r.fixes = append(r.fixes, fixes...)
	r.checkpoints = append(r.checkpoints, cps...)
	r.fixMu.Unlock()
	for _, f := range fixes {
		r.cfg.Logger.Error("audit correction pending: the stored record may say the call was allowed although its caller was refused",
			zap.String("decision_id", f.Record.DecisionID))
	}
}

// retryFixes hands held corrections over again.
func (r *recorder) retryFixes() {
	r.fixMu.Lock()
	b := Batch{Fixes: r.fixes, Checkpoints: r.checkpoints}
	r.fixes, r.checkpoints = nil, nil
	r.fixMu.Unlock()
	if b.empty() {
		return
	}
	if r.spool != nil && r.spool.Healthy() && r.spoolAppend(b, 0) == nil {
		return
	}
	if r.spool == nil || r.primaryOK.Load() {
		ctx := r.bg
		if ctx.Err() != nil {
			ctx = r.ctx // Close retries once more after the background loops stopped
		}
		if r.writePrimary(ctx, b) == nil {
			return
		}
	}
	r.fixMu.Lock()
	r.fixes = append(b.Fixes, r.fixes...)
	r.checkpoints = append(b.Checkpoints, r.checkpoints...)
	r.fixMu.Unlock()
}
