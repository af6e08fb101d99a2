package metrics

import "github.com/prometheus/client_golang/prometheus"

// Kill switch changes, the closed set of gated_kill_switch_changes_total{change}.
const (
	KillSet    = "set"
	KillLifted = "lifted"
)

var killChanges = []string{KillSet, KillLifted}

// kills are the kill switch instruments; no kill's id, scope value or
// reason is ever a label.
type kills struct {
	killsActive prometheus.Gauge
	killChanges *prometheus.CounterVec
}

func newKills(reg *prometheus.Registry) kills {
	k := kills{
		killsActive: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "gated_kill_switches_active",
			Help: "Kill switches in force, as this replica last read them (every replica reports the shared list: aggregate with max, not sum).",
		}),
		killChanges: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "gated_kill_switch_changes_total",
			Help: "Kill switches set or lifted through this replica.",
		}, []string{"change"}),
	}
	reg.MustRegister(k.killsActive, k.killChanges)
	for _, c := range killChanges {
		k.killChanges.WithLabelValues(c)
	}
	return k
}

// KillsActive sets how many kill switches are in force.
func (m *Metrics) KillsActive(n int) { m.killsActive.Set(float64(n)) }

// KillChanged counts one kill switch set or lifted.
func (m *Metrics) KillChanged(change string) {
	m.killChanges.WithLabelValues(oneOf(change, killChanges)).Inc()
}
