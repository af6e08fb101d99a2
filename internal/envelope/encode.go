package envelope

import (
	"encoding/json"
	"math"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"weak"

	"github.com/gatedhq/gated/internal/catalog"
	"github.com/gatedhq/gated/internal/contract"
	"github.com/gatedhq/gated/internal/policy"
	"github.com/gatedhq/gated/internal/route"
)

// AppendJSON appends a's JSON text to b, byte for byte what encoding/json
// writes for it (FuzzAppendJSONAgrees), without reflection: every decision
// is answered with it, and the reflective encoding was most of the cost of
// answering. The parts seldom in an answer (a pending approval, validation
// and argument errors) are still marshalled; an action, the same for every
// call of a tool in one catalog revision, is marshalled once.
func (a *Answer) AppendJSON(b []byte) ([]byte, error) {
	var err error
	b = append(b, `{"decision_id":`...)
	b = appendString(b, a.DecisionID)
	b = append(b, `,"route":`...)
	b = appendRoute(b, a.Route)
	if a.Approval != nil {
		b = append(b, `,"approval":`...)
		if b, err = appendMarshal(b, a.Approval); err != nil {
			return nil, err
		}
	}
	b = append(b, `,"execute":`...)
	b = strconv.AppendBool(b, a.Execute)
	b = append(b, `,"shadow":`...)
	b = strconv.AppendBool(b, a.Shadow)
	if a.ShadowIgnored {
		b = append(b, `,"shadow_ignored":true`...)
	}
	b = append(b, `,"contract_version":`...)
	b = appendString(b, a.ContractVersion)
	if a.RequestID != "" {
		b = append(b, `,"request_id":`...)
		b = appendString(b, a.RequestID)
	}
	b = append(b, `,"findings":`...)
	b = appendFindings(b, a.Findings)
	b = append(b, `,"revisions":{"catalog":`...)
	b = appendString(b, a.Revisions.Catalog)
	b = append(b, `,"policy":`...)
	b = appendString(b, a.Revisions.Policy)
	if len(a.Revisions.Commits) > 0 {
		b = append(b, `,"commits":`...)
		b = appendStrings(b, a.Revisions.Commits)
	}
	b = append(b, '}')
	if a.Action != nil {
		b = append(b, `,"action":`...)
		if b, err = appendAction(b, a.Action); err != nil {
			return nil, err
		}
	}
	if a.Policy != nil {
		b = append(b, `,"policy":`...)
		b = appendPolicy(b, a.Policy)
	}
	if a.Audit != nil {
		b = append(b, `,"audit":{"sink":`...)
		b = appendString(b, a.Audit.Sink)
		b = append(b, `,"status":`...)
		b = appendString(b, a.Audit.Status)
		b = append(b, '}')
	}

	b = append(b, `,"tool_name":`...)
	b = appendString(b, a.ToolName)
	b = append(b, `,"tool_category":`...)
	b = appendString(b, a.ToolCategory)
	b = append(b, `,"authorization_state":`...)
	b = appendString(b, a.AuthorizationState)
	b = append(b, `,"risk_domain":`...)
	b = appendString(b, a.RiskDomain)
	b = append(b, `,"gate_decision":`...)
	b = appendString(b, a.GateDecision)
	b = append(b, `,"recommended_action":`...)
	b = appendRoute(b, a.RecommendedAction)
	b = append(b, `,"candidate_gate":`...)
	b = appendString(b, a.CandidateGate)
	b = append(b, `,"aana_route":`...)
	b = appendRoute(b, a.AANARoute)
	b = append(b, `,"runtime_recommended_route":`...)
	if a.RuntimeRecommendedRoute == nil {
		b = append(b, "null"...)
	} else {
		b = appendRoute(b, *a.RuntimeRecommendedRoute)
	}
	b = append(b, `,"aix":{"aix_version":`...)
	b = appendString(b, a.AIX.Version)
	b = append(b, `,"score":`...)
	b = appendFloat(b, a.AIX.Score)
	b = append(b, `,"components":{"P":`...)
	b = appendFloat(b, a.AIX.Components.P)
	b = append(b, `,"F":`...)
	b = appendFloat(b, a.AIX.Components.F)
	b = append(b, `,"C":`...)
	b = appendFloat(b, a.AIX.Components.C)
	b = append(b, `},"decision":`...)
	b = appendRoute(b, a.AIX.Decision)
	b = append(b, `,"hard_blockers":`...)
	b = appendStrings(b, a.AIX.HardBlockers)
	b = append(b, `},"hard_blockers":`...)
	b = appendStrings(b, a.HardBlockers)
	b = append(b, `,"reasons":`...)
	b = appendStrings(b, a.Reasons)
	b = append(b, `,"evidence_ref_count":`...)
	b = strconv.AppendInt(b, int64(a.EvidenceRefCount), 10)
	b = append(b, `,"evidence_integrity":`...)
	b = appendIntegrity(b, a.EvidenceIntegrity)
	b = append(b, `,"authorization_report":`...)
	b = appendAuthReport(b, a.AuthorizationReport)
	b = append(b, `,"architecture_decision":`...)
	b = appendArchitecture(b, &a.ArchitectureDecision)
	b = append(b, `,"execution_policy":`...)
	b = appendExecutionPolicy(b, &a.ExecutionPolicy)
	if len(a.ValidationErrors) > 0 {
		b = append(b, `,"validation_errors":`...)
		if b, err = appendMarshal(b, a.ValidationErrors); err != nil {
			return nil, err
		}
	}
	if len(a.ArgumentErrors) > 0 {
		b = append(b, `,"argument_errors":`...)
		if b, err = appendMarshal(b, a.ArgumentErrors); err != nil {
			return nil, err
		}
	}
	return append(b, '}'), nil
}

func appendArchitecture(b []byte, d *ArchitectureDecision) []byte {
	b = append(b, `{"architecture_claim":`...)
	b = appendString(b, d.ArchitectureClaim)
	b = append(b, `,"route":`...)
	b = appendRoute(b, d.Route)
	b = append(b, `,"gate_decision":`...)
	b = appendString(b, d.GateDecision)
	b = append(b, `,"candidate_gate":`...)
	b = appendString(b, d.CandidateGate)
	b = append(b, `,"aix_score":`...)
	b = appendFloat(b, d.AIXScore)
	b = append(b, `,"aix_decision":`...)
	b = appendRoute(b, d.AIXDecision)
	b = append(b, `,"hard_blockers":`...)
	b = appendStrings(b, d.HardBlockers)
	b = append(b, `,"missing_evidence":`...)
	b = appendStrings(b, d.MissingEvidence)
	b = append(b, `,"evidence_refs":{"used":`...)
	b = appendStrings(b, d.EvidenceRefs.Used)
	b = append(b, `,"missing":`...)
	b = appendStrings(b, d.EvidenceRefs.Missing)
	b = append(b, `,"contradictory":`...)
	b = appendStrings(b, d.EvidenceRefs.Contradictory)
	b = append(b, `},"authorization_state":`...)
	b = appendString(b, d.AuthorizationState)
	b = append(b, `,"tool_name":`...)
	b = appendString(b, d.ToolName)
	b = append(b, `,"tool_category":`...)
	b = appendString(b, d.ToolCategory)
	b = append(b, `,"risk_domain":`...)
	b = appendString(b, d.RiskDomain)
	b = append(b, `,"recovery_suggestion":`...)
	b = appendString(b, d.RecoverySuggestion)
	return append(b, '}')
}

func appendExecutionPolicy(b []byte, p *ExecutionPolicy) []byte {
	b = append(b, `{"mode":`...)
	b = appendString(b, p.Mode)
	b = append(b, `,"aana_allows_execution":`...)
	b = strconv.AppendBool(b, p.AANAAllowsExecution)
	b = append(b, `,"execution_allowed":`...)
	b = strconv.AppendBool(b, p.ExecutionAllowed)
	b = append(b, `,"fail_closed":`...)
	b = strconv.AppendBool(b, p.FailClosed)
	b = append(b, `,"reason":`...)
	b = appendString(b, p.Reason)
	b = append(b, `,"required_route":`...)
	b = appendRoute(b, p.RequiredRoute)
	b = append(b, `,"route_table":`...)
	if p.RouteTable == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, p.RouteTable...) // compact: json.Marshal wrote it
	}
	b = append(b, `,"observed":{"gate_decision":`...)
	b = appendString(b, p.Observed.GateDecision)
	b = append(b, `,"recommended_action":`...)
	b = appendRoute(b, p.Observed.RecommendedAction)
	b = append(b, `,"architecture_route":`...)
	b = appendRoute(b, p.Observed.ArchitectureRoute)
	b = append(b, `,"hard_blocker_count":`...)
	b = strconv.AppendInt(b, int64(p.Observed.HardBlockerCount), 10)
	b = append(b, `,"validation_error_count":`...)
	b = strconv.AppendInt(b, int64(p.Observed.ValidationErrorCount), 10)
	return append(b, "}}"...)
}

func appendFindings(b []byte, fs []route.Finding) []byte {
	if fs == nil {
		return append(b, "null"...)
	}
	b = append(b, '[')
	for i := range fs {
		if i > 0 {
			b = append(b, ',')
		}
		f := &fs[i]
		b = append(b, `{"source":`...)
		b = appendString(b, string(f.Source))
		b = append(b, `,"code":`...)
		b = appendString(b, f.Code)
		b = append(b, `,"route":`...)
		b = appendRoute(b, f.Route)
		b = append(b, `,"blocking":`...)
		b = strconv.AppendBool(b, f.Blocking)
		b = append(b, `,"message":`...)
		b = appendString(b, f.Message)
		b = append(b, '}')
	}
	return append(b, ']')
}

func appendPolicy(b []byte, p *policy.Block) []byte {
	b = append(b, `{"decision":`...)
	b = appendString(b, p.Decision)
	b = append(b, `,"reason":`...)
	b = appendString(b, p.Reason)
	b = append(b, `,"principal":`...)
	b = appendString(b, p.Principal)
	b = append(b, `,"action":`...)
	b = appendString(b, p.Action)
	if p.Grant != nil {
		b = append(b, `,"grant":{"policy_id":`...)
		b = appendString(b, p.Grant.PolicyID)
		b = append(b, `,"index":`...)
		b = strconv.AppendInt(b, int64(p.Grant.Index), 10)
		b = append(b, '}')
	}
	b = append(b, `,"policy_chain":`...)
	if p.PolicyChain == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, '[')
		for i, c := range p.PolicyChain {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, `{"source":{"file":`...)
			b = appendString(b, c.Source.File)
			b = append(b, `},"id":`...)
			b = appendString(b, c.ID)
			b = append(b, `,"layer":`...)
			b = strconv.AppendInt(b, int64(c.Layer), 10)
			b = append(b, '}')
		}
		b = append(b, ']')
	}
	b = append(b, `,"evaluated_at":`...)
	b = appendString(b, p.EvaluatedAt)
	return append(b, '}')
}

func appendIntegrity(b []byte, in *contract.Integrity) []byte {
	if in == nil {
		return append(b, "null"...)
	}
	b = append(b, `{"evidence_safety_version":`...)
	b = appendString(b, in.EvidenceSafetyVersion)
	b = append(b, `,"checked_ref_count":`...)
	b = strconv.AppendInt(b, int64(in.CheckedRefCount), 10)
	b = append(b, `,"used_source_ids":`...)
	b = appendStrings(b, in.UsedSourceIDs)
	b = append(b, `,"missing_evidence_source_ids":`...)
	b = appendStrings(b, in.MissingEvidenceSourceIDs)
	b = append(b, `,"contradictory_evidence_source_ids":`...)
	b = appendStrings(b, in.ContradictoryEvidenceSourceIDs)
	b = append(b, `,"citation_source_ids":`...)
	b = appendStrings(b, in.CitationSourceIDs)
	b = append(b, `,"provenance_source_ids":`...)
	b = appendStrings(b, in.ProvenanceSourceIDs)
	b = append(b, `,"issues":`...)
	if in.Issues == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, '[')
		for i := range in.Issues {
			if i > 0 {
				b = append(b, ',')
			}
			is := &in.Issues[i]
			b = append(b, `{"level":`...)
			b = appendString(b, is.Level)
			b = append(b, `,"code":`...)
			b = appendString(b, is.Code)
			b = append(b, `,"path":`...)
			b = appendString(b, is.Path)
			b = append(b, `,"message":`...)
			b = appendString(b, is.Message)
			b = append(b, '}')
		}
		b = append(b, ']')
	}
	b = append(b, `,"error_codes":`...)
	b = appendStrings(b, in.ErrorCodes)
	b = append(b, `,"warning_codes":`...)
	b = appendStrings(b, in.WarningCodes)
	b = append(b, `,"has_errors":`...)
	b = strconv.AppendBool(b, in.HasErrors)
	b = append(b, `,"has_warnings":`...)
	b = strconv.AppendBool(b, in.HasWarnings)
	return append(b, '}')
}

func appendAuthReport(b []byte, r *contract.AuthReport) []byte {
	if r == nil {
		return append(b, "null"...)
	}
	b = append(b, `{"declared_state":`...)
	b = appendString(b, r.DeclaredState.String())
	b = append(b, `,"evidence_supported_state":`...)
	b = appendString(b, r.EvidenceSupportedState.String())
	b = append(b, `,"effective_state":`...)
	b = appendString(b, r.EffectiveState.String())
	b = append(b, `,"support":`...)
	if r.Support == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, '[')
		for i, s := range r.Support {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, `{"source_id":`...)
			b = appendString(b, s.SourceID)
			b = append(b, `,"state":`...)
			b = appendString(b, s.State.String())
			b = append(b, '}')
		}
		b = append(b, ']')
	}
	b = append(b, `,"downgraded":`...)
	b = strconv.AppendBool(b, r.Downgraded)
	return append(b, '}')
}

// actions holds each catalog view's JSON text, for as long as the view is
// in use: a view never changes once its catalog is published.
var actions sync.Map // weak.Pointer[catalog.View] → []byte

func appendAction(b []byte, v *catalog.View) ([]byte, error) {
	k := weak.Make(v)
	if enc, ok := actions.Load(k); ok {
		return append(b, enc.([]byte)...), nil
	}
	enc, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	if _, loaded := actions.LoadOrStore(k, enc); !loaded {
		runtime.AddCleanup(v, func(k weak.Pointer[catalog.View]) { actions.Delete(k) }, k)
	}
	return append(b, enc...), nil
}

func appendMarshal(b []byte, v any) ([]byte, error) {
	enc, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return append(b, enc...), nil
}

func appendRoute(b []byte, r route.Route) []byte {
	return appendString(b, r.String())
}

func appendStrings(b []byte, ss []string) []byte {
	if ss == nil {
		return append(b, "null"...)
	}
	b = append(b, '[')
	for i, s := range ss {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendString(b, s)
	}
	return append(b, ']')
}

// appendString writes s as encoding/json does. Text it would write
// unchanged is copied; anything it escapes (quotes, backslashes, control
// characters, <, > and &, U+2028 and U+2029, invalid UTF-8) is left to it.
func appendString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if !plainByte[s[i]] {
			enc, _ := json.Marshal(s) // a string always encodes
			return append(b, enc...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

// plainByte holds the bytes encoding/json copies unchanged: one table load
// per byte instead of seven comparisons, over every string of every answer.
var plainByte = func() (t [256]bool) {
	for c := 0x20; c < 0x7f; c++ {
		t[c] = c != '"' && c != '\\' && c != '<' && c != '>' && c != '&'
	}
	return t
}()

// scoreTexts are the AIX scores and components as text: every answer
// writes five of them, and formatting a float is most of writing one.
var scoreTexts = func() (ts []scoreText) {
	for _, f := range append(aixScore[:], 0.95, 0.75, 0.15) {
		if f != 0 && !slices.ContainsFunc(ts, func(t scoreText) bool { return t.f == f }) { // 0 would match -0
			ts = append(ts, scoreText{f, strconv.AppendFloat(nil, f, 'f', -1, 64)})
		}
	}
	return ts
}()

type scoreText struct {
	f    float64
	text []byte
}

// appendFloat writes f as encoding/json does: the shortest text that reads
// back as f, in exponent form only when very small or very large.
func appendFloat(b []byte, f float64) []byte {
	for _, t := range scoreTexts {
		if t.f == f {
			return append(b, t.text...)
		}
	}
	format := byte('f')
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, f, format, -1, 64)
	if format == 'e' {
		// encoding/json writes e-07 as e-7.
		if n := len(b); n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b
}
