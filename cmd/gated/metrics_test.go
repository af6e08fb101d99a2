package main

import (
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/gatedhq/gated/deploy/grafana"
)

// TestDashboardAndAlertsMatchRealMetrics starts gated as an operator would,
// sends it real traffic, scrapes its /metrics, and fails on any metric the
// Grafana dashboard or the documented alerts query that gated does not export.
func TestDashboardAndAlertsMatchRealMetrics(t *testing.T) {
	t.Parallel()
	// With a candidate policy (the live one again): the dashboard's
	// candidate panel reads a family only a gated with one exports.
	base, _ := startServe(t, []string{"--catalog", "../../examples/catalog", "--policy", "../../examples/policy", "--candidate", "../../examples/policy"}, nil)
	events, err := filepath.Glob("../../examples/events/*.json")
	if err != nil || len(events) == 0 {
		t.Fatalf("no example events: %v", err)
	}
	for _, f := range events {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if code, _ := post(t, base+"/pre-tool-check", string(b), nil); code != http.StatusOK {
			t.Fatalf("%s: status %d", f, code)
		}
	}
	post(t, base+"/pre-tool-check", "not json", nil)
	if code, _ := get(t, base+"/v1/catalog", nil); code != http.StatusOK {
		t.Fatalf("catalog: status %d", code)
	}

	resp, err := http.Get(base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	exported, err := grafana.ScrapeNames(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if !exported["gated_decisions_total"] {
		t.Fatal("gated_decisions_total missing after traffic: the check would prove nothing")
	}
	d, err := grafana.LoadDashboard("../../deploy/grafana/gated-dashboard.json")
	if err != nil {
		t.Fatal(err)
	}
	queries, err := d.Queries()
	if err != nil {
		t.Fatal(err)
	}
	alerts, err := grafana.AlertExprs("../../docs/operations.md")
	if err != nil {
		t.Fatal(err)
	}
	if len(queries) == 0 || len(alerts) == 0 {
		t.Fatalf("%d dashboard queries, %d alerts: nothing to check", len(queries), len(alerts))
	}
	if missing := grafana.Unexported(queries, exported); len(missing) > 0 {
		t.Errorf("the dashboard queries metrics a running gated does not export: %v", missing)
	}
	if missing := grafana.Unexported(alerts, exported); len(missing) > 0 {
		t.Errorf("the documented alerts query metrics a running gated does not export: %v", missing)
	}
}
