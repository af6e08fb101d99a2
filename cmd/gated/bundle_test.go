package main

import (
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gatedhq/gated/internal/bundle/bundletest"
	"github.com/gatedhq/gated/internal/testwait"
)

// treeFiles reads every file below dir, keyed by slash path.
func treeFiles(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := fs.WalkDir(os.DirFS(dir), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(os.DirFS(dir), p)
		out[p] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// bundleSHAs are the commits GET /v1/catalog's bundle block records.
func bundleSHAs(t *testing.T, doc map[string]any) []string {
	t.Helper()
	b, _ := doc["bundle"].(map[string]any)
	commits, _ := b["commits"].([]any)
	var shas []string
	for _, c := range commits {
		shas = append(shas, c.(map[string]any)["sha"].(string))
	}
	return shas
}

// TestServeCatalogBundleFollowsBranch serves a catalog composed from a
// git branch: the commit the branch resolved to is shown, and a push is
// picked up at the next poll without a restart.
func TestServeCatalogBundleFollowsBranch(t *testing.T) {
	t.Parallel()
	srv := bundletest.NewServer(t)
	repo := srv.Repo("team/catalog")
	first := repo.Commit(treeFiles(t, "../../examples/catalog"))
	dir := t.TempDir()
	manifest := filepath.Join(dir, "manifest.yaml")
	if err := os.WriteFile(manifest, []byte("kind: code-workspace\ncode:\n  sources:\n    - github: { repo: team/catalog, ref: main }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	base, _ := startServe(t, []string{"--catalog", manifest, "--bundle-git-base", srv.Base, "--bundle-poll-interval", "20ms"}, nil)
	_, doc := get(t, base+"/v1/catalog", nil)
	if shas := bundleSHAs(t, doc); len(shas) != 1 || shas[0] != first {
		t.Fatalf("GET /v1/catalog bundle commits = %v, want [%s]", shas, first)
	}
	ev := `{"tool_name":"get_weather","tool_category":"public_read","authorization_state":"none","evidence_refs":[],` +
		`"risk_domain":"public_information","proposed_arguments":{"city":"Lisbon"},"recommended_route":"accept"}`
	if _, d := post(t, base+"/pre-tool-check", ev, nil); d["route"] != "defer" {
		t.Fatalf("an uncatalogued tool: route %v, want defer", d["route"])
	}

	second := repo.Commit(map[string]string{"weather.TOOL.md": weatherTool})
	testwait.Until(t, "the pushed tool", func() bool {
		_, d := post(t, base+"/pre-tool-check", ev, nil)
		return d["route"] == "accept"
	})
	_, doc = get(t, base+"/v1/catalog", nil)
	if shas := bundleSHAs(t, doc); len(shas) != 1 || shas[0] != second {
		t.Fatalf("after the push GET /v1/catalog bundle commits = %v, want [%s]", shas, second)
	}
}

// --require-pinned refuses to start on a branch.
func TestRequirePinnedRefusesBranch(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	manifest := filepath.Join(dir, "manifest.yaml")
	if err := os.WriteFile(manifest, []byte("kind: code-workspace\ncode: { sources: [ { github: { repo: team/catalog, ref: main } } ] }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	err := run(t.Context(), []string{"gated", "check", "--catalog", manifest, "--require-pinned", "--bundle-git-base", "http://127.0.0.1:1/"}, func(string) string { return "" }, strings.NewReader("{}"), io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "--require-pinned accepts only a 40-hex commit SHA") {
		t.Fatalf("check with a branch and --require-pinned: %v", err)
	}
}
