package bundle_test

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gatedhq/gated/internal/bundle"
	"github.com/gatedhq/gated/internal/bundle/bundletest"
	"github.com/gatedhq/gated/internal/catalog"
	"github.com/gatedhq/gated/internal/testtree"
)

// AIP-26's own "shell + override" example: a tagged github baseline, an
// inline override of one of its files, and a local file added.
func TestAIP26OverlayExample(t *testing.T) {
	srv := bundletest.NewServer(t)
	shell := srv.Repo("org/shell")
	sha := shell.Commit(map[string]string{"tool.ts": "shell tool", "package.json": "{}"})
	shell.Tag("v1.2.3")
	dir := testtree.Write(t, t.TempDir(), map[string]string{
		"manifest.yaml": `kind: code-workspace
code:
  sources:
    - github: { repo: org/shell, ref: v1.2.3 }   # baseline
    - inline: { path: tool.ts, content: "..." }  # overrides shell's tool.ts
    - local: { path: shared/lib/utils.ts }       # adds a local file
`,
		"shared/lib/utils.ts": "utils",
	})
	b := compose(t, filepath.Join(dir, "manifest.yaml"), bundle.Options{Git: &bundle.Git{Base: srv.Base}})
	assertFiles(t, b, map[string]string{"tool.ts": "...", "package.json": "{}", "shared/lib/utils.ts": "utils"})
	if len(b.Commits) != 1 || b.Commits[0] != (bundle.Commit{Repo: "org/shell", Ref: "v1.2.3", SHA: sha}) {
		t.Errorf("Commits = %+v, want org/shell v1.2.3 resolved to %s", b.Commits, sha)
	}
}

func githubManifest(t *testing.T, ref, extra string) string {
	t.Helper()
	dir := testtree.Write(t, t.TempDir(), map[string]string{
		"manifest.yaml": "kind: code-workspace\ncode:\n  sources:\n    - github: { repo: team/rules, ref: " + ref + extra + " }\n",
	})
	return filepath.Join(dir, "manifest.yaml")
}

// A branch is resolved again on every composition and the commit it
// resolved to recorded; a SHA is fetched once and served from the cache
// even when the repository is gone.
func TestFloatingRefResolvedEachTimeAndSHACachedForever(t *testing.T) {
	srv := bundletest.NewServer(t)
	repo := srv.Repo("team/rules")
	first := repo.Commit(map[string]string{"policy/POLICY.md": "one", "README.md": "r"})
	g := &bundle.Git{Base: srv.Base}

	branch := githubManifest(t, "main", ", path: policy, as: rules")
	b := compose(t, branch, bundle.Options{Git: g})
	assertFiles(t, b, map[string]string{"rules/POLICY.md": "one"})
	if b.Commits[0].SHA != first {
		t.Errorf("main resolved to %s, want %s", b.Commits[0].SHA, first)
	}

	second := repo.Commit(map[string]string{"policy/POLICY.md": "two"})
	b2 := compose(t, branch, bundle.Options{Git: g})
	assertFiles(t, b2, map[string]string{"rules/POLICY.md": "two"})
	if b2.Commits[0].SHA != second || b2.Revision == b.Revision {
		t.Errorf("after a push main resolved to %s (revision %s), want %s and a new revision", b2.Commits[0].SHA, b2.Revision, second)
	}
	if got := b2.Commits[0].String(); got != "team/rules@main="+second {
		t.Errorf("Commit.String() = %q", got)
	}

	pinned := githubManifest(t, first, "")
	p := compose(t, pinned, bundle.Options{Git: g, RequirePinned: true})
	assertFiles(t, p, map[string]string{"policy/POLICY.md": "one", "README.md": "r"})

	if err := os.RemoveAll(filepath.Join(srv.Root(), "team")); err != nil {
		t.Fatal(err)
	}
	again := compose(t, pinned, bundle.Options{Git: g, RequirePinned: true})
	if again.Revision != p.Revision {
		t.Errorf("the cached SHA composed to %s, want %s", again.Revision, p.Revision)
	}
	composeErr(t, branch, bundle.Options{Git: g}, "cannot be resolved")
}

// --require-pinned refuses a branch or a tag before anything is fetched.
func TestRequirePinnedRefusesFloatingRefs(t *testing.T) {
	for _, ref := range []string{"main", "v1.2.3", "4f3a2b1c"} {
		composeErr(t, githubManifest(t, ref, ""), bundle.Options{Git: &bundle.Git{Base: "http://127.0.0.1:1/"}, RequirePinned: true},
			"--require-pinned accepts only a 40-hex commit SHA")
	}
}

// A tag is served from the cache for a day, then resolved again.
func TestTagCachedForADay(t *testing.T) {
	srv := bundletest.NewServer(t)
	repo := srv.Repo("team/rules")
	first := repo.Commit(map[string]string{"a": "one"})
	repo.Tag("v1")
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	g := &bundle.Git{Base: srv.Base, Now: func() time.Time { return now }}
	m := githubManifest(t, "v1", "")
	if b := compose(t, m, bundle.Options{Git: g}); b.Commits[0].SHA != first {
		t.Fatalf("v1 resolved to %s, want %s", b.Commits[0].SHA, first)
	}
	second := repo.Commit(map[string]string{"a": "two"})
	repo.Tag("v1")
	now = now.Add(bundle.TagTTL - time.Minute)
	if b := compose(t, m, bundle.Options{Git: g}); b.Commits[0].SHA != first {
		t.Errorf("within a day v1 resolved to %s, want the cached %s", b.Commits[0].SHA, first)
	}
	now = now.Add(2 * time.Minute)
	b := compose(t, m, bundle.Options{Git: g})
	if b.Commits[0].SHA != second || !strings.Contains(string(b.Files["a"]), "two") {
		t.Errorf("after a day v1 resolved to %s, want %s", b.Commits[0].SHA, second)
	}
}

// A server that stops answering fails the fetch instead of stalling the
// reload forever.
func TestGitFetchGivesUpOnASilentServer(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { <-release }))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(release) })
	g := &bundle.Git{Base: srv.URL + "/", Timeout: 50 * time.Millisecond}
	composeErr(t, githubManifest(t, "main", ""), bundle.Options{Git: g}, "context deadline exceeded")
}

// A bundle that does not load names each bad file where its author can fix
// it — the workspace file, the repository at the commit, or the manifest
// that inlined it — never the materialised copy, which is gone by then.
func TestLoadProblemsNameOrigins(t *testing.T) {
	srv := bundletest.NewServer(t)
	bad := "---\nschema: action/v1\nid: a:b\ndescription: d\nrisk_level: 9\n---\n"
	sha := srv.Repo("team/actions").Commit(map[string]string{"actions/remote/ACTION.md": strings.Replace(bad, "a:b", "r:s", 1)})
	dir := testtree.Write(t, t.TempDir(), map[string]string{
		"manifest.yaml": `kind: code-workspace
code:
  sources:
    - github: { repo: team/actions, ref: main, path: actions, as: . }
    - local: { path: cat, as: . }
    - inline: { path: inl/ACTION.md, content: "---\nschema: action/v1\nid: i:j\ndescription: d\nrisk_level: 9\n---\n" }
`,
		"cat/local/ACTION.md": bad,
	})
	b := compose(t, filepath.Join(dir, "manifest.yaml"), bundle.Options{Git: &bundle.Git{Base: srv.Base}})
	_, err := bundle.Materialise(b, func(dir string) (*catalog.Catalog, error) { return catalog.Load([]string{dir}) })
	if err == nil {
		t.Fatal("a catalog with three out-of-range risk levels loaded")
	}
	msg := err.Error()
	for _, want := range []string{
		filepath.Join(dir, "cat", "local", "ACTION.md") + ": /risk_level",
		"team/actions@" + sha + ":actions/remote/ACTION.md: /risk_level",
		filepath.Join(dir, "manifest.yaml") + " (inline inl/ACTION.md): /risk_level",
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("the load error lacks %q:\n%s", want, msg)
		}
	}
	if strings.Contains(msg, "gated-bundle-") {
		t.Errorf("the load error names the materialised copy:\n%s", msg)
	}
}
