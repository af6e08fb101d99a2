package grafana

import "testing"

const operationsDoc = "../../docs/operations.md"

func TestDocumentedAlertsUseOnlyExportedMetrics(t *testing.T) {
	t.Parallel()
	exprs, err := AlertExprs(operationsDoc)
	if err != nil {
		t.Fatal(err)
	}
	// Refusal spike, audit spooling, reload failing and p99 latency at least.
	if len(exprs) < 4 {
		t.Fatalf("%s holds %d alert rules, want at least 4", operationsDoc, len(exprs))
	}
	if missing := Unexported(exprs, exportedNames(t)); len(missing) > 0 {
		t.Errorf("documented alerts query metrics gated does not export: %v", missing)
	}
}
