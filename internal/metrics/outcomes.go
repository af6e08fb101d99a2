package metrics

import (
	"slices"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/gatedhq/gated/internal/actionresult"
)

func newOutcomes(reg *prometheus.Registry) *prometheus.CounterVec {
	c := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "gated_outcomes_total",
		Help: "Outcomes of calls gated let run, stored through this replica, by the result envelope's status.",
	}, []string{"status"})
	reg.MustRegister(c)
	// A closed set, pre-created so that a rate reads 0 rather than absent.
	for _, s := range actionresult.Statuses {
		c.WithLabelValues(string(s))
	}
	return c
}

// OutcomeRecorded counts one stored outcome.
func (m *Metrics) OutcomeRecorded(s actionresult.Status) {
	label := Other
	if slices.Contains(actionresult.Statuses, s) {
		label = string(s)
	}
	m.outcomes.WithLabelValues(label).Inc()
}
