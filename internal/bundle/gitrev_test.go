package bundle_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gatedhq/gated/internal/bundle"
	"github.com/gatedhq/gated/internal/bundle/bundletest"
)

// TestGitRevisionWritesPathsAsTheCommitHolds reads two commits of a real
// repository without a checkout: each path written where the repository
// has it, as that commit has it.
func TestGitRevisionWritesPathsAsTheCommitHolds(t *testing.T) {
	t.Parallel()
	repo := bundletest.NewServer(t).Repo("team/policy")
	first := repo.Commit(map[string]string{"policy/POLICY.md": "one", "policy/sub/x.rego": "x", "catalog/TOOL.md": "tool", "other/big": "not asked for"})
	repo.Commit(map[string]string{"policy/POLICY.md": "two"})

	read := func(rev string) string {
		t.Helper()
		r, err := bundle.OpenGitRevision(filepath.Join(repo.Dir(), "policy"), rev, bundle.Limits{})
		if err != nil {
			t.Fatal(err)
		}
		dst := t.TempDir()
		for _, p := range []string{"policy", "catalog/TOOL.md"} {
			if err := r.WriteTo(dst, p); err != nil {
				t.Fatal(err)
			}
		}
		for _, p := range []string{"policy/sub/x.rego", "catalog/TOOL.md"} {
			if _, err := os.Stat(filepath.Join(dst, p)); err != nil {
				t.Error(err)
			}
		}
		if _, err := os.Stat(filepath.Join(dst, "other")); !os.IsNotExist(err) {
			t.Errorf("a path not asked for was written: %v", err)
		}
		data, err := os.ReadFile(filepath.Join(dst, "policy", "POLICY.md"))
		if err != nil {
			t.Fatal(err)
		}
		return string(data)
	}
	if got := read(first); got != "one" {
		t.Errorf("at %s: %q", first, got)
	}
	if got := read("HEAD"); got != "two" {
		t.Errorf("at HEAD: %q", got)
	}
	if got := read("main~1"); got != "one" {
		t.Errorf("at main~1: %q", got)
	}
}

func TestGitRevisionRefusals(t *testing.T) {
	t.Parallel()
	repo := bundletest.NewServer(t).Repo("team/policy")
	repo.Commit(map[string]string{"policy/POLICY.md": strings.Repeat("x", 100), "policy/b.md": "b"})

	if _, err := bundle.OpenGitRevision(repo.Dir(), "no-such-branch", bundle.Limits{}); err == nil || !strings.Contains(err.Error(), `the git revision "no-such-branch" does not resolve`) {
		t.Errorf("an unknown revision: %v", err)
	}
	if _, err := bundle.OpenGitRevision(t.TempDir(), "HEAD", bundle.Limits{}); err == nil || !strings.Contains(err.Error(), "no git repository") {
		t.Errorf("outside a repository: %v", err)
	}
	r, err := bundle.OpenGitRevision(repo.Dir(), "HEAD", bundle.Limits{Files: 10, Bytes: 50})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.WriteTo(t.TempDir(), "missing"); !errors.Is(err, bundle.ErrNotInRevision) {
		t.Errorf("a missing path: %v", err)
	}
	if err := r.WriteTo(t.TempDir(), "../escape"); err == nil || !strings.Contains(err.Error(), "must be relative") {
		t.Errorf("a path leaving the repository: %v", err)
	}
	if err := r.WriteTo(t.TempDir(), "policy"); err == nil || !strings.Contains(err.Error(), "more than 50 bytes") {
		t.Errorf("over the byte cap: %v", err)
	}
}
