package catalog

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

func mustLoad(t testing.TB, dirs ...string) *Catalog {
	t.Helper()
	c, err := Load(dirs)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	return c
}

// loadProblems loads a catalog that must be invalid and returns its problems.
func loadProblems(t *testing.T, dirs ...string) []Problem {
	t.Helper()
	c, err := Load(dirs)
	if err == nil {
		t.Fatalf("Load succeeded (%d tools), want problems", c.Len())
	}
	if c != nil {
		t.Fatal("Load returned a catalog together with an error")
	}
	var le *LoadError
	if !errors.As(err, &le) {
		t.Fatalf("Load error %T %v, want *LoadError", err, err)
	}
	return le.Problems
}

// action renders an ACTION.md with the given extra frontmatter lines.
func action(id string, extra ...string) string {
	return fmt.Sprintf("---\nschema: action/v1\nid: %q\ndescription: test action %s\n%s\n---\n\nbody\n", id, id, strings.Join(extra, "\n"))
}

// tool renders a TOOL.md with the given extra frontmatter lines.
func tool(id string, extra ...string) string {
	return fmt.Sprintf("---\nname: %s\nid: %s\ndescription: test tool\nversion: 1.0.0\ninputs: {type: object}\noutputs: {type: object}\n%s\n---\n", id, id, strings.Join(extra, "\n"))
}
