package catalog

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/gatedhq/gated/internal/opfile"
)

// Problem is one thing wrong with a catalog file.
type Problem = opfile.Problem

// LoadError is every problem a load found; a catalog with any problem is
// not used at all.
type LoadError struct {
	Problems []Problem
}

// ProblemList lists the problems (opfile.Lister).
func (e *LoadError) ProblemList() []Problem { return e.Problems }

func (e *LoadError) Error() string { return opfile.List(e.Problems) }

// problems accumulates Problems during a load.
type problems []Problem

func (ps *problems) add(file, field, code, format string, args ...any) {
	*ps = append(*ps, Problem{File: file, Field: field, Code: code, Message: fmt.Sprintf(format, args...)})
}

// err returns a *LoadError with the problems sorted by file, then field,
// then code, or nil when there are none.
func (ps problems) err() error {
	if len(ps) == 0 {
		return nil
	}
	sorted := slices.Clone([]Problem(ps))
	slices.SortStableFunc(sorted, func(a, b Problem) int {
		return cmp.Or(cmp.Compare(a.File, b.File), cmp.Compare(a.Field, b.Field), cmp.Compare(a.Code, b.Code))
	})
	return &LoadError{Problems: sorted}
}
