package server

import (
	"net/http"
	"time"

	"github.com/gatedhq/gated/internal/audit"
	"github.com/gatedhq/gated/internal/candidate"
)

// candidateView is GET /v1/candidate: the candidate's revisions and this
// process's counts, and, with a database, the stored rows of the current
// candidate revision summed by live and candidate route (every replica's).
type candidateView struct {
	candidate.Status
	Stored *candidateStored `json:"stored,omitempty"`
}

type candidateStored struct {
	Since    *time.Time             `json:"since,omitempty"`
	Decided  int64                  `json:"decided"`
	Same     int64                  `json:"same"`
	Wider    int64                  `json:"wider"`
	Narrower int64                  `json:"narrower"`
	Pairs    []audit.CandidateCount `json:"pairs"`
}

// handleCandidate sums up the candidate policy: ?since= (RFC 3339) bounds
// the stored rows summed.
func handleCandidate(d *Deps) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if d.Candidate == nil {
			writeError(w, http.StatusNotFound, "no candidate is configured (start gated with --candidate DIR)")
			return
		}
		var since time.Time
		if v := r.URL.Query().Get("since"); v != "" {
			t, err := time.Parse(time.RFC3339Nano, v)
			if err != nil {
				writeError(w, http.StatusBadRequest, "since must be an RFC 3339 time")
				return
			}
			since = t
		}
		view := candidateView{Status: d.Candidate.Status()}
		if d.Candidates != nil {
			counts, err := d.Candidates.CandidateCounts(r.Context(), view.CatalogRevision, view.PolicyRevision, since)
			if err != nil {
				writeDecisionsError(w, err, err.Error())
				return
			}
			st := &candidateStored{Pairs: counts}
			if !since.IsZero() {
				st.Since = &since
			}
			for _, c := range counts {
				st.Decided += c.Count
				switch c.Direction {
				case audit.DirectionSame:
					st.Same += c.Count
				case audit.DirectionWider:
					st.Wider += c.Count
				case audit.DirectionNarrower:
					st.Narrower += c.Count
				}
			}
			view.Stored = st
		}
		writeJSON(w, http.StatusOK, view)
	}
}
