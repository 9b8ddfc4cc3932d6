package prom

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/gpucanary/gpucanary/monitor"
	"github.com/gpucanary/gpucanary/monitor/finding"
	"github.com/gpucanary/gpucanary/monitor/procs"
	"github.com/gpucanary/gpucanary/monitor/pyenv"
)

// bigState is a busy shared training server: 100 environments (a tenth
// with a CPU torch, some with two findings) and 1000 ML processes, 1 % of
// them flagged JOB_ON_CPU.
func bigState() monitor.State {
	s := replacedState()
	s.Envs, s.Processes = nil, nil
	s.TorchChanges = map[string]monitor.TorchChange{}
	for i := range 100 {
		path := fmt.Sprintf("/home/user%02d/project%02d/.venv", i%30, i)
		torch := &pyenv.Package{Version: "2.5.1+cu121", Build: pyenv.BuildCUDA, CUDA: "12.1"}
		var fs []finding.Finding
		if i%10 == 0 {
			torch = &pyenv.Package{Version: "2.5.1", Build: pyenv.BuildCPU}
			fs = append(fs, finding.Finding{Code: finding.CodeTorchCPUBuild, Severity: finding.SeverityError, Message: "CPU build"})
			s.TorchChanges[path] = monitor.TorchChange{Changed: at, Replaced: at}
		}
		if i%7 == 0 {
			fs = append(fs, finding.Finding{Code: finding.CodeTorchUnknownRelease, Severity: finding.SeverityInfo, Message: "new"})
		}
		s.Envs = append(s.Envs, env(path, "uv", torch, fs...))
	}
	verdicts := []procs.Verdict{procs.VerdictGPU, procs.VerdictGPU, procs.VerdictCUDAIdle, procs.VerdictCPU, procs.VerdictOther}
	for i := range 1000 {
		p := proc(20000+i, s.Envs[i%100].Path, verdicts[i%len(verdicts)], float64(i%400), bytesOf(uint64(i)<<24), "python", "train.py")
		if i%100 == 3 {
			p.JobOnCPU, p.BusyFor = true, time.Minute
			p.Findings = []finding.Finding{{Code: finding.CodeJobOnCPU, Severity: finding.SeverityError, PID: p.PID, Env: p.EnvPath}}
		}
		s.Processes = append(s.Processes, p)
	}
	return s
}

// BenchmarkScrape is one Prometheus scrape of /metrics on that server:
// the copy of the engine's state, the metrics, and their text encoding
// (the agent's go_ and process_ metrics included). Goal: under 5 ms.
// scripts/bench-prom.sh runs it beside node_exporter's own scrape.
func BenchmarkScrape(b *testing.B) {
	s := bigState()
	h, err := NewHandler(HandlerOptions{Metrics: Options{State: s.Clone, Version: "bench"}})
	if err != nil {
		b.Fatal(err)
	}
	req := httptest.NewRequest(http.MethodGet, "/metrics", nil)
	req.Header.Set("Accept", "text/plain")
	var size int
	b.ReportAllocs()
	for b.Loop() {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != 200 {
			b.Fatalf("scrape: %d", rec.Code)
		}
		size = rec.Body.Len()
	}
	b.ReportMetric(float64(size), "bytes/scrape")
}

// BenchmarkCollect is the metrics alone, without HTTP or encoding.
func BenchmarkCollect(b *testing.B) {
	s := bigState()
	reg := NewRegistry(Options{State: s.Clone})
	b.ReportAllocs()
	for b.Loop() {
		if err := WriteText(io.Discard, reg); err != nil {
			b.Fatal(err)
		}
	}
}
