package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gatedhq/gated/internal/bundle/bundletest"
	"github.com/gatedhq/gated/internal/testtree"
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
	auditFile := filepath.Join(t.TempDir(), "audit.jsonl") // not in the workspace, which is watched
	base, _ := startServe(t, []string{"--catalog", manifest, "--bundle-git-base", srv.Base, "--bundle-poll-interval", "20ms", "--audit-file", auditFile}, nil)
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

	// The decision, in its answer and its audit record, names the commit
	// the branch resolved to.
	want := "catalog:team/catalog@main=" + second
	_, d := post(t, base+"/pre-tool-check", ev, nil)
	if commits := fmt.Sprint(d["revisions"].(map[string]any)["commits"]); commits != "["+want+"]" {
		t.Errorf("the decision's revisions.commits = %s, want [%s]", commits, want)
	}
	id := d["decision_id"].(string)
	testwait.Until(t, "the decision's audit record", func() bool {
		b, _ := os.ReadFile(auditFile)
		return strings.Contains(string(b), id)
	})
	for line := range strings.Lines(string(must(os.ReadFile(auditFile)))) {
		if strings.Contains(line, id) && !strings.Contains(line, `"bundle_commits":["`+want+`"]`) {
			t.Errorf("the audit record does not name %s: %s", want, line)
		}
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
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

// writeKeys writes a fresh Ed25519 key pair as PEM and returns the paths.
func writeKeys(t *testing.T, dir string) (pubFile, privFile string) {
	t.Helper()
	k := bundletest.NewKeys(t)
	pubFile, privFile = filepath.Join(dir, "bundle.pub"), filepath.Join(dir, "bundle.key")
	if err := os.WriteFile(pubFile, k.PublicPEM, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(privFile, k.PrivPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	return pubFile, privFile
}

// TestServeSignedBundle: with --bundle-public-key only a signed revision
// loads. A push to the branch composes a revision nobody signed: the
// previous one keeps serving and the reload error says why, until
// `gated bundle sign` signs the new one.
func TestServeSignedBundle(t *testing.T) {
	t.Parallel()
	srv := bundletest.NewServer(t)
	repo := srv.Repo("team/catalog")
	repo.Commit(treeFiles(t, "../../examples/catalog"))
	dir := t.TempDir()
	pubFile, privFile := writeKeys(t, t.TempDir())
	manifest := filepath.Join(dir, "manifest.yaml")
	if err := os.WriteFile(manifest, []byte("kind: code-workspace\ncode:\n  sources:\n    - github: { repo: team/catalog, ref: main }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	noenv := func(string) string { return "" }
	sign := func() {
		t.Helper()
		var out strings.Builder
		if err := run(t.Context(), []string{"gated", "bundle", "sign", "--key", privFile, "--bundle-git-base", srv.Base, manifest}, noenv, nil, &out, io.Discard); err != nil {
			t.Fatalf("gated bundle sign: %v", err)
		}
	}
	args := []string{"--catalog", manifest, "--bundle-git-base", srv.Base, "--bundle-public-key", pubFile}
	if err := run(t.Context(), append([]string{"gated", "check"}, args...), noenv, strings.NewReader("{}"), io.Discard, io.Discard); err == nil ||
		!strings.Contains(err.Error(), "is not signed") {
		t.Fatalf("check with an unsigned bundle: %v, want it refused as not signed", err)
	}
	sign()
	base, _ := startServe(t, append(args, "--bundle-poll-interval", "20ms"), nil)
	_, doc := get(t, base+"/v1/catalog", nil)
	signedRev := doc["bundle"].(map[string]any)["revision"]

	repo.Commit(map[string]string{"weather.TOOL.md": weatherTool})
	ev := `{"tool_name":"get_weather","tool_category":"public_read","authorization_state":"none","evidence_refs":[],` +
		`"risk_domain":"public_information","proposed_arguments":{"city":"Lisbon"},"recommended_route":"accept"}`
	testwait.Until(t, "the reload error of the unsigned revision", func() bool {
		_, doc = get(t, base+"/v1/catalog", nil)
		e, _ := doc["last_reload_error"].(map[string]any)
		return e != nil && strings.Contains(fmt.Sprint(e), "does not verify")
	})
	if rev := doc["bundle"].(map[string]any)["revision"]; rev != signedRev {
		t.Fatalf("an unsigned revision was loaded: %v, want %v still serving", rev, signedRev)
	}
	if _, d := post(t, base+"/pre-tool-check", ev, nil); d["route"] != "defer" {
		t.Fatalf("the unsigned revision's tool decided: route %v, want defer", d["route"])
	}

	sign()
	testwait.Until(t, "the newly signed revision", func() bool {
		_, d := post(t, base+"/pre-tool-check", ev, nil)
		return d["route"] == "accept"
	})
}

// Issue 25 §7: --require-signed refuses a --catalog directory when a
// bundle key is set (a directory carries no signature), and needs the key.
func TestRequireSignedRefusesDirectories(t *testing.T) {
	t.Parallel()
	pubFile, _ := writeKeys(t, t.TempDir())
	noenv := func(string) string { return "" }
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--catalog", "../../examples/catalog", "--bundle-public-key", pubFile, "--require-signed"}, "--require-signed loads only bundle manifests signed"},
		{[]string{"--catalog", "../../examples/catalog", "--require-signed"}, "--require-signed needs --bundle-public-key"},
	} {
		err := run(t.Context(), append([]string{"gated", "check"}, append(tc.args, "../../examples/events/send_email_ask.json")...), noenv, nil, io.Discard, io.Discard)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: %v, want an error saying %q", tc.args, err, tc.want)
		}
	}
	// Without --require-signed the directory loads (with a warning, where
	// the command logs: internal/sources' tests).
	err := run(t.Context(), []string{"gated", "check", "--catalog", "../../examples/catalog", "--bundle-public-key", pubFile,
		"../../examples/events/send_email_ask.json"}, noenv, nil, io.Discard, io.Discard)
	if _, blocked := err.(exitError); err != nil && !blocked {
		t.Fatalf("check with a directory and a key: %v", err)
	}
}

// checkEvent runs `gated check` on an event file and returns the answer.
func checkEvent(t *testing.T, event string, args ...string) map[string]any {
	t.Helper()
	var out strings.Builder
	err := run(t.Context(), append(append([]string{"gated", "check"}, args...), event), func(string) string { return "" }, nil, &out, io.Discard)
	if _, blocked := err.(exitError); err != nil && !blocked {
		t.Fatalf("gated check %s: %v", event, err)
	}
	var d map[string]any
	if err := json.Unmarshal([]byte(out.String()), &d); err != nil {
		t.Fatalf("gated check %s answered %q: %v", event, out.String(), err)
	}
	return d
}

// A catalog and a policy composed by manifests — the rich form placing a
// directory at the bundle's root, the lean CODE.md form through a ref —
// decide every example event as their directories do, with the same
// catalog revision.
func TestCheckWithManifestsDecidesAsDirectories(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	for _, d := range []string{"catalog", "policy"} {
		if err := os.CopyFS(filepath.Join(ws, d), os.DirFS(filepath.Join(examplesDir, d))); err != nil {
			t.Fatal(err)
		}
	}
	files := map[string]string{
		"manifest.yaml":         "kind: code-workspace\ncode: { sources: [ { local: { path: catalog, as: . } } ] }\n",
		"policy.CODE.md":        "---\nschema: code/v2\nsource: [ { ref: shared/policy } ]\n---\n",
		"shared/policy/CODE.md": "---\nkind: code-workspace\ncode:\n  sources:\n    - local: { path: policy, as: ./ }\n---\n",
	}
	testtree.Write(t, ws, files)
	events, err := filepath.Glob(filepath.Join(examplesDir, "events", "*.json"))
	if err != nil || len(events) == 0 {
		t.Fatalf("no example events: %v", err)
	}
	for _, ev := range events {
		dirs := checkEvent(t, ev, "--catalog", filepath.Join(ws, "catalog"), "--policy", filepath.Join(ws, "policy"))
		composed := checkEvent(t, ev, "--catalog", filepath.Join(ws, "manifest.yaml"), "--policy", filepath.Join(ws, "policy.CODE.md"))
		if composed["route"] != dirs["route"] || fmt.Sprint(composed["hard_blockers"]) != fmt.Sprint(dirs["hard_blockers"]) {
			t.Errorf("%s: composed %v %v, directories %v %v", filepath.Base(ev), composed["route"], composed["hard_blockers"], dirs["route"], dirs["hard_blockers"])
		}
		cr, dr := composed["revisions"].(map[string]any), dirs["revisions"].(map[string]any)
		if cr["catalog"] != dr["catalog"] {
			t.Errorf("%s: catalog revision %v composed, %v from the directory", filepath.Base(ev), cr["catalog"], dr["catalog"])
		}
	}
}

// The lint commands take a manifest as serve does: a good bundle lints
// clean, and a bad one names the file where it can be fixed.
func TestLintManifests(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	for _, d := range []string{"catalog", "policy"} {
		if err := os.CopyFS(filepath.Join(ws, d), os.DirFS(filepath.Join(examplesDir, d))); err != nil {
			t.Fatal(err)
		}
	}
	testtree.Write(t, ws, map[string]string{
		"manifest.yaml":  "kind: code-workspace\ncode: { sources: [ { local: { path: catalog, as: . } } ] }\n",
		"policy.CODE.md": "---\nkind: code-workspace\ncode: { sources: [ { local: { path: policy, as: . } } ] }\n---\n",
		"bad/manifest.yaml": "kind: code-workspace\ncode: { sources: [ " +
			"{ inline: { path: x/ACTION.md, content: \"---\\nschema: action/v1\\nid: x:y\\ndescription: d\\nrisk_level: 9\\n---\\n\" } } ] }\n",
	})
	var out bytes.Buffer
	if err := run(context.Background(), []string{"gated", "catalog", "lint", filepath.Join(ws, "manifest.yaml")}, env(nil), nil, &out, io.Discard); err != nil || !strings.HasPrefix(out.String(), "catalog ok: ") {
		t.Fatalf("catalog lint of a good manifest: %v\n%s", err, &out)
	}
	out.Reset()
	if err := run(context.Background(), []string{"gated", "policy", "lint", "--catalog", filepath.Join(ws, "manifest.yaml"), filepath.Join(ws, "policy.CODE.md")}, env(nil), nil, &out, io.Discard); err != nil || !strings.Contains(out.String(), "0 error(s)") {
		t.Fatalf("policy lint of a good manifest: %v\n%s", err, &out)
	}
	out.Reset()
	bad := filepath.Join(ws, "bad", "manifest.yaml")
	if got := exitCode(run(context.Background(), []string{"gated", "catalog", "lint", bad}, env(nil), nil, &out, io.Discard)); got != 1 ||
		!strings.Contains(out.String(), bad+" (inline x/ACTION.md): /risk_level") {
		t.Fatalf("catalog lint of a bad manifest: exit %d\n%s", got, &out)
	}
}
