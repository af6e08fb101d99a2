package metrics

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/gatedhq/gated/internal/route"
)

// candidate are the instruments of the candidate policy (gated serve
// --candidate): its labels are routes, a closed set.
type candidate struct {
	candidateDecisions   *prometheus.CounterVec
	candidateSkipped     prometheus.Counter
	candidateWriteErrors prometheus.Counter
}

var routes = []route.Route{route.Accept, route.Ask, route.Defer, route.Refuse}

func newCandidate(reg *prometheus.Registry) candidate {
	c := candidate{
		candidateDecisions: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "gated_candidate_decisions_total",
			Help: "Decisions the candidate policy decided again, by the live route and the candidate's: agreement where the two are equal.",
		}, []string{"live", "candidate"}),
		candidateSkipped: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "gated_candidate_skipped_total",
			Help: "Decisions the candidate did not decide because its queue was full.",
		}),
		candidateWriteErrors: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "gated_candidate_write_errors_total",
			Help: "Candidate rows that could not be written to the audit store or file (the candidate writes best effort).",
		}),
	}
	reg.MustRegister(c.candidateDecisions, c.candidateSkipped, c.candidateWriteErrors)
	return c
}

// CandidateOn pre-creates the sixteen route pairs, so that a disagreement
// reads 0, not absent, from the start. Only a gated with a candidate
// calls it: without one the family stays empty.
func (m *Metrics) CandidateOn() {
	for _, l := range routes {
		for _, c := range routes {
			m.candidateDecisions.WithLabelValues(l.String(), c.String())
		}
	}
}

// CandidateDecided counts one decision the candidate decided again.
func (m *Metrics) CandidateDecided(live, cand route.Route) {
	m.candidateDecisions.WithLabelValues(live.String(), cand.String()).Inc()
}

// CandidateSkipped counts one decision the candidate's full queue skipped.
func (m *Metrics) CandidateSkipped() { m.candidateSkipped.Inc() }

// CandidateWriteErrors counts n candidate rows that could not be written.
func (m *Metrics) CandidateWriteErrors(n int) { m.candidateWriteErrors.Add(float64(n)) }
