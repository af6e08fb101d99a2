package main

import (
	"bytes"
	"context"
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
