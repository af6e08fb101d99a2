package console

import (
	"net/http"

	"go.uber.org/zap"

	"github.com/gatedhq/gated/internal/kill"
)

// killView is the kill switch page: every kill kept, newest first, and
// which of them are in force now.
type killView struct {
	Configured bool
	Kills      []killRow
	Error      string
}

type killRow struct {
	kill.Kill
	InForce bool
}

// killPage lists the kill switches, read-only: setting and lifting them is
// the API's (POST and DELETE /v1/kill), with the same scope.
func (c *Console) killPage(w http.ResponseWriter, r *http.Request, u *user) {
	v := killView{Configured: c.opt.Kills != nil}
	if v.Configured {
		ks, err := c.opt.Kills.List(r.Context(), true)
		if err != nil {
			c.opt.Logger.Warn("console: the kill switch store failed", zap.Error(err))
			v.Error = "The kill switches cannot be read now: the database is unavailable."
		}
		now := c.opt.Now()
		for _, k := range ks {
			v.Kills = append(v.Kills, killRow{Kill: k, InForce: k.Active(now)})
		}
	}
	c.render(w, r, http.StatusOK, "kill", &view{Title: "Kill switch", Active: "kill", User: u, Data: v})
}
