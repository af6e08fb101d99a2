package catalog

import (
	"errors"
	"fmt"
	"io"
)

// Lint writes the outcome of loading a catalog (c, or the error that
// load returned): every problem, one per line ("file: field: code:
// message"), or a one-line summary. It reports whether the catalog is valid (`gated catalog lint` exits 1 when it is not).
func Lint(c *Catalog, err error, w io.Writer) bool {
	if err != nil {
		var le *LoadError
		if !errors.As(err, &le) {
			fmt.Fprintf(w, "catalog: %v\n", err)
			return false
		}
		for _, p := range le.Problems {
			fmt.Fprintln(w, p.String())
		}
		return false
	}
	fmt.Fprintf(w, "catalog ok: %d tools, %d actions, revision %s\n", c.Len(), len(c.actions), c.Revision())
	return true
}
