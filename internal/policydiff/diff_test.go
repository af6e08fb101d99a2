package policydiff_test

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gatedhq/gated/internal/catalog"
	"github.com/gatedhq/gated/internal/gate"
	"github.com/gatedhq/gated/internal/policy"
	"github.com/gatedhq/gated/internal/policy/cases"
	"github.com/gatedhq/gated/internal/policydiff"
	"github.com/gatedhq/gated/internal/testtree"
)

const examples = "../../examples"

// exampleTree reads examples/policy and examples/catalog as files below
// policy/ and catalog/, for a test to edit and write elsewhere.
func exampleTree(t *testing.T) map[string]string {
	t.Helper()
	files := map[string]string{}
	for _, dir := range []string{"policy", "catalog"} {
		root := filepath.Join(examples, dir)
		err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			data, err := os.ReadFile(p)
			rel, _ := filepath.Rel(examples, p)
			files[filepath.ToSlash(rel)] = string(data)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return files
}

// edit replaces old with new in one file of files, failing the test when
// old is not there: an edit that does nothing would test nothing.
func edit(t *testing.T, files map[string]string, name, old, new string) {
	t.Helper()
	if !strings.Contains(files[name], old) {
		t.Fatalf("%s does not contain %q", name, old)
	}
	files[name] = strings.Replace(files[name], old, new, 1)
}

// load loads a side as gated policy diff does: the catalog, the policy
// resolved through it, the test cases, and the real gate deciding them.
func load(t *testing.T, label, root string) policydiff.Side {
	t.Helper()
	cat, err := catalog.Load([]string{filepath.Join(root, "catalog")})
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(root, "policy")
	pol, err := policy.Load([]string{dir}, cat)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := cases.Read([]string{dir})
	if err != nil {
		t.Fatal(err)
	}
	return policydiff.Side{Label: label, Catalog: cat, Policy: pol, Cases: cs,
		Decide: func(ev map[string]any, principals []string, now time.Time) (string, []string) {
			e := gate.New(gate.WithCatalog(func() *catalog.Catalog { return cat }, gate.UnknownDefer, catalog.ArgumentsEnforce),
				gate.WithPolicy(func() *policy.Set { return pol }, policy.NewLimiter()), gate.WithClock(func() time.Time { return now }))
			d := e.Decide(context.Background(), gate.Request{Event: ev, Principals: principals})
			return d.Route.String(), d.HardBlockers
		}}
}

// widened is the examples with changes in every direction: a grant's
// condition and a requirement dropped and a tool's risk level lowered
// (widen), a limit lowered, a grant removed and an argument rule added
// (tighten), a custom module edited (cannot be ordered).
func widened(t *testing.T) string {
	files := exampleTree(t)
	edit(t, files, "policy/POLICY.md", `    conditions:
      - { kind: "during-business-hours", timezone: "Europe/Paris", start: "08:00", end: "19:00" }
`, "")
	edit(t, files, "policy/POLICY.md", "value: 100,", "value: 50,")
	edit(t, files, "policy/devops.POLICY.md", `      - { action: "sandbox:execute" }
`, "")
	edit(t, files, "policy/devops.POLICY.md", `requirements:
  # Touching secrets needs a fresh, verified MFA event.
  - kind: "mfa-recent"
    within_seconds: 900
    applies_to: ["secrets:*"]
`, "")
	edit(t, files, "catalog/actions/support/send-email/ACTION.md", "risk_level: 2", "risk_level: 1")
	edit(t, files, "catalog/tools/devops/git-commit/TOOL.md", "    aliases: [git_commit]\n",
		"    aliases: [git_commit]\n    rules:\n      - {code: no_wip_commits, pointer: /message, regex: ['^wip'], route: refuse}\n")
	edit(t, files, "policy/rules/deploy-freeze.rego", "package", "# edited\npackage")
	return testtree.Write(t, t.TempDir(), files)
}

func lines(r policydiff.Report) []string {
	var out []string
	for _, c := range r.Changes {
		out = append(out, string(c.Direction)+" "+c.Area+" "+c.Subject+": "+c.What)
	}
	for _, d := range r.Decisions {
		out = append(out, string(d.Direction)+" decision "+d.Case+": "+d.Old.Route+" → "+d.New.Route)
	}
	return out
}

func TestCompareExamples(t *testing.T) {
	t.Parallel()
	old := load(t, "old", examples)
	r := policydiff.Compare(old, load(t, "new", widened(t)))
	want := []string{
		"widens grant group://support-leads → billing:refund in @gated/support-baseline: condition removed: during-business-hours Europe/Paris 08:00–19:00",
		"widens requirement mfa-recent on secrets:* in @gated/devops: removed",
		"widens tool support.send-email: risk_level 2 → 1",
		"tightens grant operator://oncall → sandbox:execute in @gated/devops: removed",
		"tightens limit rate-tool-calls per minute on messaging:send-email in @gated/support-baseline: 100 → 50",
		"tightens rule devops.git-commit no_wip_commits: added (regex on /message, refuse)",
		"changes module rules/deploy-freeze.rego: edited: it may remove a finding, so it counts as a widening; see the decisions below",
		"widens decision a refund after Paris office hours fails its condition: refuse → accept",
		"widens decision rotating a key without recent MFA asks: ask → accept",
	}
	got := lines(r)
	for _, w := range want {
		if !slices.Contains(got, w) {
			t.Errorf("missing %q", w)
		}
	}
	if len(got) != len(want) {
		t.Errorf("got %d changes, want %d:\n%s", len(got), len(want), strings.Join(got, "\n"))
	}
	if !r.Widens() || r.Cases != len(old.Cases) || r.Cases == 0 {
		t.Errorf("Widens %t, %d cases (the examples have %d)", r.Widens(), r.Cases, len(old.Cases))
	}

	// Reversed, every direction flips: what widened now tightens.
	back := policydiff.Compare(load(t, "new", widened(t)), old)
	for _, c := range back.Decisions {
		if c.Direction != policydiff.Tightens {
			t.Errorf("reversed, %q %s", c.Case, c.Direction)
		}
	}
}

// TestMarkdownWideningsFirst: the comment a reviewer reads lists every
// widening, structural and decided, before anything else.
func TestMarkdownWideningsFirst(t *testing.T) {
	t.Parallel()
	r := policydiff.Compare(load(t, "origin/main", examples), load(t, "HEAD", widened(t)))
	var b bytes.Buffer
	if err := r.Markdown(&b); err != nil {
		t.Fatal(err)
	}
	md := b.String()
	if !strings.HasPrefix(md, policydiff.Marker+"\n") || !strings.Contains(md, "⚠️ **This change widens") {
		t.Fatalf("no marker or verdict:\n%s", md)
	}
	rows := strings.Split(md, "\n")
	section := ""
	var order []string
	for _, row := range rows {
		if h, ok := strings.CutPrefix(row, "#### "); ok {
			section = strings.Fields(h)[0]
			order = append(order, section)
			continue
		}
		if strings.HasPrefix(row, "| ") && !strings.HasPrefix(row, "| |") {
			want := map[string]string{"Widens": "widens", "Tightens": "tightens", "Changes": "changes"}[section]
			if !strings.Contains(row, "decision") && !rowIn(r, row, want) {
				t.Errorf("row %q is under %s", row, section)
			}
		}
	}
	if !slices.Equal(order, []string{"Widens", "Tightens", "Changes"}) {
		t.Errorf("sections %v", order)
	}
	widensAt := strings.Index(md, "#### Widens")
	for _, w := range []string{"condition removed", "refuse \\[policy\\_condition\\_failed\\] → accept", "risk\\_level 2 → 1"} {
		if i := strings.Index(md, w); i < widensAt || i > strings.Index(md, "#### Tightens") {
			t.Errorf("%q is not in the widenings:\n%s", w, md)
		}
	}
	// Structural changes come before the decisions they cause.
	if strings.Index(md, "| decision |") < strings.Index(md, "| grant |") {
		t.Errorf("a decision before the structural changes:\n%s", md)
	}
}

// rowIn reports whether the markdown row names a change of direction d.
func rowIn(r policydiff.Report, row, d string) bool {
	for _, c := range r.Changes {
		if string(c.Direction) == d && strings.Contains(row, "| "+c.Area+" |") {
			return true
		}
	}
	return false
}

func TestCompareSameIsEmpty(t *testing.T) {
	t.Parallel()
	r := policydiff.Compare(load(t, "a", examples), load(t, "b", examples))
	if len(r.Changes) != 0 || len(r.Decisions) != 0 || r.Widens() || r.Cases == 0 {
		t.Fatalf("%+v", r)
	}
	var b bytes.Buffer
	if err := r.Markdown(&b); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "No widening.") || strings.Contains(b.String(), "####") {
		t.Fatalf("%s", b.String())
	}
}

// TestMarkdownEscapes: policy text is the pull request's own, so it cannot
// break the table or open HTML in the comment.
func TestMarkdownEscapes(t *testing.T) {
	t.Parallel()
	r := policydiff.Report{Old: "a`b", New: "c", Changes: []policydiff.Change{
		{Direction: policydiff.Widens, Area: "grant", Subject: "x | y `z`", What: "<img src=x> | *bold*\nnext"},
	}}
	var b bytes.Buffer
	if err := r.Markdown(&b); err != nil {
		t.Fatal(err)
	}
	md := b.String()
	for _, bad := range []string{"<img", "x | y", "| *bold*", "\nnext", "`z`"} {
		if strings.Contains(md, bad) {
			t.Errorf("%q survived:\n%s", bad, md)
		}
	}
}

// TestComparePolicyToNone: without a POLICY.md gated enforces no grants, so
// a policy appearing tightens as a whole, not grant by grant; and yet the
// decisions show what it widens: a tool whose approval is the policy's
// defers without one.
func TestComparePolicyToNone(t *testing.T) {
	t.Parallel()
	none, err := policy.Load([]string{t.TempDir()}, nil)
	if err != nil {
		t.Fatal(err)
	}
	ex := load(t, "examples", examples)
	bare := policydiff.Side{Label: "none", Policy: none, Catalog: ex.Catalog, Decide: func(ev map[string]any, principals []string, now time.Time) (string, []string) {
		e := gate.New(gate.WithCatalog(func() *catalog.Catalog { return ex.Catalog }, gate.UnknownDefer, catalog.ArgumentsEnforce), gate.WithClock(func() time.Time { return now }))
		d := e.Decide(context.Background(), gate.Request{Event: ev, Principals: principals})
		return d.Route.String(), d.HardBlockers
	}}
	r := policydiff.Compare(bare, ex)
	want := []string{"tightens policy grants: POLICY.md enforced where none was: 10 grants of 3 policies", "tightens module rules/deploy-freeze.rego: added"}
	if got := lines(r)[:len(r.Changes)]; !slices.Equal(got, want) {
		t.Errorf("got %q", got)
	}
	if d := r.Decisions[0]; d.Direction != policydiff.Widens || d.Case != "a release manager deploys on Monday morning" || r.Decisions[1].Direction != policydiff.Tightens {
		t.Errorf("decisions %+v", r.Decisions)
	}
	back := policydiff.Compare(ex, bare)
	if got := lines(back)[:len(back.Changes)]; len(got) != 2 || got[0] != "widens policy grants: no POLICY.md any more: the 10 grants of 3 policies are no longer enforced" {
		t.Errorf("got %q", got)
	}
}

// TestMarkdownCapsRows: a sweeping change still fits in a comment, and says
// how many rows it left out.
func TestMarkdownCapsRows(t *testing.T) {
	t.Parallel()
	var r policydiff.Report
	for i := range policydiff.MarkdownRows + 7 {
		r.Changes = append(r.Changes, policydiff.Change{Direction: policydiff.Widens, Area: "grant", Subject: fmt.Sprint("p", i), What: "granted"})
	}
	var b bytes.Buffer
	if err := r.Markdown(&b); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(b.String(), "| grant |"); n != policydiff.MarkdownRows || !strings.Contains(b.String(), "…and 7 more") || !strings.Contains(b.String(), "#### Widens (107)") {
		t.Fatalf("%d rows:\n%s", n, b.String())
	}
}

// TestCompareDuplicateEntries: a policy may hold several limits or
// requirements with one kind, period and actions, and each applies, so
// dropping the strictest of them widens though an equal one remains.
func TestCompareDuplicateEntries(t *testing.T) {
	t.Parallel()
	files := exampleTree(t)
	edit(t, files, "policy/POLICY.md", `  - { kind: "rate-tool-calls", value: 100,`,
		`  - { kind: "rate-tool-calls", value: 5, per: "minute", applies_to: ["messaging:send-email"] }
  - { kind: "rate-tool-calls", value: 100,`)
	edit(t, files, "policy/POLICY.md", `requirements:
`, `requirements:
  - kind: "approval-from"
    count: 3
    applies_to: ["billing:refund"]
`)
	both := testtree.Write(t, t.TempDir(), files)
	old, new := load(t, "old", both), load(t, "new", examples)
	r := policydiff.Compare(old, new)
	want := []string{
		"widens requirement approval-from on billing:refund in @gated/support-baseline: one of 2 removed: within_seconds 0, count 3",
		"widens limit rate-tool-calls per minute on messaging:send-email in @gated/support-baseline: one of 2 removed: 5",
	}
	if got := lines(r)[:len(r.Changes)]; !slices.Equal(got, want) {
		t.Errorf("got %q", got)
	}
	if !r.Widens() {
		t.Error("dropping the stricter duplicate does not widen")
	}
	back := policydiff.Compare(new, old)
	want = []string{
		"tightens requirement approval-from on billing:refund in @gated/support-baseline: one more added: within_seconds 0, count 3",
		"tightens limit rate-tool-calls per minute on messaging:send-email in @gated/support-baseline: one more added: 5",
	}
	if got := lines(back)[:len(back.Changes)]; !slices.Equal(got, want) {
		t.Errorf("reversed, got %q", got)
	}
	if same := policydiff.Compare(old, load(t, "again", both)); len(same.Changes) != 0 {
		t.Errorf("the same duplicates differ: %q", lines(same))
	}
}

// TestCompareRulesSharingACode: a tool's argument rules that share a code
// each apply, so dropping one of them widens.
func TestCompareRulesSharingACode(t *testing.T) {
	t.Parallel()
	files := exampleTree(t)
	edit(t, files, "catalog/tools/devops/git-commit/TOOL.md", "    aliases: [git_commit]\n",
		"    aliases: [git_commit]\n    rules:\n      - {code: no_wip_commits, pointer: /message, regex: ['^wip'], route: refuse}\n      - {code: no_wip_commits, pointer: /message, regex: ['^tmp'], route: refuse}\n")
	both := testtree.Write(t, t.TempDir(), files)
	edit(t, files, "catalog/tools/devops/git-commit/TOOL.md", "      - {code: no_wip_commits, pointer: /message, regex: ['^wip'], route: refuse}\n", "")
	one := testtree.Write(t, t.TempDir(), files)
	r := policydiff.Compare(load(t, "old", both), load(t, "new", one))
	got := lines(r)[:len(r.Changes)]
	if len(got) != 1 || !strings.HasPrefix(got[0], "widens rule devops.git-commit no_wip_commits: one of 2 with this code removed: ") || !strings.Contains(got[0], "^wip") {
		t.Errorf("got %q", got)
	}
	back := policydiff.Compare(load(t, "new", one), load(t, "old", both))
	if got := lines(back)[:len(back.Changes)]; len(got) != 1 || !strings.HasPrefix(got[0], "tightens rule devops.git-commit no_wip_commits: one more with this code added: ") {
		t.Errorf("reversed, got %q", got)
	}
}

// TestCompareGrantWindows: a grant's TTL and granted_at are compared as
// the window in which it is valid, from start to end. Valid at any
// instant it was not widens, though it loses others; fewer instants only
// tightens.
func TestCompareGrantWindows(t *testing.T) {
	t.Parallel()
	const examplesWindow = "    ttl_seconds: 604800\n    granted_at: \"2026-04-30T00:00:00Z\"\n"
	for _, c := range []struct {
		name, old, new, want string
	}{
		{"granted_at added to a lone TTL", "    ttl_seconds: 604800\n", examplesWindow,
			"widens: ttl_seconds 604800 without granted_at: never valid → valid from 2026-04-30T00:00:00Z until 2026-05-07T00:00:00Z"},
		{"granted_at removed", examplesWindow, "    ttl_seconds: 604800\n",
			"tightens: valid from 2026-04-30T00:00:00Z until 2026-05-07T00:00:00Z → ttl_seconds 604800 without granted_at: never valid"},
		{"earlier start and earlier end", "    ttl_seconds: 604800\n    granted_at: \"2030-01-01T00:00:00Z\"\n", "    ttl_seconds: 86400\n    granted_at: \"2026-11-01T00:00:00Z\"\n",
			"widens: valid from 2030-01-01T00:00:00Z until 2030-01-08T00:00:00Z → valid from 2026-11-01T00:00:00Z until 2026-11-02T00:00:00Z (valid at instants it was not, and no longer at others)"},
		{"later start, same TTL", examplesWindow, "    ttl_seconds: 604800\n    granted_at: \"2026-05-01T00:00:00Z\"\n",
			"widens: valid from 2026-04-30T00:00:00Z until 2026-05-07T00:00:00Z → valid from 2026-05-01T00:00:00Z until 2026-05-08T00:00:00Z (valid at instants it was not, and no longer at others)"},
		{"shorter TTL", examplesWindow, "    ttl_seconds: 86400\n    granted_at: \"2026-04-30T00:00:00Z\"\n",
			"tightens: valid from 2026-04-30T00:00:00Z until 2026-05-07T00:00:00Z → valid from 2026-04-30T00:00:00Z until 2026-05-01T00:00:00Z"},
		{"longer TTL", examplesWindow, "    ttl_seconds: 1209600\n    granted_at: \"2026-04-30T00:00:00Z\"\n",
			"widens: valid from 2026-04-30T00:00:00Z until 2026-05-07T00:00:00Z → valid from 2026-04-30T00:00:00Z until 2026-05-14T00:00:00Z"},
		{"TTL removed", examplesWindow, "",
			"widens: valid from 2026-04-30T00:00:00Z until 2026-05-07T00:00:00Z → always valid"},
		{"a lone TTL, longer: still never valid", "    ttl_seconds: 100\n", "    ttl_seconds: 200\n",
			"changes: ttl_seconds 100 without granted_at: never valid → ttl_seconds 200 without granted_at: never valid"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			side := func(window string) policydiff.Side {
				files := exampleTree(t)
				edit(t, files, "policy/devops.POLICY.md", examplesWindow, window)
				return load(t, c.name, testtree.Write(t, t.TempDir(), files))
			}
			r := policydiff.Compare(side(c.old), side(c.new))
			var got []string
			for _, ch := range r.Changes {
				got = append(got, string(ch.Direction)+": "+ch.What)
			}
			if len(got) != 1 || got[0] != c.want {
				t.Errorf("got %q\nwant %q", got, c.want)
			}
			if w := strings.HasPrefix(c.want, "widens"); r.Widens() != w {
				t.Errorf("Widens %t, want %t", r.Widens(), w)
			}
		})
	}
}

// TestCompareModuleEdits: a custom module only adds findings, so one
// added tightens and one removed widens; an edit gated cannot order, yet
// it may remove a finding no test case exercises, so it counts as a
// widening even when no decision changes.
func TestCompareModuleEdits(t *testing.T) {
	t.Parallel()
	const module = "policy/rules/deploy-freeze.rego"
	files := exampleTree(t)
	edit(t, files, module, "package", "# edited\npackage")
	edited := testtree.Write(t, t.TempDir(), files)
	files = exampleTree(t)
	delete(files, module)
	without := testtree.Write(t, t.TempDir(), files)
	ex := load(t, "examples", examples)

	r := policydiff.Compare(ex, load(t, "edited", edited))
	if len(r.Changes) != 1 || r.Changes[0].Direction != policydiff.Changes || len(r.Decisions) != 0 || !r.Widens() {
		t.Errorf("edited: %q, Widens %t", lines(r), r.Widens())
	}
	var b bytes.Buffer
	if err := r.Markdown(&b); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "⚠️ **This change edits a custom module, which may widen") {
		t.Errorf("no verdict:\n%s", b.String())
	}
	if r := policydiff.Compare(load(t, "without", without), ex); r.Widens() || r.Changes[0].Direction != policydiff.Tightens {
		t.Errorf("added: %q, Widens %t", lines(r), r.Widens())
	}
	if r := policydiff.Compare(ex, load(t, "without", without)); !r.Widens() || r.Changes[0].Direction != policydiff.Widens {
		t.Errorf("removed: %q, Widens %t", lines(r), r.Widens())
	}
}

// TestCompareModulesSharingAPath: a policy read from several folders may
// hold two modules at one path, each applying; dropping one widens though
// the other remains.
func TestCompareModulesSharingAPath(t *testing.T) {
	t.Parallel()
	cat, err := catalog.Load([]string{filepath.Join(examples, "catalog")})
	if err != nil {
		t.Fatal(err)
	}
	extra := testtree.Write(t, t.TempDir(), map[string]string{"rules/deploy-freeze.rego": `package gated.custom.extra

findings contains {"code": "extra_freeze", "route": "defer", "blocking": true, "message": "frozen"} if input.action_id == "deploy:staging"
`})
	files := exampleTree(t)
	delete(files, "policy/rules/deploy-freeze.rego")
	bare := filepath.Join(testtree.Write(t, t.TempDir(), files), "policy")
	side := func(dirs ...string) policydiff.Side {
		pol, err := policy.Load(dirs, cat)
		if err != nil {
			t.Fatal(err)
		}
		return policydiff.Side{Label: "side", Catalog: cat, Policy: pol}
	}
	both, one := side(filepath.Join(examples, "policy"), extra), side(bare, extra)
	r := policydiff.Compare(both, one)
	if got := lines(r); len(got) != 1 || !strings.HasPrefix(got[0], "widens module rules/deploy-freeze.rego: one of 2 at this path removed or edited") || !r.Widens() {
		t.Errorf("got %q", got)
	}
	back := policydiff.Compare(one, both)
	if got := lines(back); len(got) != 1 || !strings.HasPrefix(got[0], "tightens module rules/deploy-freeze.rego: one more at this path added") || back.Widens() {
		t.Errorf("reversed, got %q", got)
	}
}

// TestCompareDuplicateGrants: a principal granted one action twice in a
// policy keeps both entries apart (#2), so a second, unconditional entry
// beside a conditional one widens, and is not lost behind it.
func TestCompareDuplicateGrants(t *testing.T) {
	t.Parallel()
	files := exampleTree(t)
	edit(t, files, "policy/POLICY.md", "  # The old helper bot", `  - principal: "group://support-leads"
    actions:
      - { action: "billing:refund" }

  # The old helper bot`)
	r := policydiff.Compare(load(t, "old", examples), load(t, "new", testtree.Write(t, t.TempDir(), files)))
	want := "widens grant group://support-leads → billing:refund in @gated/support-baseline #2: granted"
	if got := lines(r); len(got) == 0 || got[0] != want || !r.Widens() {
		t.Errorf("got %q, want %q first", got, want)
	}
}
