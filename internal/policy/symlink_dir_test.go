package policy

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gatedhq/gated/internal/testwait"

	"github.com/gatedhq/gated/internal/reload"
	"github.com/gatedhq/gated/internal/reload/reloadtest"
)

// TestSymlinkedPolicyDirectoryIsRead: a --policy directory that is itself a
// symlink (a ConfigMap's "..data", git-sync's link) is read where it points.
// Before the fix WalkDir reported the link as a file, nothing was read, and
// the policy loaded empty and unenforced, without an error.
func TestSymlinkedPolicyDirectoryIsRead(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	writePolicy(t, filepath.Join(base, "real", "POLICY.md"), "@a/b")
	link := filepath.Join(base, "link")
	if err := os.Symlink("real", link); err != nil {
		t.Fatal(err)
	}
	s, err := Load([]string{link}, nil)
	if err != nil {
		t.Fatal(err)
	}
	sum := s.Summary(nil, time.Time{})
	if !s.Enforced() || len(sum.Policies) != 1 || sum.Policies[0].ID != "@a/b" {
		t.Fatalf("through a symlink: enforced %v, policies %+v; want @a/b enforced", s.Enforced(), sum.Policies)
	}
	if want := filepath.Join(link, "POLICY.md"); sum.Policies[0].File != want {
		t.Fatalf("file %q, want the path given, %q", sum.Policies[0].File, want)
	}

	if err := os.Remove(filepath.Join(base, "real", "POLICY.md")); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(base, "real")); err != nil {
		t.Fatal(err)
	}
	if _, err := Load([]string{link}, nil); err == nil {
		t.Fatal("a dangling policy link loaded without an error")
	}
}

// TestPolicyFollowsConfigMapSwaps points the reloader at a ConfigMap's
// "..data" link and replays three kubelet updates: each renames a new link
// over "..data" and deletes the old data directory. Each must reload.
func TestPolicyFollowsConfigMapSwaps(t *testing.T) {
	t.Parallel()
	mount := t.TempDir()
	version := func(v int) string { return fmt.Sprintf("..2026_01_0%d_00_00_00.%d", v, v) }
	publish := func(v int) {
		writePolicy(t, filepath.Join(mount, version(v), "POLICY.md"), fmt.Sprintf("@a/v%d", v))
		tmp := filepath.Join(mount, "..data_tmp")
		if err := os.Symlink(version(v), tmp); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, filepath.Join(mount, "..data")); err != nil {
			t.Fatal(err)
		}
		if v > 1 {
			if err := os.RemoveAll(filepath.Join(mount, version(v-1))); err != nil {
				t.Fatal(err)
			}
		}
	}
	publish(1)
	dir := filepath.Join(mount, "..data")
	r := reloadtest.Start(t, reload.Config[Set]{
		Build:    func() (*Set, error) { return Load([]string{dir}, nil, WithEvalBudget(time.Minute)) },
		Dirs:     []string{dir},
		Debounce: 20 * time.Millisecond,
	})
	id := func() string {
		p := r.Current().Summary(nil, time.Time{}).Policies
		if len(p) != 1 {
			return fmt.Sprintf("%d policies", len(p))
		}
		return p[0].ID
	}
	if got := id(); got != "@a/v1" {
		t.Fatalf("initial policy %s, want @a/v1", got)
	}
	before, _ := r.LastError()
	r.Trigger()
	testwait.Until(t, "the triggered reload", func() bool { at, _ := r.LastError(); return at.After(before) })
	for v := 2; v <= 4; v++ {
		publish(v)
		want := fmt.Sprintf("@a/v%d", v)
		testwait.Until(t, want, func() bool { return id() == want })
	}
}

func writePolicy(t *testing.T, path, id string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	md := policyMD(fmt.Sprintf("schema: policy/v1\nid: %q\ngrants:\n  - {principal: x, actions: [{action: \"storage:read\"}]}\n", id))
	if err := os.WriteFile(path, []byte(md), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestLoadOneFile: --policy may name one POLICY.md (or a link to one), and
// the set reads just that file, named as given.
func TestLoadOneFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writePolicy(t, filepath.Join(dir, "a", "POLICY.md"), "@a/one")
	writePolicy(t, filepath.Join(dir, "a", "other.POLICY.md"), "@a/other")
	link := filepath.Join(dir, "link.POLICY.md")
	if err := os.Symlink(filepath.Join(dir, "a", "POLICY.md"), link); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{filepath.Join(dir, "a", "POLICY.md"), link} {
		s, err := Load([]string{path}, nil)
		if err != nil {
			t.Fatalf("Load(%s): %v", path, err)
		}
		p := s.Summary(nil, time.Time{}).Policies
		if len(p) != 1 || p[0].ID != "@a/one" || p[0].File != path {
			t.Fatalf("Load(%s) read %+v, want only @a/one named %s", path, p, path)
		}
	}
	notes := filepath.Join(dir, "notes.txt")
	if err := os.WriteFile(notes, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Load([]string{notes}, nil); err == nil || !strings.Contains(err.Error(), "read_failed") {
		t.Fatalf("Load(notes.txt) = %v, want read_failed", err)
	}
}
