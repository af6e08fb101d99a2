package grafana

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/gatedhq/gated/internal/metrics"
	"github.com/gatedhq/gated/internal/metrics/metricstest"
)

const dashboardFile = "gated-dashboard.json"

func loadDashboard(t *testing.T) Dashboard {
	t.Helper()
	d, err := LoadDashboard(dashboardFile)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// exportedNames scrapes the metric names gated exports. With
// GATED_METRICS_URL set it scrapes that endpoint (a real gated after real
// traffic); otherwise it scrapes a registry on which every metrics method has
// been exercised.
func exportedNames(t *testing.T) map[string]bool {
	t.Helper()
	url := os.Getenv("GATED_METRICS_URL")
	if url == "" {
		m := metrics.New("test")
		metricstest.Exercise(m)
		srv := httptest.NewServer(m.Handler())
		t.Cleanup(srv.Close)
		url = srv.URL
	}
	resp, err := http.Get(url)
	if err != nil {
		t.Fatalf("scrape %s: %v", url, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("scrape %s: status %d", url, resp.StatusCode)
	}
	names, err := ScrapeNames(resp.Body)
	if err != nil {
		t.Fatalf("scrape %s: %v", url, err)
	}
	return names
}

func TestDashboardUsesOnlyExportedMetrics(t *testing.T) {
	t.Parallel()
	qs, err := loadDashboard(t).Queries()
	if err != nil {
		t.Fatal(err)
	}
	exported := exportedNames(t)
	used := 0
	for _, q := range qs {
		used += len(MetricNames(q))
	}
	if used == 0 {
		t.Fatal("no metric names found in the dashboard's queries")
	}
	if missing := Unexported(qs, exported); len(missing) > 0 {
		t.Errorf("the dashboard queries metrics gated does not export: %v", missing)
	}
}

func TestUnexportedCatchesUnknownNames(t *testing.T) {
	t.Parallel()
	exported := map[string]bool{"gated_decisions_total": true}
	got := Unexported([]string{
		`sum(rate(gated_decisions_total[5m])) / sum(rate(gated_decision_total[5m]))`,
	}, exported)
	if !slices.Equal(got, []string{"gated_decision_total"}) {
		t.Errorf("unexported = %v, want [gated_decision_total]", got)
	}
}

func TestMetricNames(t *testing.T) {
	t.Parallel()
	cases := []struct {
		expr string
		want []string
	}{
		{`sum by (route) (rate(gated_decisions_total{job=~"$job", route!="accept"}[$__rate_interval]))`, []string{"gated_decisions_total"}},
		{`histogram_quantile(0.99, sum by (le) (rate(gated_decision_duration_seconds_bucket[5m])))`, []string{"gated_decision_duration_seconds_bucket"}},
		{`sum(a_total) without (instance) / on(job) group_left(version) b_info offset 1h > bool 0.5`, []string{"a_total", "b_info"}},
		{`topk(10, sum(increase(x_total{tool="other_total"}[1h]))) or vector(0)`, []string{"x_total"}},
		{`up{job='a b'} unless c:recorded:rate5m and d 1e-05`, []string{"up", "c:recorded:rate5m", "d"}},
		{`vector(1)`, nil},
	}
	for _, c := range cases {
		if got := MetricNames(c.expr); !slices.Equal(got, c.want) {
			t.Errorf("MetricNames(%q) = %v, want %v", c.expr, got, c.want)
		}
	}
}

func TestScrapeNamesExpandsHistograms(t *testing.T) {
	t.Parallel()
	names, err := ScrapeNames(strings.NewReader(`# TYPE h histogram
h_bucket{le="1"} 1
h_bucket{le="+Inf"} 1
h_sum 0.5
h_count 1
# TYPE c_total counter
c_total 3
`))
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"h_bucket", "h_sum", "h_count", "c_total"} {
		if !names[n] {
			t.Errorf("scrapeNames lacks %s", n)
		}
	}
	if names["h"] {
		t.Error("a classic histogram has no bare series")
	}
	if _, err := ScrapeNames(strings.NewReader("not { an exposition")); err == nil {
		t.Error("scrapeNames accepted malformed input")
	}
}

// Grafana 10+ import: a Prometheus datasource variable every panel and query
// uses, unique panel ids, a query on every non-row panel.
func TestDashboardIsImportable(t *testing.T) {
	t.Parallel()
	d := loadDashboard(t)
	if d.UID == "" || d.SchemaVersion < 36 {
		t.Errorf("uid %q schemaVersion %d: want a uid and schemaVersion >= 36 (Grafana 10)", d.UID, d.SchemaVersion)
	}
	hasDS := false
	for _, v := range d.Templating.List {
		if v.Name == "datasource" && v.Type == "datasource" && string(v.Query) == `"prometheus"` {
			hasDS = true
		}
	}
	if !hasDS {
		t.Error("no Prometheus datasource variable named datasource")
	}
	ids := map[int]bool{}
	for _, p := range d.Panels {
		if ids[p.ID] {
			t.Errorf("panel %q: duplicate id %d", p.Title, p.ID)
		}
		ids[p.ID] = true
		if p.Type == "row" {
			continue
		}
		if p.Datasource["uid"] != "${datasource}" {
			t.Errorf("panel %q: datasource %v, want the ${datasource} variable", p.Title, p.Datasource)
		}
		if len(p.Targets) == 0 {
			t.Errorf("panel %q has no query", p.Title)
		}
		for _, tg := range p.Targets {
			if tg.Expr == "" || tg.Datasource["uid"] != "${datasource}" {
				t.Errorf("panel %q: target without expr or not on ${datasource}", p.Title)
			}
		}
	}
}

// The chart ships a copy of the dashboard (Helm warns about, and some tools
// refuse, a symlink in a chart): the copy must be the dashboard itself.
func TestChartCarriesTheDashboard(t *testing.T) {
	t.Parallel()
	want, err := os.ReadFile("gated-dashboard.json")
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile("../helm/gated/dashboards/gated-dashboard.json")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatal("deploy/helm/gated/dashboards/gated-dashboard.json differs from deploy/grafana/gated-dashboard.json: copy it again")
	}
}
