package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/gatedhq/gated/internal/auth"
)

const examplesDir = "../../examples"

// mdTable returns the rows of the first Markdown table in md whose header's
// first cell is first, each row keyed by the header's cells. Backticks and
// link targets are stripped from the cells.
func mdTable(t *testing.T, md, first string) []map[string]string {
	t.Helper()
	var header []string
	var rows []map[string]string
	for _, line := range strings.Split(md, "\n") {
		line = strings.TrimSpace(line)
		if !strings.HasPrefix(line, "|") {
			if header != nil {
				break
			}
			continue
		}
		cells := strings.Split(strings.Trim(line, "|"), "|")
		for i, c := range cells {
			c = strings.TrimSpace(c)
			if j := strings.Index(c, "]("); j >= 0 && strings.HasPrefix(c, "[") {
				c = c[1:j]
			}
			cells[i] = strings.Trim(c, "`")
		}
		switch {
		case header == nil && cells[0] == first:
			header = cells
		case header == nil || strings.HasPrefix(cells[0], "---"):
		default:
			if len(cells) != len(header) {
				t.Fatalf("table %q: row %q has %d cells, want %d", first, line, len(cells), len(header))
			}
			row := map[string]string{}
			for i, h := range header {
				row[h] = cells[i]
			}
			rows = append(rows, row)
		}
	}
	if len(rows) == 0 {
		t.Fatalf("no table with first column %q in examples/README.md", first)
	}
	return rows
}

// TestExamplesTour runs examples/README.md's tour: a real gated serve with
// the example catalog, policy and tokens, each tour event posted with its
// token, and the route (and explaining blocker) the README's table promises.
func TestExamplesTour(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile(filepath.Join(examplesDir, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	readme := string(raw)

	// The tokens table documents tokens.yaml exactly: same names, the
	// plaintext hashes to the configured sha256, same principals.
	var file []auth.Token
	raw, err = os.ReadFile(filepath.Join(examplesDir, "tokens.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(raw, &file); err != nil {
		t.Fatal(err)
	}
	if _, err := auth.Parse(raw); err != nil {
		t.Fatal(err)
	}
	documented := map[string]map[string]string{}
	for _, row := range mdTable(t, readme, "name") {
		documented[row["name"]] = row
	}
	if len(documented) != len(file) {
		t.Errorf("examples/README.md documents %d tokens, tokens.yaml has %d", len(documented), len(file))
	}
	for _, tok := range file {
		row, ok := documented[tok.Name]
		switch {
		case !ok:
			t.Errorf("token %s is not in examples/README.md", tok.Name)
		case auth.Hash(row["token"]) != tok.SHA256:
			t.Errorf("token %s: the README's %q does not hash to tokens.yaml's sha256", tok.Name, row["token"])
		case row["principals"] != strings.Join(tok.Principals, ", "):
			t.Errorf("token %s: README principals %q, tokens.yaml %v", tok.Name, row["principals"], tok.Principals)
		}
	}

	base, _ := startServe(t, []string{
		"--catalog", filepath.Join(examplesDir, "catalog"),
		"--policy", filepath.Join(examplesDir, "policy"),
		"--tokens", filepath.Join(examplesDir, "tokens.yaml"),
	}, nil)

	tour := mdTable(t, readme, "event")
	var routes, files []string
	for _, row := range tour {
		name := filepath.Base(row["event"])
		files = append(files, name)
		routes = append(routes, row["route"])
		t.Run(strings.TrimSuffix(name, ".json"), func(t *testing.T) {
			body, err := os.ReadFile(filepath.Join(examplesDir, "events", "tour", name))
			if err != nil {
				t.Fatal(err)
			}
			status, d := post(t, base+"/v1/pre-tool-check", string(body), map[string]string{"Authorization": "Bearer " + row["token"]})
			if status != 200 {
				t.Fatalf("status %d: %v", status, d)
			}
			var blockers []string
			for _, b := range d["hard_blockers"].([]any) {
				blockers = append(blockers, b.(string))
			}
			if d["route"] != row["route"] {
				t.Errorf("route %v, README says %s (blockers %v)", d["route"], row["route"], blockers)
			}
			if want := row["blocker"]; want != "–" && !slices.Contains(blockers, want) {
				t.Errorf("hard_blockers %v lack %s, which the README names", blockers, want)
			}
		})
	}
	for _, r := range []string{"accept", "ask", "defer", "refuse"} {
		if !slices.Contains(routes, r) {
			t.Errorf("the tour reaches no %s", r)
		}
	}
	// Every tour event is in the table.
	onDisk, err := filepath.Glob(filepath.Join(examplesDir, "events", "tour", "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range onDisk {
		if !slices.Contains(files, filepath.Base(p)) {
			t.Errorf("%s is not in examples/README.md's tour table", p)
		}
	}
}

// TestExamplePolicyTestsNameTheirCatalog: policy_test.yaml's `catalog:` key
// lets `gated policy test examples/policy` run without --catalog, and
// --catalog still takes precedence over it.
func TestExamplePolicyTestsNameTheirCatalog(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	err := run(context.Background(), []string{"gated", "policy", "test", filepath.Join(examplesDir, "policy")}, env(nil), nil, &out, io.Discard)
	if err != nil || !strings.Contains(out.String(), " passed, 0 failed") {
		t.Fatalf("without --catalog: %v\n%s", err, out.String())
	}
	// An empty --catalog wins over the file's: the uncatalogued tools
	// change the decisions, so cases fail.
	out.Reset()
	err = run(context.Background(), []string{"gated", "policy", "test", "--catalog", t.TempDir(), filepath.Join(examplesDir, "policy")}, env(nil), nil, &out, io.Discard)
	if exitCode(err) != 1 || strings.Contains(out.String(), " 0 failed") {
		t.Fatalf("--catalog did not take precedence: %v\n%s", err, out.String())
	}
}

// TestExamplePolicyCoverage: `gated policy test --coverage` on the
// examples lists what their cases leave unexercised (the weekend half of
// the deploy freeze, the floors, which clean events never meet), writes
// the JSON report, and fails below --coverage-min with a message.
func TestExamplePolicyCoverage(t *testing.T) {
	t.Parallel()
	report := filepath.Join(t.TempDir(), "coverage.json")
	policyDir := filepath.Join(examplesDir, "policy")
	var out bytes.Buffer
	err := run(context.Background(), []string{"gated", "policy", "test", "--coverage", "--coverage-json", report, "--coverage-min", "30", policyDir}, env(nil), nil, &out, io.Discard)
	if err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	text := out.String()
	for _, want := range []string{
		" passed, 0 failed\ncoverage: 9 of 30 items exercised (30.0%)\n",
		"  grants          7 of 7\n  argument rules  0 of 0\n  floors          0 of 20\n  custom rules    2 of 3\n",
		"  custom rule   " + filepath.Join(policyDir, "rules", "deploy-freeze.rego") + ":15: gated.custom.deploys.frozen\n",
		"  floor         tools/devops/deploy/TOOL.md: tool devops.deploy risk_level_requires_confirmation\n",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("output lacks %q:\n%s", want, text)
		}
	}
	// Exercised items are not listed: the grants, the Friday rule.
	if strings.Contains(text, "  grant ") || strings.Contains(text, "deploy-freeze.rego:17") {
		t.Errorf("an exercised item is listed:\n%s", text)
	}
	b, err := os.ReadFile(report)
	if err != nil {
		t.Fatal(err)
	}
	var rep struct {
		Total, Exercised int
		Percent          float64
		Items            []struct {
			Kind      string
			Exercised bool
		}
	}
	if err := json.Unmarshal(b, &rep); err != nil || rep.Total != 30 || rep.Exercised != 9 || rep.Percent != 30 || len(rep.Items) != 30 {
		t.Fatalf("report %+v, %v:\n%s", rep, err, b)
	}

	// Below the threshold: exit 1, saying so; the JSON alone prints no text.
	out.Reset()
	err = run(context.Background(), []string{"gated", "policy", "test", "--coverage-json", report, "--coverage-min", "30.1", policyDir}, env(nil), nil, &out, io.Discard)
	var ex exitError
	if !errors.As(err, &ex) || ex.code != 1 || ex.msg != "coverage 30.0% (9 of 30 items exercised) is below --coverage-min 30.1%" {
		t.Fatalf("below the threshold: %v", err)
	}
	if strings.Contains(out.String(), "coverage:") {
		t.Errorf("text report without --coverage:\n%s", out.String())
	}
	for _, bad := range []string{"-1", "101", "NaN", "most"} {
		if got := exitCode(run(context.Background(), []string{"gated", "policy", "test", "--coverage-min", bad, policyDir}, env(nil), nil, io.Discard, io.Discard)); got != exitUsage {
			t.Errorf("--coverage-min %s: exit %d, want %d", bad, got, exitUsage)
		}
	}
	// The flags are test's only.
	if got := exitCode(run(context.Background(), []string{"gated", "policy", "lint", "--coverage", policyDir}, env(nil), nil, io.Discard, io.Discard)); got != exitUsage {
		t.Errorf("policy lint --coverage: exit %d, want %d", got, exitUsage)
	}
}
