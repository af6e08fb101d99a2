package policy

import (
	"errors"
	"fmt"
	"io"
)

// Lint loads dirs and prints every error and warning; res resolves registry
// refs through the loaded catalog (nil: without a catalog such refs cannot
// resolve). ok is false when there is an error.
func Lint(dirs []string, res Resolver, w io.Writer) (ok bool) {
	s, err := Load(dirs, res)
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
	fmt.Fprintf(w, "%d error(s), %d warning(s)\n", len(errs), len(warns))
	return len(errs) == 0
}

// Compile prints the Rego generated from the grants in dirs, resolving
// registry refs with res (nil: without a catalog).
func Compile(dirs []string, res Resolver, w io.Writer) error {
	s, err := Load(dirs, res)
	if err != nil {
		return err
	}
	if _, err := io.WriteString(w, s.GrantsRego()); err != nil {
		return fmt.Errorf("policy compile: %w", err)
	}
	return nil
}
