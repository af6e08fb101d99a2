package server

import (
	"net/http"

	"github.com/gatedhq/gated/internal/actionapi"
	"github.com/gatedhq/gated/internal/catalog"
	"github.com/gatedhq/gated/internal/eventcodec"
	"github.com/gatedhq/gated/internal/route"
)

// handleActionCheck decides one Action API v4 LTS plan envelope through the
// same decision path as /pre-tool-check (record, metrics, approvals), with
// the plan's frozen rules added after the catalog join.
func handleActionCheck(d *Deps) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		plan, berr := decodePlan(w, r, d)
		if berr != nil {
			writeError(w, berr.status, berr.msg)
			return
		}
		check := actionapi.NewCheck(plan)
		c := callerOf(d, r)
		pick := d.Engine.Category(plan.ActionType)
		c.req.Checks, c.req.Binds, c.req.Pick = check.Findings, plan.Binds(), &pick
		c.req.FreshChecks = func() func(*catalog.View, *route.Event) []route.Finding { return actionapi.NewCheck(plan).Findings }
		// The executor gated vouches for is the token it checked; without
		// tokens nobody is authenticated, so nobody is vouched for.
		dec := c.decide(r.Context(), d.Engine, plan.Event(pick.Category, c.req.TokenName))
		writeJSON(w, http.StatusOK, actionapi.NewAnswer(check, dec))
	}
}

// decodePlan reads and decodes a plan envelope: size, UTF-8, nesting and
// object shape as for an event, then the plan's own strict decoding.
func decodePlan(w http.ResponseWriter, r *http.Request, d *Deps) (*actionapi.Plan, *bodyError) {
	span := startDecode(r)
	defer span.End()
	body, berr := readJSON(w, r, d.MaxBodyBytes)
	if berr == nil {
		if _, err := eventcodec.Decode(body, d.MaxDepth); err != nil {
			berr = &bodyError{http.StatusBadRequest, err.Error()}
		} else if plan, err := actionapi.Decode(body); err != nil {
			berr = &bodyError{http.StatusBadRequest, err.Error()}
		} else {
			return plan, nil
		}
	}
	decodeFailed(span, berr.status)
	return nil, berr
}
