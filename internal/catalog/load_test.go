package catalog

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gatedhq/gated/internal/route"
	"github.com/gatedhq/gated/internal/testtree"
)

const examples = "../../examples/catalog"

func TestExampleCatalogResolvesEveryFormat(t *testing.T) {
	t.Parallel()
	c := mustLoad(t, examples)
	tests := []struct {
		name       string // an event's tool_name
		tool       string
		action     string
		risk       int
		approval   string
		mutates    []string
		category   route.Category
		format     string
		never      bool
		inputCheck bool
	}{
		// TOOL.md, bare id, tightens approval and adds mutates.
		{"send_email", "support.send-email", "messaging:send-email", 2, "always", []string{"database:tickets", "external:email"}, route.Write, FormatToolMD, false, true},
		// TOOL.md, registry ref.
		{"get_customer_profile", "support.lookup-customer", "crm:read-customer", 0, "auto", []string{}, route.PrivateRead, FormatToolMD, false, true},
		// TOOL.md, {file: dir} ref.
		{"issue_refund", "support.issue-refund", "billing:refund", 3, "always", []string{"database:refunds", "external:payments"}, route.Write, FormatToolMD, false, true},
		// TOOL.md, path to the ACTION.md.
		{"support.update-ticket", "support.update-ticket", "tickets:update", 1, "auto", []string{"database:tickets"}, route.Write, FormatToolMD, false, true},
		// TOOL.md, raises the standard action's risk_level (already 2), keeps on-mutate.
		{"run_shell", "devops.run-command", "sandbox:execute", 2, "on-mutate", []string{"sandbox:*"}, route.Write, FormatToolMD, false, true},
		{"deploy_service", "devops.deploy", "deploy:production", 2, "policy:production-deploys", []string{"external:production"}, route.Write, FormatToolMD, false, true},
		// Orphan TOOL.md.
		{"get_service_status", "devops.service-status", "", 0, "auto", []string{}, route.PrivateRead, FormatToolMD, false, true},
		// ACTIONS.yaml by name and by owner/skill/name.
		{"search_kb", "acme/knowledge-base/search_kb", "acme/knowledge-base/search_kb", 0, "auto", []string{}, route.PrivateRead, FormatActionsYAML, false, true},
		{"acme/knowledge-base/publish_article", "acme/knowledge-base/publish_article", "acme/knowledge-base/publish_article", 2, "auto", []string{"external:*"}, route.Write, FormatActionsYAML, false, true},
		{"delete_article", "acme/knowledge-base/delete_article", "acme/knowledge-base/delete_article", 3, "auto", []string{"external:*"}, route.Write, FormatActionsYAML, false, true},
		// action.json tiers.
		{"diagnose_error", "diagnose_error", "diagnose_error", 1, "auto", []string{}, route.Write, FormatActionJSON, false, true},
		{"restart_service", "restart_service", "restart_service", 2, "auto", []string{}, route.Write, FormatActionJSON, false, true},
		{"scale_cluster", "scale_cluster", "scale_cluster", 2, "always", []string{}, route.Write, FormatActionJSON, false, true},
		{"drop_database", "drop_database", "drop_database", 3, "always", []string{}, route.Write, FormatActionJSON, true, true},
		{"legacy_cleanup", "legacy_cleanup", "legacy_cleanup", 3, "always", []string{}, route.Write, FormatActionJSON, true, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, ok := c.Lookup(tt.name)
			if !ok {
				t.Fatalf("Lookup(%q) found nothing", tt.name)
			}
			if v.ToolID != tt.tool || v.ActionID != tt.action || v.RiskLevel != tt.risk || v.Approval != tt.approval ||
				!slices.Equal(v.Mutates, tt.mutates) || v.Format != tt.format || v.NeverExecute != tt.never || v.InputSchema != tt.inputCheck {
				t.Errorf("view = %+v\nwant tool %s action %s risk %d approval %s mutates %v format %s never %v",
					*v, tt.tool, tt.action, tt.risk, tt.approval, tt.mutates, tt.format, tt.never)
			}
			if got := v.Category(); got != tt.category {
				t.Errorf("Category = %s, want %s", got, tt.category)
			}
		})
	}
	if _, ok := c.Lookup("SEND_EMAIL"); ok {
		t.Error("Lookup matched a name case-insensitively")
	}
	if _, ok := c.Lookup("storage:commit"); ok {
		t.Error("an ACTION.md id matched as a tool name; only tools are callable")
	}
}

func TestExampleCatalogInheritsRequiresAndEvents(t *testing.T) {
	t.Parallel()
	c := mustLoad(t, examples)
	v, _ := c.Lookup("send_email")
	if !slices.Equal(v.Requires, []string{"secrets:smtp-relay"}) || !slices.Equal(v.FiresEvents, []string{"message-sent"}) {
		t.Errorf("send_email requires %v fires %v, want the action's", v.Requires, v.FiresEvents)
	}
	v, _ = c.Lookup("rotate_api_key")
	if !slices.Equal(v.FiresEvents, []string{"manual", "secret-rotated"}) || !slices.Equal(v.Requires, []string{"network:*"}) {
		t.Errorf("rotate_api_key requires %v fires %v", v.Requires, v.FiresEvents)
	}
	if v.Version != "1.0.0" || v.ActionVersion != "1.0.0" || v.Source != "tools/devops/rotate-key/TOOL.md" {
		t.Errorf("rotate_api_key version %q action version %q source %q", v.Version, v.ActionVersion, v.Source)
	}
}

func TestResolveActionRef(t *testing.T) {
	t.Parallel()
	c := mustLoad(t, examples)
	tests := []struct {
		ref, want string
		ok        bool
	}{
		{"storage:commit", "storage:commit", true},
		{"@agentproto/actions/standard/storage-commit", "storage:commit", true},
		{"@someone/lib/billing-refund", "billing:refund", true},
		{"restart_service", "restart_service", true},
		{"storage-commit", "", false},
		{"@lib/storage-commit", "", false},
		{"@a//storage-commit", "", false},
		{"@a/b/storage:commit", "", false},
		{"nope:nothing", "", false},
	}
	for _, tt := range tests {
		got, ok := c.ResolveActionRef(tt.ref)
		if got != tt.want || ok != tt.ok {
			t.Errorf("ResolveActionRef(%q) = %q, %v; want %q, %v", tt.ref, got, ok, tt.want, tt.ok)
		}
	}
}

func TestViewsAreSortedAndCounted(t *testing.T) {
	t.Parallel()
	c := mustLoad(t, examples)
	views := c.Views()
	if len(views) != c.Len() || c.Len() != 17 {
		t.Fatalf("Len %d, Views %d; want 17", c.Len(), len(views))
	}
	if !slices.IsSortedFunc(views, func(a, b *View) int { return strings.Compare(a.ToolID, b.ToolID) }) {
		t.Error("Views not sorted by tool id")
	}
	actions := c.Actions()
	if !slices.IsSortedFunc(actions, func(a, b *Action) int { return strings.Compare(a.ID, b.ID) }) {
		t.Error("Actions not sorted by id")
	}
	views[0] = nil
	if c.Views()[0] == nil {
		t.Error("Views exposed the catalog's own slice")
	}
}

func TestRevisionIsAContentHash(t *testing.T) {
	t.Parallel()
	files := map[string]string{
		"a/ACTION.md": action("x:do", "risk_level: 1"),
		"t/TOOL.md":   tool("x.do", "implements: x:do"),
	}
	a := mustLoad(t, testtree.Write(t, t.TempDir(), files))
	b := mustLoad(t, testtree.Write(t, t.TempDir(), files))
	if !strings.HasPrefix(a.Revision(), "sha256:") || a.Revision() != b.Revision() {
		t.Fatalf("identical content: %s vs %s", a.Revision(), b.Revision())
	}
	files["t/TOOL.md"] = tool("x.do", "implements: x:do", "risk_level: 2")
	c := mustLoad(t, testtree.Write(t, t.TempDir(), files))
	if c.Revision() == a.Revision() {
		t.Fatal("changed content kept the revision")
	}
}

func TestDocument(t *testing.T) {
	t.Parallel()
	c := mustLoad(t, examples)
	d := c.Document(nil, time.Time{})
	if d.Revision != c.Revision() || len(d.Tools) != c.Len() || len(d.Actions) == 0 || d.LastReloadError != nil {
		t.Fatalf("document %+v", d)
	}
	b, err := json.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(b, []byte(`"tool_id":"support.send-email"`)) || bytes.Contains(b, []byte("last_reload_error")) {
		t.Fatalf("document JSON %s", b)
	}

	_, loadErr := Load([]string{testtree.Write(t, t.TempDir(), map[string]string{"ACTION.md": "no frontmatter"})})
	at := time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC)
	d = c.Document(loadErr, at)
	if d.LastReloadError == nil || !d.LastReloadError.At.Equal(at) || len(d.LastReloadError.Problems) != 1 ||
		d.LastReloadError.Problems[0].Code != "frontmatter_missing" {
		t.Fatalf("last reload error %+v", d.LastReloadError)
	}
	d = c.Document(errors.New("disk on fire"), at)
	if d.LastReloadError.Message != "disk on fire" || d.LastReloadError.Problems != nil {
		t.Fatalf("plain error %+v", d.LastReloadError)
	}
}

// TestConfigMapLayoutLoadsEachFileOnce: a mounted ConfigMap shows every key
// twice (the symlink and the file in the timestamped directory); only the
// visible symlinks count.
func TestConfigMapLayoutLoadsEachFileOnce(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	testtree.Write(t, dir, map[string]string{
		"..2026_11_20_v1/tools.TOOL.md":  tool("x.tool"),
		"..2026_11_20_v1/x.ACTION.md":    action("x:act"),
		"..2026_11_20_v1/nested/TOOL.md": tool("never.seen"),
	})
	for _, link := range [][2]string{
		{"..2026_11_20_v1", "..data"},
		{filepath.Join("..data", "tools.TOOL.md"), "tools.TOOL.md"},
		{filepath.Join("..data", "x.ACTION.md"), "x.ACTION.md"},
	} {
		if err := os.Symlink(link[0], filepath.Join(dir, link[1])); err != nil {
			t.Fatal(err)
		}
	}
	c := mustLoad(t, dir)
	if c.Len() != 1 || len(c.Actions()) != 1 {
		t.Fatalf("loaded %d tools and %d actions, want 1 and 1", c.Len(), len(c.Actions()))
	}
	if _, ok := c.Lookup("x.tool"); !ok {
		t.Fatal("the symlinked TOOL.md was not loaded")
	}
}

func TestLoadNeedsDirectories(t *testing.T) {
	t.Parallel()
	if _, err := Load(nil); err == nil {
		t.Fatal("Load(nil) succeeded")
	}
}

func TestSeveralDirectoriesFormOneCatalog(t *testing.T) {
	t.Parallel()
	a := testtree.Write(t, t.TempDir(), map[string]string{"ACTION.md": action("x:act", "risk_level: 2")})
	b := testtree.Write(t, t.TempDir(), map[string]string{"TOOL.md": tool("x.tool", "implements: x:act")})
	c := mustLoad(t, a, b)
	v, ok := c.Lookup("x.tool")
	if !ok || v.RiskLevel != 2 {
		t.Fatalf("tool in one directory did not resolve the action in another: %+v", v)
	}
}

// lintDirs loads dirs and lints the result into w.
func lintDirs(w io.Writer, dirs ...string) bool {
	c, err := Load(dirs)
	return Lint(c, err, w)
}

func TestLint(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	if !lintDirs(&out, examples) {
		t.Fatalf("Lint(examples) failed:\n%s", &out)
	}
	if !strings.HasPrefix(out.String(), "catalog ok: 17 tools, ") || strings.Count(out.String(), "\n") != 1 {
		t.Fatalf("summary %q", out.String())
	}

	out.Reset()
	bad := testtree.Write(t, t.TempDir(), map[string]string{
		"a/ACTION.md": action("x:act", "risk_level: 9"),
		"b/TOOL.md":   "---\nname: [\n---\n",
	})
	if lintDirs(&out, bad) {
		t.Fatal("Lint passed an invalid catalog")
	}
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if len(lines) != 2 || !strings.Contains(lines[0], "a/ACTION.md: /risk_level: out_of_range: ") ||
		!strings.Contains(lines[1], "b/TOOL.md: -: yaml_invalid: ") {
		t.Fatalf("lint output:\n%s", &out)
	}

	out.Reset()
	if lintDirs(&out) || !strings.Contains(out.String(), "no directories") {
		t.Fatalf("Lint(nil) output %q", out.String())
	}
}

func TestLoadErrorListsEveryProblemOnItsLine(t *testing.T) {
	t.Parallel()
	e := &LoadError{Problems: []Problem{
		{File: "a", Field: "/id", Code: "invalid_format", Message: "bad\nid"},
		{File: "b", Code: "frontmatter_missing", Message: "none"},
	}}
	want := "2 problems:\na: /id: invalid_format: bad id\nb: -: frontmatter_missing: none"
	if e.Error() != want {
		t.Fatalf("Error() = %q, want %q", e.Error(), want)
	}
}

func TestSymlinkedCatalogDirectory(t *testing.T) {
	t.Parallel()
	real := testtree.Write(t, t.TempDir(), map[string]string{"a/ACTION.md": action("x:act"), "t/TOOL.md": tool("x.tool", "implements: x:act")})
	link := filepath.Join(t.TempDir(), "catalog")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	c := mustLoad(t, link)
	if _, ok := c.Lookup("x.tool"); !ok {
		t.Fatal("a catalog directory given as a symlink was not read")
	}
	if c.Revision() != mustLoad(t, real).Revision() {
		t.Fatal("the symlink and its target gave different revisions")
	}
	testtree.Write(t, real, map[string]string{"b/ACTION.md": "broken"})
	ps := loadProblems(t, link)
	if want := filepath.Join(link, "b", "ACTION.md"); ps[0].File != want {
		t.Fatalf("problem names %s, want the path as given %s", ps[0].File, want)
	}
}

// A TOOL.md's approval_ttl and approvers reach its view: the expiry of its
// approvals and who may decide them.
func TestApprovalMetadata(t *testing.T) {
	t.Parallel()
	dir := testtree.Write(t, t.TempDir(), map[string]string{
		"a/TOOL.md": tool("pay.refund", "metadata: {gated: {approval_ttl: 90m, approvers: [operator://carol, group://finance-leads]}}"),
		"b/TOOL.md": tool("pay.read"),
	})
	c := mustLoad(t, dir)
	v, _ := c.Lookup("pay.refund")
	if v.ApprovalExpiry() != 90*time.Minute || v.ApprovalTTL != "90m" {
		t.Errorf("approval ttl %v (%q), want 90m", v.ApprovalExpiry(), v.ApprovalTTL)
	}
	if want := []string{"group://finance-leads", "operator://carol"}; !slices.Equal(v.Approvers, want) {
		t.Errorf("approvers %v, want %v", v.Approvers, want)
	}
	plain, _ := c.Lookup("pay.read")
	if plain.ApprovalExpiry() != 0 || plain.ApprovalTTL != "" || plain.Approvers != nil {
		t.Errorf("a tool without approval metadata: %v %q %v", plain.ApprovalExpiry(), plain.ApprovalTTL, plain.Approvers)
	}
	if (*View)(nil).ApprovalExpiry() != 0 {
		t.Error("no view has an expiry")
	}
}
