package catalog

import (
	"errors"
	"fmt"
	"io"
)

// Lint loads dirs and writes either every problem, one per line
// ("file: field: code: message"), or a one-line summary. It reports whether
// the catalog is valid (`gated catalog lint` exits 1 when it is not).
func Lint(dirs []string, w io.Writer) bool {
	c, err := Load(dirs)
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
