// Package grafana reads gated's Grafana dashboard and example alert rules
// and finds the metric names their PromQL uses, so tests can hold them
// against what a running gated exports: a panel that queries a metric gated
// does not expose shows "No data" forever, and nobody notices until the page
// that should have fired doesn't.
package grafana

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"regexp"
	"slices"
	"strings"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"go.yaml.in/yaml/v3"
)

// Dashboard is the part of Grafana's dashboard model the checks read.
type Dashboard struct {
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

// LoadDashboard reads a dashboard JSON file.
func LoadDashboard(path string) (Dashboard, error) {
	var d Dashboard
	b, err := os.ReadFile(path)
	if err != nil {
		return d, fmt.Errorf("read dashboard: %w", err)
	}
	if err := json.Unmarshal(b, &d); err != nil {
		return d, fmt.Errorf("decode %s: %w", path, err)
	}
	return d, nil
}

// Queries lists every PromQL expression in the dashboard: panel targets and
// the inner series selector of label_values() template queries.
func (d Dashboard) Queries() ([]string, error) {
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

// MetricNames returns the metric names a PromQL expression selects.
func MetricNames(expr string) []string {
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

// ScrapeNames parses the Prometheus text exposition format and returns every
// sample name it holds: histogram families as their _bucket, _sum and _count
// series, the way PromQL sees them.
func ScrapeNames(r io.Reader) (map[string]bool, error) {
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

// Unexported lists the metric names the queries use that exported lacks.
func Unexported(queries []string, exported map[string]bool) []string {
	var missing []string
	for _, q := range queries {
		for _, n := range MetricNames(q) {
			if !exported[n] && !slices.Contains(missing, n) {
				missing = append(missing, n)
			}
		}
	}
	return missing
}

var yamlBlock = regexp.MustCompile("(?s)```yaml\n(groups:.*?)```")

// AlertExprs returns the expressions of the Prometheus alert rules in the
// ```yaml blocks (starting with "groups:") of a markdown file; the example
// alerts of docs/operations.md break as easily as the dashboard.
func AlertExprs(path string) ([]string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
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
			return nil, fmt.Errorf("%s: alert rules: %w", path, err)
		}
		for _, g := range doc.Groups {
			for _, r := range g.Rules {
				if r.Alert == "" || r.Expr == "" {
					return nil, fmt.Errorf("%s: a rule without alert name or expr", path)
				}
				exprs = append(exprs, r.Expr)
			}
		}
	}
	return exprs, nil
}
