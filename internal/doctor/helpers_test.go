package doctor

import (
	"context"
	"os"
	"path/filepath"
	goruntime "runtime"
	"strings"
	"testing"
	"time"

	"github.com/gatedhq/gated/internal/testgated"
)

// exampleCatalog is the catalog every runtime's example serves.
var exampleCatalog = func() string {
	_, file, _, _ := goruntime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "examples", "claude-code", "catalog")
}()

// machine is a user's machine in a temporary folder: a home, a project
// folder and the environment a runtime would run hooks with.
type machine struct {
	home, project string
	env           []string
}

func newMachine(t *testing.T, env ...string) *machine {
	t.Helper()
	root := t.TempDir()
	m := &machine{home: filepath.Join(root, "home"), project: filepath.Join(root, "project")}
	for _, d := range []string{m.home, m.project} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// Hooks name gated by its absolute path (gatedBin) unless a test
	// means otherwise; SHELL is the shell Codex runs them with.
	m.env = append([]string{"HOME=" + m.home, "PATH=" + os.Getenv("PATH"), "SHELL=/bin/sh"}, env...)
	return m
}

// doctor runs doctor for rt on m, with no managed configuration.
func (m *machine) doctor(t *testing.T, rt string, canary bool) *Report {
	t.Helper()
	r, err := Run(context.Background(), rt, Options{Environ: m.env, Dir: m.project, Managed: []string{},
		NoCanary: !canary, AuditWait: 20 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// check returns the named check of the report's only hook, or of the
// report itself when it has no hook.
func check(t *testing.T, r *Report, name string) Check {
	t.Helper()
	checks := r.Checks
	if len(r.Hooks) == 1 {
		checks = append(checks, r.Hooks[0].Checks...)
	} else if len(r.Hooks) > 1 {
		t.Fatalf("the report has %d hooks; want one:\n%s", len(r.Hooks), text(r))
	}
	for _, c := range checks {
		if c.Name == name {
			return c
		}
	}
	t.Fatalf("no %q check in the report:\n%s", name, text(r))
	return Check{}
}

// want fails unless the named check has status and its detail holds every
// one of in.
func want(t *testing.T, r *Report, name string, status Status, in ...string) {
	t.Helper()
	c := check(t, r, name)
	if c.Status != status {
		t.Fatalf("%s is %s; want %s:\n%s", name, c.Status, status, text(r))
	}
	for _, s := range in {
		if !strings.Contains(c.Detail, s) {
			t.Fatalf("%s says %q; want it to say %q", name, c.Detail, s)
		}
	}
}

func text(r *Report) string {
	var b strings.Builder
	_ = r.WriteText(&b)
	return b.String()
}

// gatedBin is the gated binary the tests' hooks run.
func gatedBin(t *testing.T) string { return testgated.Binary(t) }
