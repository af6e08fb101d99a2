package main

import (
	"bytes"
	"encoding/json"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/gatedhq/gated/internal/bundle/bundletest"
	"github.com/gatedhq/gated/internal/policydiff"
	"github.com/gatedhq/gated/internal/testtree"
)

// exampleSources reads examples/policy and examples/catalog as files below
// prefix+"policy/" and prefix+"catalog/".
func exampleSources(t *testing.T, prefix string) map[string]string {
	t.Helper()
	files := map[string]string{}
	for _, dir := range []string{"policy", "catalog"} {
		root := filepath.Join(examplesDir, dir)
		err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			data, err := os.ReadFile(p)
			rel, _ := filepath.Rel(examplesDir, p)
			files[prefix+filepath.ToSlash(rel)] = string(data)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return files
}

// refundAnyTime drops the refund grant's office hours (a widening the
// example test cases see), and widenSendEmail lowers send-email's risk
// level in the catalog (a widening only the catalog shows).
func refundAnyTime(t *testing.T, files map[string]string, prefix string) {
	t.Helper()
	name := prefix + "policy/POLICY.md"
	cond := `    conditions:
      - { kind: "during-business-hours", timezone: "Europe/Paris", start: "08:00", end: "19:00" }
`
	if !strings.Contains(files[name], cond) {
		t.Fatalf("%s has no office hours to drop", name)
	}
	files[name] = strings.Replace(files[name], cond, "", 1)
	action := prefix + "catalog/actions/support/send-email/ACTION.md"
	if !strings.Contains(files[action], "risk_level: 2") {
		t.Fatalf("%s has no risk_level 2", action)
	}
	files[action] = strings.Replace(files[action], "risk_level: 2", "risk_level: 1", 1)
}

func policyDiff(t *testing.T, args ...string) (string, error) {
	t.Helper()
	var out, errOut bytes.Buffer
	err := run(t.Context(), append([]string{"gated", "policy", "diff"}, args...), env(nil), nil, &out, &errOut)
	return out.String(), err
}

// TestPolicyDiffGitRevisions compares two commits of a real repository,
// each read with the catalog its test file names at that commit.
func TestPolicyDiffGitRevisions(t *testing.T) {
	t.Parallel()
	repo := bundletest.NewServer(t).Repo("team/policy")
	dir := repo.Dir()
	files := exampleSources(t, "")
	base := repo.Commit(files)
	refundAnyTime(t, files, "")
	repo.Commit(files)

	// Flags after the revisions, as the CI example writes them.
	md, err := policyDiff(t, base, "HEAD", "--repo", dir, "--policy", "policy", "--format", "markdown")
	if exitCode(err) != exitBlocked {
		t.Fatalf("a widening exits %d (%v), want %d\n%s", exitCode(err), err, exitBlocked, md)
	}
	for _, want := range []string{
		"<!-- gated-policy-diff -->",
		"### gated policy diff: `" + base + ":policy (" + base[:12] + ")` → `HEAD:policy (",
		"| grant | `group://support-leads → billing:refund in @gated/support-baseline` | condition removed: during-business-hours Europe/Paris 08:00–19:00 |",
		"| tool | `support.send-email` | risk\\_level 2 → 1 |",
		"| decision | a refund after Paris office hours fails its condition (`policy_test.yaml`) | refuse \\[policy\\_condition\\_failed\\] → accept |",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("the markdown lacks %q:\n%s", want, md)
		}
	}
	if strings.Contains(md, "#### Tightens") {
		t.Errorf("tightenings in a change that only widens:\n%s", md)
	}

	if out, err := policyDiff(t, "--allow-widening", "--repo", dir, base+":policy", "HEAD:policy"); err != nil || !strings.Contains(out, "3 widening, 0 tightening") {
		t.Fatalf("--allow-widening: %v\n%s", err, out)
	}

	// The other way round everything tightens, and nothing blocks.
	out, err := policyDiff(t, "--repo", dir, "--format", "json", "HEAD:policy", base+":policy")
	if err != nil {
		t.Fatalf("a tightening: %v\n%s", err, out)
	}
	var doc struct {
		Widens    bool `json:"widens"`
		Decisions []struct {
			Direction, Case string
		} `json:"decisions"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil || doc.Widens || len(doc.Decisions) != 1 || doc.Decisions[0].Direction != "tightens" {
		t.Fatalf("json: %v %+v\n%s", err, doc, out)
	}

	// --catalog names the catalog inside the repository.
	if out, err := policyDiff(t, "--repo", dir, "--catalog", "catalog", "--policy", "policy", base, "HEAD"); exitCode(err) != exitBlocked || !strings.Contains(out, "widens    tool        support.send-email: risk_level 2 → 1") {
		t.Fatalf("--catalog at the revisions: %v\n%s", err, out)
	}
}

// TestPolicyDiffPolicyAdded: a revision without the policy and the catalog
// is gated without them, so adding both tightens as a whole (not grant by
// grant and tool by tool) and exits 0.
func TestPolicyDiffPolicyAdded(t *testing.T) {
	t.Parallel()
	repo := bundletest.NewServer(t).Repo("team/new")
	base := repo.Commit(map[string]string{"README.md": "no policy yet"})
	repo.Commit(exampleSources(t, ""))
	out, err := policyDiff(t, "--repo", repo.Dir(), "--policy", "policy", "--catalog", "catalog", base, "HEAD")
	if err != nil || !strings.Contains(out, ":policy ("+base[:12]+": no policy there) → HEAD:policy") ||
		!strings.Contains(out, "\ntightens  policy      grants: POLICY.md enforced where none was: 10 grants of 3 policies\n") ||
		!strings.Contains(out, "\ntightens  catalog     tools: a catalog where there was none: the floors of 17 tools apply") ||
		!strings.Contains(out, "; 8 of 15 test-case decisions change") || strings.Contains(out, "\nwidens") {
		t.Fatalf("%v\n%s", err, out)
	}
}

// TestPolicyDiffBundleManifests compares two bundle manifests, the old one
// at a git revision and the new one on disk.
func TestPolicyDiffBundleManifests(t *testing.T) {
	t.Parallel()
	repo := bundletest.NewServer(t).Repo("team/bundle")
	files := exampleSources(t, "ws/")
	files["ws/manifest.yaml"] = "kind: code-workspace\ncode: { sources: [ { local: { path: policy, as: . } } ] }\n"
	base := repo.Commit(files)
	refundAnyTime(t, files, "ws/")
	work := testtree.Write(t, t.TempDir(), files)

	out, err := policyDiff(t, "--repo", repo.Dir(), base+":ws/manifest.yaml", filepath.Join(work, "ws", "manifest.yaml"))
	if exitCode(err) != exitBlocked || !strings.Contains(out, `widens    decision    "a refund after Paris office hours fails its condition" (policy/policy_test.yaml): refuse [policy_condition_failed] → accept`) {
		t.Fatalf("%v\n%s", err, out)
	}
}

func TestPolicyDiffDirectories(t *testing.T) {
	t.Parallel()
	files := exampleSources(t, "")
	refundAnyTime(t, files, "")
	work := testtree.Write(t, t.TempDir(), files)
	out, err := policyDiff(t, filepath.Join(examplesDir, "policy"), filepath.Join(work, "policy"))
	if exitCode(err) != exitBlocked || !strings.HasPrefix(out, "gated policy diff: ") || !strings.Contains(out, "\nwidens    grant       group://support-leads → billing:refund") {
		t.Fatalf("%v\n%s", err, out)
	}
	same, err := policyDiff(t, filepath.Join(examplesDir, "policy"), filepath.Join(examplesDir, "policy"))
	if err != nil || !strings.Contains(same, "0 widening, 0 tightening, 0 other; 0 of 15 test-case decisions change") {
		t.Fatalf("the same policy: %v\n%s", err, same)
	}
}

// TestPolicyDiffModuleEdited: an edited custom module exits 3 though no
// decision changes, and --allow-widening lets it pass.
func TestPolicyDiffModuleEdited(t *testing.T) {
	t.Parallel()
	files := exampleSources(t, "")
	const module = "policy/rules/deploy-freeze.rego"
	files[module] = strings.Replace(files[module], "package", "# edited\npackage", 1)
	work := testtree.Write(t, t.TempDir(), files)
	old, new := filepath.Join(examplesDir, "policy"), filepath.Join(work, "policy")
	out, err := policyDiff(t, old, new)
	if exitCode(err) != exitBlocked || !strings.Contains(out, "0 of 15 test-case decisions change") || !strings.Contains(out, "module") {
		t.Fatalf("%v\n%s", err, out)
	}
	if out, err := policyDiff(t, "--allow-widening", old, new); err != nil {
		t.Fatalf("--allow-widening: %v\n%s", err, out)
	}
}

func TestPolicyDiffErrors(t *testing.T) {
	t.Parallel()
	policyDir := filepath.Join(examplesDir, "policy")
	for _, tt := range []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{policyDir}, exitUsage, "usage: gated policy diff"},
		{[]string{"--format", "html", policyDir, policyDir}, exitUsage, `--format "html"`},
		{[]string{"no-such-rev", policyDir}, exitUsage, "REV:PATH, or --policy PATH"},
		{[]string{"--repo", t.TempDir(), "main:policy", policyDir}, 1, "no git repository"},
		{[]string{"--since", "24h", policyDir, policyDir}, exitUsage, "give --replay"},
		{[]string{"--replay", policyDir, policyDir}, exitUsage, "one of --database-url and --audit-file"},
		{[]string{"--replay", "--audit-file", "a.jsonl", policyDir, policyDir}, exitUsage, "--replay needs --since"},
		{[]string{"--replay", "--audit-file", "a.jsonl", "--since", "soon", policyDir, policyDir}, exitUsage, `--since: "soon" is neither`},
		{[]string{"--replay", "--audit-file", "a.jsonl", "--since", "1h", "--until", "2h", policyDir, policyDir}, exitUsage, "is not after --since"},
		{[]string{"--replay", "--audit-file", "a.jsonl", "--database-url", "postgres://x", "--since", "1h", policyDir, policyDir}, exitUsage, "one of --database-url and --audit-file"},
		{[]string{"--seal-identity", "key.txt", policyDir, policyDir}, exitUsage, "give --replay"},
	} {
		_, err := policyDiff(t, tt.args...)
		if exitCode(err) != tt.code || err == nil || !strings.Contains(err.Error(), tt.msg) {
			t.Errorf("%v: %v (exit %d), want exit %d with %q", tt.args, err, exitCode(err), tt.code, tt.msg)
		}
	}
}

// TestPolicyDiffCIExample holds the example workflow to valid YAML that
// runs the diff as a markdown comment, with the permission to post it.
func TestPolicyDiffCIExample(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile(filepath.Join(examplesDir, "ci", "policy-diff.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var wf struct {
		On          map[string]any    `yaml:"on"`
		Permissions map[string]string `yaml:"permissions"`
		Jobs        map[string]struct {
			Steps []struct {
				Run string `yaml:"run"`
			} `yaml:"steps"`
		} `yaml:"jobs"`
	}
	if err := yaml.Unmarshal(data, &wf); err != nil {
		t.Fatalf("the example workflow: %v", err)
	}
	if _, ok := wf.On["pull_request"]; !ok || wf.Permissions["pull-requests"] != "write" {
		t.Fatalf("on %v, permissions %v", wf.On, wf.Permissions)
	}
	var runs strings.Builder
	for _, j := range wf.Jobs {
		for _, s := range j.Steps {
			runs.WriteString(s.Run)
		}
	}
	for _, want := range []string{`gated policy diff "origin/$BASE" HEAD --policy policy --format markdown`, policydiff.Marker} {
		if !strings.Contains(runs.String(), want) {
			t.Errorf("no step runs %q", want)
		}
	}
}

// TestPolicyDiffReplay records decisions through a real gated serve (to
// its audit file), then diffs its policy against one that grants the
// other principal, with --replay over that file: the replayed widening
// sets the exit status and its section joins the report.
func TestPolicyDiffReplay(t *testing.T) {
	t.Parallel()
	grant := func(who string) string {
		return testtree.Write(t, t.TempDir(), map[string]string{"POLICY.md": "---\nschema: policy/v1\nid: \"@replay/p\"\ngrants:\n  - principal: \"" + who +
			"\"\n    actions:\n      - action: \"messaging:send-email\"\n---\n"})
	}
	old, new := grant("bot://support-agent"), grant("bot://other")
	audit := filepath.Join(t.TempDir(), "audit.jsonl")
	tokens := tokensFile(t, token{"support", "support-token-0123456789abcdef", "[pre_tool_check]", "[bot://support-agent]"},
		token{"other", "other-token-0123456789abcdef012", "[pre_tool_check]", "[bot://other]"})
	base, _ := startServe(t, []string{"--audit-file", audit, "--audit-durability", "sync", "--tokens", tokens,
		"--catalog", "../../examples/catalog", "--policy", old}, nil)
	email := `{"tool_name":"send_email","tool_category":"write","authorization_state":"confirmed",
		"evidence_refs":[{"source_id":"approval.1","kind":"approval","trust_tier":"verified","redaction_status":"redacted","freshness":{"status":"fresh"},"provenance":"connector"}],
		"risk_domain":"customer_support","proposed_arguments":{"to":"c@example.com","subject":"Hi","body":"Solved.","ticket_id":"T-42"},"recommended_route":"accept"}`
	for tok, want := range map[string]string{"support-token-0123456789abcdef": "accept", "other-token-0123456789abcdef012": "refuse"} {
		if code, d := post(t, base+"/pre-tool-check", email, map[string]string{"Authorization": "Bearer " + tok}); code != http.StatusOK || d["route"] != want {
			t.Fatalf("recording: %d %v, want %s", code, d, want)
		}
	}
	// The tool's argument schema refuses a call the policy grants: a rule
	// an unsealed record cannot be judged by again.
	badTicket := strings.Replace(email, `"T-42"`, `"no ticket"`, 1)
	if code, d := post(t, base+"/pre-tool-check", badTicket, map[string]string{"Authorization": "Bearer support-token-0123456789abcdef"}); code != http.StatusOK || d["route"] != "refuse" {
		t.Fatalf("recording the bad ticket id: %d %v, want refuse", code, d)
	}

	md, err := policyDiff(t, old, new, "--catalog", "../../examples/catalog", "--format", "markdown", "--replay", "--audit-file", audit, "--since", "1h")
	if exitCode(err) != exitBlocked {
		t.Fatalf("a replayed widening: exit %d (%v), want %d\n%s", exitCode(err), err, exitBlocked, md)
	}
	for _, want := range []string{
		"2 of 3 replayed decisions change, 1 widen",
		"| grant | `bot://other → messaging:send-email in @replay/p` | granted |",
		"### Replay",
		"refuse → accept (widened)",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("the markdown lacks %q:\n%s", want, md)
		}
	}
	if strings.Index(md, "#### Widens") > strings.Index(md, "### Replay") {
		t.Errorf("the replay before the diff's own widenings:\n%s", md)
	}

	out, err := policyDiff(t, old, new, "--catalog", "../../examples/catalog", "--format", "json", "--allow-widening", "--replay", "--audit-file", audit, "--since", "1h")
	var doc struct {
		Widens bool
		Replay struct {
			Report struct{ Replayed, Widened int }
		}
	}
	if err != nil || json.Unmarshal([]byte(out), &doc) != nil || !doc.Widens || doc.Replay.Report.Replayed != 3 || doc.Replay.Report.Widened != 1 {
		t.Fatalf("json with --allow-widening: %v %+v\n%s", err, doc, out)
	}

	// Replayed under the policy serve decided them with (NEW is old), every
	// record keeps its route: the schema's refusal does not come back as
	// a widening though replay cannot validate the arguments again.
	out, err = policyDiff(t, new, old, "--catalog", "../../examples/catalog", "--format", "json", "--allow-widening", "--replay", "--audit-file", audit, "--since", "1h")
	var back struct {
		Replay struct {
			Report struct {
				Replayed, Changed, Widened, Kept int
				SameRevisions                    int `json:"same_revisions"`
			}
		}
	}
	if err != nil || json.Unmarshal([]byte(out), &back) != nil {
		t.Fatalf("json under the recording policy: %v\n%s", err, out)
	}
	if r := back.Replay.Report; r.Replayed != 3 || r.Changed != 0 || r.Widened != 0 || r.Kept != 3 || r.SameRevisions != 3 {
		t.Errorf("replay under the recording policy: %+v, want 3 replayed, all kept for the same revisions\n%s", r, out)
	}
}

// A policy folder copied away from its catalog keeps a test file naming
// `catalog: ../catalog`, which is not there: without --catalog, policy diff
// and policy test name that file and what it names, and point to --catalog,
// rather than failing on the path they could not read.
func TestPolicyDiffNamedCatalogMissing(t *testing.T) {
	t.Parallel()
	files := exampleSources(t, "")
	for name := range files {
		if strings.HasPrefix(name, "catalog/") {
			delete(files, name)
		}
	}
	dir := testtree.Write(t, t.TempDir(), files)
	next := filepath.Join(dir, "policy")
	for _, args := range [][]string{{"policy", "diff", filepath.Join(examplesDir, "policy"), next}, {"policy", "test", next}} {
		err := run(t.Context(), append([]string{"gated"}, args...), env(nil), nil, io.Discard, io.Discard)
		want := filepath.Join(next, "policy_test.yaml") + ` names the catalog "../catalog", which would be ` + filepath.Join(dir, "catalog") + " and does not exist: give the catalog with --catalog DIR"
		if exitCode(err) != 1 || err == nil || err.Error() != want {
			t.Errorf("%v: %v (exit %d), want exit 1 with %q", args, err, exitCode(err), want)
		}
	}
	// With --catalog the side is judged with it.
	if _, err := policyDiff(t, filepath.Join(examplesDir, "policy"), next, "--catalog", filepath.Join(examplesDir, "catalog")); err != nil {
		t.Errorf("with --catalog: %v", err)
	}
}
