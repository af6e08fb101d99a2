package console

import (
	"net/http"

	"github.com/gatedhq/gated/internal/auth"
	"github.com/gatedhq/gated/internal/catalog"
	"github.com/gatedhq/gated/internal/policy"
)

// catalogView is the catalog and policy page: each part shown only when
// the token may read it, and only when gated has one loaded.
type catalogView struct {
	ShowCatalog, ShowPolicy bool
	Catalog                 *catalog.Document
	Policy                  *policy.Summary
}

// catalogPage shows the loaded revisions, their files and what lint warns
// about, with the last failed reload beside the revision still in use.
// It is the same documents GET /v1/catalog and /v1/policy serve.
func (c *Console) catalogPage(w http.ResponseWriter, r *http.Request, u *user) {
	v := catalogView{ShowCatalog: u.token.Has(auth.ScopeCatalogRead), ShowPolicy: u.token.Has(auth.ScopePolicyRead)}
	if v.ShowCatalog && c.opt.Catalog != nil {
		d := c.opt.Catalog()
		v.Catalog = &d
	}
	if v.ShowPolicy && c.opt.Policy != nil {
		s := c.opt.Policy()
		v.Policy = &s
	}
	c.render(w, r, http.StatusOK, "catalog", &view{Title: "Catalog and policy", Active: "catalog", User: u, Data: v})
}
