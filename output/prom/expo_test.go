package prom

import (
	"bytes"
	"compress/gzip"
	"io"
	"log/slog"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/gpucanary/gpucanary/monitor"
)

// constSource gives fixed series, for tests of the writer.
type constSource func(b *batch)

func (f constSource) collect(b *batch) { f(b) }

// viaClientLibrary writes fams as the Prometheus client library writes
// the same metrics: const metrics in a registry, gathered, each family
// encoded by expfmt. The library is a test dependency only.
func viaClientLibrary(t *testing.T, fams []*Family) []byte {
	t.Helper()
	reg := prometheus.NewRegistry()
	for _, f := range fams {
		d := f.desc
		pd := prometheus.NewDesc(d.name, d.help, d.labels, nil)
		vt := prometheus.GaugeValue
		if d.kind == counterKind {
			vt = prometheus.CounterValue
		}
		var ms []prometheus.Metric
		for _, s := range f.samples {
			ms = append(ms, prometheus.MustNewConstMetric(pd, vt, s.value, s.values...))
		}
		reg.MustRegister(fixedCollector{pd, ms})
	}
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	for _, mf := range mfs {
		if _, err := expfmt.MetricFamilyToText(&b, mf); err != nil {
			t.Fatal(err)
		}
	}
	return b.Bytes()
}

type fixedCollector struct {
	desc    *prometheus.Desc
	metrics []prometheus.Metric
}

func (c fixedCollector) Describe(ch chan<- *prometheus.Desc) { ch <- c.desc }
func (c fixedCollector) Collect(ch chan<- prometheus.Metric) {
	for _, m := range c.metrics {
		ch <- m
	}
}

// TestExpositionMatchesClientLibrary: for the states of the golden tests,
// a busy server, per-process series and label values and HELP texts that
// need escaping, the writer's text is byte for byte what the Prometheus
// client library wrote, and expfmt's parser reads it back.
func TestExpositionMatchesClientLibrary(t *testing.T) {
	tricky := newDesc("gpucanary_test_tricky", "A help with a backslash \\ and a\nline feed, \"quotes\" kept.", gaugeKind, "zeta", "alpha", "mid")
	count := newDesc("gpucanary_test_total", "A counter.", counterKind)
	for _, tc := range []struct {
		name string
		src  source
	}{
		{"replaced", collector(replacedState())},
		{"nodriver", collector(noDriverState())},
		{"per process", processCollector(perProcessState(), DefaultProcessSeriesMax)},
		{"busy server", processCollector(bigState(), DefaultProcessSeriesMax)},
		{"escapes and numbers", constSource(func(b *batch) {
			b.add(tricky, 1, `C:\Users\ana\.venv`, "a\"b", "line\nfeed")
			b.add(tricky, math.NaN(), "", "", "")
			b.add(tricky, math.Inf(1), "é ü 中文", "x", "y")
			b.add(tricky, math.Inf(-1), "z", "", "a")
			b.add(tricky, -0.5, "z", "", "b")
			b.add(tricky, 1e-9, "a", "b", "c")
			b.add(tricky, 123456789012345678, "a", "a", "c")
			b.add(tricky, -1, "a", "a", "b")
			b.add(count, 0)
		})},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fams, err := (&Registry{sources: []source{tc.src}}).Gather()
			if err != nil {
				t.Fatal(err)
			}
			got := appendText(nil, fams)
			if want := viaClientLibrary(t, fams); !bytes.Equal(got, want) {
				t.Errorf("the writer's text:\n%s\nthe client library's:\n%s", got, want)
			}
			p := expfmt.NewTextParser(model.UTF8Validation)
			parsed, err := p.TextToMetricFamilies(bytes.NewReader(got))
			if err != nil {
				t.Fatalf("expfmt cannot read it: %v", err)
			}
			if len(parsed) != len(fams) {
				t.Errorf("expfmt read %d families, want %d", len(parsed), len(fams))
			}
		})
	}
}

// A label value that is not UTF-8 (a path on Linux may hold any bytes)
// is written with U+FFFD in place of the bad bytes: the format is UTF-8,
// and a scraper that meets bad bytes drops the whole scrape.
func TestExpositionNonUTF8Label(t *testing.T) {
	s := replacedState()
	s.Envs = s.Envs[:1]
	s.Envs[0].Path = "/home/ana/\xff\xfeproj/.venv"
	s.Processes, s.TorchChanges = nil, nil
	out := exposition(t, collector(s))
	if !strings.Contains(string(out), `env="/home/ana/`+"\uFFFD"+`proj/.venv"`) {
		t.Errorf("no env label with U+FFFD:\n%s", out)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	if _, err := p.TextToMetricFamilies(bytes.NewReader(out)); err != nil {
		t.Errorf("expfmt cannot read it: %v", err)
	}
}

// Two series with the same labels, or label values that do not fit the
// family, are errors of the scrape; the rest of it is whole.
func TestGatherKeepsWhatItCan(t *testing.T) {
	d := newDesc("gpucanary_test", "Test.", gaugeKind, "a")
	fams, err := (&Registry{sources: []source{constSource(func(b *batch) {
		b.add(d, 1, "x")
		b.add(d, 2, "x")
		b.add(d, 3, "x", "y")
		b.add(d, 4, "w")
	})}}).Gather()
	if err == nil {
		t.Error("no error for a repeated series and a wrong label count")
	}
	if got, want := string(appendText(nil, fams)), "# HELP gpucanary_test Test.\n# TYPE gpucanary_test gauge\ngpucanary_test{a=\"w\"} 4\ngpucanary_test{a=\"x\"} 1\n"; got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
}

// /metrics is the text format's media type, gzipped for a scraper that
// asks, and serves the metrics it could collect when the agent's own
// process metrics cannot be read.
func TestMetricsHandler(t *testing.T) {
	reg := NewRegistry(Options{State: func() monitor.State { return replacedState() }, Version: "v1.2.3"})
	reg.sources = append(reg.sources, selfCollector{proc: filepath.Join(t.TempDir(), "no-proc")})
	h := metricsHandler(reg, slog.New(slog.DiscardHandler))
	get := func(enc string) *httptest.ResponseRecorder {
		req := httptest.NewRequest(http.MethodGet, "/metrics", nil)
		if enc != "" {
			req.Header.Set("Accept-Encoding", enc)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec
	}
	plain := get("")
	if ct := plain.Header().Get("Content-Type"); ct != "text/plain; version=0.0.4; charset=utf-8" {
		t.Errorf("Content-Type %q", ct)
	}
	body := plain.Body.String()
	for _, want := range []string{"gpucanary_ready 1\n", "go_goroutines ", "go_info{version=\""} {
		if !strings.Contains(body, want) {
			t.Errorf("no %q in:\n%.500s", want, body)
		}
	}
	if strings.Contains(body, "process_cpu_seconds_total") {
		t.Error("process metrics from a /proc that is not there")
	}
	zipped := get("deflate, gzip;q=0.9")
	if zipped.Header().Get("Content-Encoding") != "gzip" {
		t.Fatalf("Content-Encoding %q for a scraper that accepts gzip", zipped.Header().Get("Content-Encoding"))
	}
	zr, err := gzip.NewReader(zipped.Body)
	if err != nil {
		t.Fatal(err)
	}
	unzipped, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(unzipped), "gpucanary_ready 1\n") {
		t.Errorf("the gzipped body:\n%.300s", unzipped)
	}
	if get("gzip;q=0").Header().Get("Content-Encoding") != "" {
		t.Error("gzipped for a scraper that refuses gzip")
	}
}

func TestAcceptsGzip(t *testing.T) {
	for _, tc := range []struct {
		header string
		want   bool
	}{
		{"", false},
		{"gzip", true},
		{"GZIP", true},
		{"identity", false},
		{"deflate, gzip", true},
		{"gzip;q=0", false},
		{"gzip; q=0.000", false},
		{"gzip;q=0.5", true},
		{"*", true},
		{"*;q=0", false},
		{"x-gzip2", false},
	} {
		if got := acceptsGzip([]string{tc.header}); got != tc.want {
			t.Errorf("acceptsGzip(%q) = %v, want %v", tc.header, got, tc.want)
		}
	}
}

// The process metrics come from a /proc tree: a command name with spaces
// and parentheses does not shift the fields.
func TestProcessMetricsFromProc(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("no /proc")
	}
	proc := t.TempDir()
	for name, text := range map[string]string{
		"self/stat": "4242 (gpu canary) (x) S 1 4242 4242 0 -1 4194560 1000 0 0 0 250 50 0 0 20 0 12 0 500 1000000 300 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 0 0 0 0 0 0\n",
		"stat":      "cpu  1 2 3 4\nbtime 1773400000\nprocesses 10\n",
		"self/fd/0": "", "self/fd/1": "", "self/fd/7": "",
	} {
		p := filepath.Join(proc, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	fams, err := (&Registry{sources: []source{selfCollector{proc: proc}}}).Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := string(appendText(nil, fams))
	for _, want := range []string{
		"process_cpu_seconds_total 3\n",
		"process_start_time_seconds 1.773400005e+09\n",
		"process_virtual_memory_bytes 1e+06\n",
		"process_resident_memory_bytes " + string(appendFloat(nil, float64(300*os.Getpagesize()))) + "\n",
		"process_open_fds 3\n",
		"process_max_fds ",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in:\n%s", want, out)
		}
	}
}
