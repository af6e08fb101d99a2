package metrics

import (
	"time"

	"github.com/gatedhq/gated/internal/route"
)

// DecisionLabels describes one decision in label-safe terms. It holds no
// argument, principal or token, and the fields that could be free-form are
// clamped to closed sets before they become label values.
type DecisionLabels struct {
	Route        route.Route
	ToolCategory route.Category
	RiskDomain   string // the event's risk_domain; values outside the contract's enum count as "other"
	Execute      bool   // the contract's execution rule held (accept, no hard blockers)
	Shadow       bool   // gated ran in shadow mode: the decision was recorded, not enforced
	HardBlockers []string
	// Tool is the catalog id the tool_name resolved to, or "" when the tool is
	// not catalogued. Never pass the raw tool_name of an uncatalogued tool.
	Tool string
}

// riskDomains is the contract's closed risk_domain enum (Agent Action
// Contract v1); anything else is reported as Other.
var riskDomains = map[string]bool{
	"devops": true, "finance": true, "education": true, "hr": true, "legal": true,
	"pharma": true, "healthcare": true, "commerce": true, "customer_support": true,
	"security": true, "research": true, "personal_productivity": true,
	"public_information": true, "unknown": true,
}

// ObserveDecision records one decision and how long it took.
func (m *Metrics) ObserveDecision(d DecisionLabels, took time.Duration) {
	category := string(d.ToolCategory)
	if !d.ToolCategory.Valid() {
		category = Other
	}
	domain := d.RiskDomain
	if !riskDomains[domain] {
		domain = Other
	}
	tool := Other
	if d.Tool != "" {
		tool = bounded(d.Tool)
	}
	rt := d.Route.String()

	m.decisions.WithLabelValues(rt, category, domain, boolLabel(d.Execute), boolLabel(d.Shadow)).Inc()
	m.toolDecisions.WithLabelValues(tool, rt).Inc()
	m.decisionDuration.Observe(took.Seconds())
	for _, b := range d.HardBlockers {
		m.hardBlockers.WithLabelValues(bounded(b)).Inc()
	}
}
