package metrics

import (
	"math"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Kill switch changes, the closed set of gated_kill_switch_changes_total{change}.
const (
	KillSet    = "set"
	KillLifted = "lifted"
)

var killChanges = []string{KillSet, KillLifted}

// kills are the kill switch instruments; no kill's id, scope value or
// reason is ever a label.
type kills struct {
	killsActive     prometheus.Gauge
	killChanges     *prometheus.CounterVec
	killStaleMinute prometheus.Counter
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
		killStaleMinute: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "gated_kill_list_stale_seconds_total",
			Help: "Time this process decided from a kill list it could not confirm for --kill-stale-after (read before an outage, or saved on disk), counted a minute at a time.",
		}),
	}
	reg.MustRegister(k.killsActive, k.killChanges, k.killStaleMinute)
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

// KillListStaleMinute counts one minute of deciding from an unconfirmed
// kill list.
func (m *Metrics) KillListStaleMinute() { m.killStaleMinute.Add(time.Minute.Seconds()) }

// ObserveKillListAge exports gated_kill_list_age_seconds, read from age at
// each scrape: +Inf while no list was ever read, so an alert on the age
// fires then too. Called once, by the process that runs the kill switch.
func (m *Metrics) ObserveKillListAge(age func() (time.Duration, bool)) {
	m.reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "gated_kill_list_age_seconds",
		Help: "Seconds since the kill list this process decides from was confirmed in PostgreSQL (+Inf: never).",
	}, func() float64 {
		a, ok := age()
		if !ok {
			return math.Inf(1)
		}
		return a.Seconds()
	}))
}
