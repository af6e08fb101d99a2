// Package grafana checks the Grafana dashboard against what gated exports:
// a panel that queries a metric gated does not expose shows "No data" forever,
// and nobody notices until the page that should have fired doesn't.
package grafana

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/gatedhq/gated/internal/metrics"
	"github.com/gatedhq/gated/internal/metrics/metricstest"
)

const dashboardFile = "gated-dashboard.json"

// dashboard is the part of Grafana's dashboard model the checks read.
type dashboard struct {
	UID           string `json:"uid"`
	SchemaVersion int    `json:"schemaVersion"`
	Templating    struct {
		List []struct {
			Name  string          `json:"name"`
			Type  string          `json:"type"`
			Query json.RawMessage `json:"query"`
		} `json:"list"`
	} `json:"templating"`
	Panels []panel `json:"panels"`
}

type panel struct {
	ID         int               `json:"id"`
	Type       string            `json:"type"`
	Title      string            `json:"title"`
	Datasource map[string]string `json:"datasource"`
	Targets    []struct {
		Expr       string            `json:"expr"`
		Datasource map[string]string `json:"datasource"`
	} `json:"targets"`
}

func loadDashboard(t *testing.T) dashboard {
	t.Helper()
	b, err := os.ReadFile(dashboardFile)
	if err != nil {
		t.Fatalf("read dashboard: %v", err)
	}
	var d dashboard
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatalf("decode %s: %v", dashboardFile, err)
	}
	return d
}

// queries lists every PromQL expression in the dashboard: panel targets and
// the inner series selector of label_values() template queries.
func (d dashboard) queries() ([]string, error) {
	var qs []string
	for _, v := range d.Templating.List {
		if v.Type != "query" {
			continue
		}
		var q struct {
			Query string `json:"query"`
		}
		if err := json.Unmarshal(v.Query, &q); err != nil {
			return nil, fmt.Errorf("variable %s: query: %w", v.Name, err)
		}
		m := labelValues.FindStringSubmatch(q.Query)
		if m == nil {
			return nil, fmt.Errorf("variable %s: want label_values(<selector>, <label>), got %q", v.Name, q.Query)
		}
		qs = append(qs, m[1])
	}
	for _, p := range d.Panels {
		for _, tg := range p.Targets {
			qs = append(qs, tg.Expr)
		}
	}
	return qs, nil
}

var labelValues = regexp.MustCompile(`^label_values\((.+),\s*[a-zA-Z_][a-zA-Z0-9_]*\)$`)

// PromQL lexing, just enough to find metric names: strings, label matchers,
// ranges and grouping label lists are removed first; what remains are
// numbers, durations, functions (identifier before "("), keywords and names.
var (
	promStrings  = regexp.MustCompile(`"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|` + "`[^`]*`")
	promMatchers = regexp.MustCompile(`\{[^}]*\}`)
	promRanges   = regexp.MustCompile(`\[[^\]]*\]`)
	promGrouping = regexp.MustCompile(`\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)`)
	promTokens   = regexp.MustCompile(`0x[0-9a-fA-F]+|[0-9]+(?:\.[0-9]*)?(?:[eE][+-]?[0-9]+)?[a-z]*|[a-zA-Z_:][a-zA-Z0-9_:]*(?:\s*\()?`)
	promKeywords = map[string]bool{
		"by": true, "without": true, "on": true, "ignoring": true, "group_left": true, "group_right": true,
		"bool": true, "and": true, "or": true, "unless": true, "offset": true, "atan2": true,
		"inf": true, "nan": true, "Inf": true, "NaN": true,
	}
)

// metricNames returns the metric names a PromQL expression selects.
func metricNames(expr string) []string {
	s := promStrings.ReplaceAllString(expr, `""`)
	s = promMatchers.ReplaceAllString(s, " ")
	s = promRanges.ReplaceAllString(s, " ")
	s = promGrouping.ReplaceAllString(s, " ")
	var names []string
	for _, tok := range promTokens.FindAllString(s, -1) {
		if tok[0] >= '0' && tok[0] <= '9' || strings.HasSuffix(tok, "(") || promKeywords[tok] {
			continue
		}
		if !slices.Contains(names, tok) {
			names = append(names, tok)
		}
	}
	return names
}

// scrapeNames parses the Prometheus text exposition format and returns every
// sample name it holds: histogram families as their _bucket, _sum and _count
// series, the way PromQL sees them.
func scrapeNames(r io.Reader) (map[string]bool, error) {
	p := expfmt.NewTextParser(model.UTF8Validation)
	families, err := p.TextToMetricFamilies(r)
	if err != nil {
		return nil, fmt.Errorf("parse exposition: %w", err)
	}
	names := map[string]bool{}
	for name, mf := range families {
		switch mf.GetType() {
		case dto.MetricType_HISTOGRAM, dto.MetricType_GAUGE_HISTOGRAM:
			names[name+"_bucket"], names[name+"_sum"], names[name+"_count"] = true, true, true
		case dto.MetricType_SUMMARY:
			names[name], names[name+"_sum"], names[name+"_count"] = true, true, true
		default:
			names[name] = true
		}
	}
	return names, nil
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
	names, err := scrapeNames(resp.Body)
	if err != nil {
		t.Fatalf("scrape %s: %v", url, err)
	}
	return names
}

// unexported lists the metric names the queries use that exported lacks.
func unexported(queries []string, exported map[string]bool) []string {
	var missing []string
	for _, q := range queries {
		for _, n := range metricNames(q) {
			if !exported[n] && !slices.Contains(missing, n) {
				missing = append(missing, n)
			}
		}
	}
	return missing
}

func TestDashboardUsesOnlyExportedMetrics(t *testing.T) {
	qs, err := loadDashboard(t).queries()
	if err != nil {
		t.Fatal(err)
	}
	exported := exportedNames(t)
	used := 0
	for _, q := range qs {
		used += len(metricNames(q))
	}
	if used == 0 {
		t.Fatal("no metric names found in the dashboard's queries")
	}
	if missing := unexported(qs, exported); len(missing) > 0 {
		t.Errorf("the dashboard queries metrics gated does not export: %v", missing)
	}
}

func TestUnexportedCatchesUnknownNames(t *testing.T) {
	exported := map[string]bool{"gated_decisions_total": true}
	got := unexported([]string{
		`sum(rate(gated_decisions_total[5m])) / sum(rate(gated_decision_total[5m]))`,
	}, exported)
	if !slices.Equal(got, []string{"gated_decision_total"}) {
		t.Errorf("unexported = %v, want [gated_decision_total]", got)
	}
}

func TestMetricNames(t *testing.T) {
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
		if got := metricNames(c.expr); !slices.Equal(got, c.want) {
			t.Errorf("metricNames(%q) = %v, want %v", c.expr, got, c.want)
		}
	}
}

func TestScrapeNamesExpandsHistograms(t *testing.T) {
	names, err := scrapeNames(strings.NewReader(`# TYPE h histogram
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
	if _, err := scrapeNames(strings.NewReader("not { an exposition")); err == nil {
		t.Error("scrapeNames accepted malformed input")
	}
}

// Grafana 10+ import: a Prometheus datasource variable every panel and query
// uses, unique panel ids, a query on every non-row panel.
func TestDashboardIsImportable(t *testing.T) {
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
