package policy

import (
	"errors"
	"fmt"
	"io"
)

// Lint prints every error and warning of loading a policy (s, or the error
// that load returned), and for a loaded policy which evaluator decides its
// grants. ok is false when there is an error.
func Lint(s *Set, err error, w io.Writer) (ok bool) {
	var errs, warns []Problem
	var le *LoadError
	switch {
	case errors.As(err, &le):
		errs, warns = le.Problems, le.Warnings
	case err != nil:
		errs = []Problem{{Code: "load_failed", Message: err.Error()}}
	default:
		warns = s.Warnings()
	}
	for _, p := range errs {
		fmt.Fprintf(w, "error: %s\n", p)
	}
	for _, p := range warns {
		fmt.Fprintf(w, "warning: %s\n", p)
	}
	if s != nil && err == nil {
		name, why := s.Evaluator()
		fmt.Fprintf(w, "evaluator: %s (%s)\n", name, why)
	}
	fmt.Fprintf(w, "%d error(s), %d warning(s)\n", len(errs), len(warns))
	return len(errs) == 0
}

// Compile prints the Rego generated from the grants of a loaded policy
// (s, or the error that load returned).
func Compile(s *Set, err error, w io.Writer) error {
	if err != nil {
		return err
	}
	if _, err := io.WriteString(w, s.GrantsRego()); err != nil {
		return fmt.Errorf("policy compile: %w", err)
	}
	return nil
}
