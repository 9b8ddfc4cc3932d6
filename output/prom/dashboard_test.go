package prom

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/gpucanary/gpucanary/monitor"
)

// dashboard is deploy/grafana's dashboard, which a fleet imports.
var dashboard = filepath.Join("..", "..", "deploy", "grafana", "gpucanary.json")

// TestDashboardQueriesExportedMetrics: every metric the Grafana dashboard
// queries is one the agent describes (with --collector.processes), and
// the dashboard shows what it says it shows.
func TestDashboardQueriesExportedMetrics(t *testing.T) {
	b, err := os.ReadFile(dashboard)
	if err != nil {
		t.Fatal(err)
	}
	var d any
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatalf("%s: %v", dashboard, err)
	}
	exprs := queries(d)
	if len(exprs) == 0 {
		t.Fatalf("%s has no queries", dashboard)
	}
	exported := map[string]bool{}
	for _, d := range processCollector(monitor.State{}, 1).descs() {
		exported[d.Name()] = true
	}
	used := map[string]bool{}
	for _, e := range exprs {
		names := metricNames(e)
		if len(names) == 0 {
			t.Errorf("query %q names no metric", e)
		}
		for _, n := range names {
			used[n] = true
			if !exported[n] {
				t.Errorf("query %q reads %s, which the agent does not export", e, n)
			}
		}
	}
	for _, want := range []string{"gpucanary_env_findings", "gpucanary_job_on_cpu_busy_seconds", "gpucanary_process_gpu_memory_bytes"} {
		if !used[want] {
			t.Errorf("the dashboard does not show %s", want)
		}
	}
}

// queries are the dashboard's PromQL: each target's expr and each
// template variable's query.
func queries(v any) []string {
	var out []string
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			switch s, ok := x.(string); {
			case ok && k == "expr":
				out = append(out, s)
			case ok && k == "query" && strings.Contains(s, "("):
				out = append(out, s)
			default:
				out = append(out, queries(x)...)
			}
		}
	case []any:
		for _, x := range v {
			out = append(out, queries(x)...)
		}
	}
	return out
}

var (
	promStrings  = regexp.MustCompile("\"(?:[^\"\\\\]|\\\\.)*\"|'(?:[^'\\\\]|\\\\.)*'|`[^`]*`")
	promMatchers = regexp.MustCompile(`\{[^}]*\}|\[[^\]]*\]`)
	promGrouping = regexp.MustCompile(`\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)`)
	promIdent    = regexp.MustCompile(`\$\{?[A-Za-z_]\w*\}?|[A-Za-z_:][A-Za-z0-9_:]*(\s*\()?|[0-9.]+[a-z]*`)
	promKeywords = []string{"and", "or", "unless", "bool", "offset", "by", "without", "on", "ignoring", "group_left", "group_right", "inf", "nan"}
)

// metricNames are the metric names a PromQL expression reads: what is
// left of it without strings, label matchers, ranges, groupings,
// functions, keywords, numbers and Grafana variables. The second argument
// of label_values is a label, not a metric.
func metricNames(expr string) []string {
	e := promStrings.ReplaceAllString(expr, `""`)
	e = promMatchers.ReplaceAllString(e, " ")
	e = promGrouping.ReplaceAllString(e, " ")
	if m, ok := strings.CutPrefix(strings.TrimSpace(e), "label_values("); ok {
		e, _, _ = strings.Cut(m, ",")
	}
	var names []string
	for _, m := range promIdent.FindAllStringSubmatch(e, -1) {
		tok := m[0]
		switch {
		case m[1] != "", strings.HasPrefix(tok, "$"), tok[0] >= '0' && tok[0] <= '9',
			slices.Contains(promKeywords, strings.ToLower(tok)):
			continue
		}
		if !slices.Contains(names, tok) {
			names = append(names, tok)
		}
	}
	return names
}

func TestMetricNames(t *testing.T) {
	tests := []struct {
		expr string
		want []string
	}{
		{`gpucanary_ready`, []string{"gpucanary_ready"}},
		{`count(gpucanary_ready{instance=~"$instance"} == 1)`, []string{"gpucanary_ready"}},
		{`sum by (env, code) (gpucanary_env_findings{severity="error", code!~"a{1}"}) > 0`, []string{"gpucanary_env_findings"}},
		{`increase(node_cpu_seconds_total{mode="idle"}[$__rate_interval]) / on (instance) group_left (version) gpucanary_build_info`,
			[]string{"node_cpu_seconds_total", "gpucanary_build_info"}},
		{`count(x) or vector(0)`, []string{"x"}},
		{`rate(up[5m] offset 1h) and bool up`, []string{"up"}},
		{`label_values(gpucanary_build_info, instance)`, []string{"gpucanary_build_info"}},
	}
	for _, tt := range tests {
		if got := metricNames(tt.expr); !slices.Equal(got, tt.want) {
			t.Errorf("metricNames(%q) = %q, want %q", tt.expr, got, tt.want)
		}
	}
}
