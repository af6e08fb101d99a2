package grafana

import (
	"os"
	"regexp"
	"testing"

	"go.yaml.in/yaml/v3"
)

// The example alerts in docs/operations.md are as easy to break by a metric
// rename as the dashboard, so they get the same check.
const operationsDoc = "../../docs/operations.md"

var yamlBlock = regexp.MustCompile("(?s)```yaml\n(groups:.*?)```")

func alertExprs(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile(operationsDoc)
	if err != nil {
		t.Fatalf("read %s: %v", operationsDoc, err)
	}
	var exprs []string
	for _, m := range yamlBlock.FindAllSubmatch(b, -1) {
		var doc struct {
			Groups []struct {
				Rules []struct {
					Alert string `yaml:"alert"`
					Expr  string `yaml:"expr"`
				} `yaml:"rules"`
			} `yaml:"groups"`
		}
		if err := yaml.Unmarshal(m[1], &doc); err != nil {
			t.Fatalf("%s: alert rules: %v", operationsDoc, err)
		}
		for _, g := range doc.Groups {
			for _, r := range g.Rules {
				if r.Alert == "" || r.Expr == "" {
					t.Errorf("%s: a rule without alert name or expr", operationsDoc)
				}
				exprs = append(exprs, r.Expr)
			}
		}
	}
	return exprs
}

func TestDocumentedAlertsUseOnlyExportedMetrics(t *testing.T) {
	exprs := alertExprs(t)
	// Refusal spike, audit spooling, reload failing and p99 latency at least.
	if len(exprs) < 4 {
		t.Fatalf("%s holds %d alert rules, want at least 4", operationsDoc, len(exprs))
	}
	if missing := unexported(exprs, exportedNames(t)); len(missing) > 0 {
		t.Errorf("documented alerts query metrics gated does not export: %v", missing)
	}
}
