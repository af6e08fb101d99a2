package audit

import (
	"slices"

	"go.uber.org/zap"

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
func (r *recorder) correct(recs []*Record) {
	fixes := make([]*Record, len(recs))
	for i, rec := range recs {
		fixes[i] = refusal(rec)
		r.cfg.Logger.Warn("audit record corrected to the refusal its caller got",
			zap.String("decision_id", rec.DecisionID))
	}
	r.storeFixes(fixes)
}

func (r *recorder) storeFixes(fixes []*Record) {
	if r.spool != nil {
		if err := r.spoolAppend(nil, fixes, 0); err == nil {
			return
		}
	}
	if r.spool == nil || r.primaryOK.Load() {
		if err := r.writePrimary(r.ctx, nil, fixes); err == nil {
			return
		}
	}
	r.fixMu.Lock()
	r.fixes = append(r.fixes, fixes...)
	r.fixMu.Unlock()
	for _, f := range fixes {
		r.cfg.Logger.Error("audit correction pending: the stored record may say the call was allowed although its caller was refused",
			zap.String("decision_id", f.DecisionID))
	}
}

// retryFixes hands held corrections over again.
func (r *recorder) retryFixes() {
	r.fixMu.Lock()
	fixes := r.fixes
	r.fixes = nil
	r.fixMu.Unlock()
	if len(fixes) == 0 {
		return
	}
	if r.spool != nil && r.spool.Healthy() && r.spoolAppend(nil, fixes, 0) == nil {
		return
	}
	if r.spool == nil || r.primaryOK.Load() {
		ctx := r.bg
		if ctx.Err() != nil {
			ctx = r.ctx // Close retries once more after the background loops stopped
		}
		if r.writePrimary(ctx, nil, fixes) == nil {
			return
		}
	}
	r.fixMu.Lock()
	r.fixes = append(fixes, r.fixes...)
	r.fixMu.Unlock()
}
