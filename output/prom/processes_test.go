package prom

import (
	"slices"
	"strings"
	"testing"

	"github.com/gpucanary/gpucanary/monitor"
	"github.com/gpucanary/gpucanary/monitor/procs"
)

const podUID = "6e6e2a8c-1b2c-4d3e-8f90-a1b2c3d4e5f6"

// perProcessState is replacedState with the training job in a pod and the
// data loader in a docker container.
func perProcessState() monitor.State {
	s := replacedState()
	s.Processes[0].Container = &procs.Container{ID: strings.Repeat("ab", 32), Runtime: "containerd", PodUID: podUID, Pod: "train-llama", Namespace: "ml"}
	s.Processes[1].Container = &procs.Container{ID: strings.Repeat("cd", 32), Runtime: "docker"}
	return s
}

func processCollector(s monitor.State, max int) *Collector {
	return NewCollector(Options{State: func() monitor.State { return s.Clone() }, Version: "v1.2.3", GoVersion: "go1.24.0",
		Processes: ProcessSeries{Max: max}})
}

// TestPerProcessSeries: each GPU process and each flagged one (cpu,
// cuda-idle, a finding) gets its series, with its container, pod and
// namespace where known; a process whose memory is not known has no
// memory series, one outside this view no CPU series. Series are in the
// exposition's order: by label values, labels taken by name.
func TestPerProcessSeries(t *testing.T) {
	c := processCollector(perProcessState(), DefaultProcessSeriesMax)
	want := `
# HELP gpucanary_process_gpu_memory_bytes ` + descProcGPUMem.Help() + `
# TYPE gpucanary_process_gpu_memory_bytes gauge
gpucanary_process_gpu_memory_bytes{container="",env="",namespace="",pid="7000",pod="",verdict="gpu"} 1.073741824e+09
gpucanary_process_gpu_memory_bytes{container="` + strings.Repeat("ab", 32) + `",env="/home/ana/llm/.venv",namespace="ml",pid="4242",pod="train-llama",verdict="gpu"} 8.589934592e+09
gpucanary_process_gpu_memory_bytes{container="` + strings.Repeat("cd", 32) + `",env="/home/ana/llm/.venv",namespace="",pid="4250",pod="",verdict="gpu"} 0
# HELP gpucanary_process_cpu_cores ` + descProcCPUOne.Help() + `
# TYPE gpucanary_process_cpu_cores gauge
gpucanary_process_cpu_cores{container="",env="/home/ana/vision/.venv",namespace="",pid="5151",pod="",verdict="cpu"} 3.992
gpucanary_process_cpu_cores{container="",env="/home/ana/vision/.venv",namespace="",pid="6000",pod="",verdict="cpu"} 0.005
gpucanary_process_cpu_cores{container="` + strings.Repeat("ab", 32) + `",env="/home/ana/llm/.venv",namespace="ml",pid="4242",pod="train-llama",verdict="gpu"} 0.985
gpucanary_process_cpu_cores{container="` + strings.Repeat("cd", 32) + `",env="/home/ana/llm/.venv",namespace="",pid="4250",pod="",verdict="gpu"} 1.5
# HELP gpucanary_process_series_dropped_total ` + descProcDropped.Help() + `
# TYPE gpucanary_process_series_dropped_total counter
gpucanary_process_series_dropped_total 0
`
	if got := familiesText(t, c, "gpucanary_process_gpu_memory_bytes", "gpucanary_process_cpu_cores", "gpucanary_process_series_dropped_total"); got != want[1:] {
		t.Errorf("got:\n%s\nwant:\n%s", got, want[1:])
	}
}

// TestPerProcessCap: past Max, the processes with findings and then the
// most GPU memory keep their series; the rest are counted, over scrapes.
func TestPerProcessCap(t *testing.T) {
	c := processCollector(perProcessState(), 2)
	for scrape, dropped := range []string{"3", "6"} {
		got := string(exposition(t, c))
		for _, want := range []string{`pid="5151",pod=`, `pid="4242",pod=`, "gpucanary_process_series_dropped_total " + dropped} {
			if !strings.Contains(got, want) {
				t.Errorf("scrape %d lacks %s:\n%s", scrape+1, want, got)
			}
		}
		for _, gone := range []string{`pid="4250"`, `pid="6000"`, `pid="7000"`} {
			if strings.Contains(got, gone+`,pod=`) {
				t.Errorf("scrape %d has %s past the cap", scrape+1, gone)
			}
		}
	}
}

// TestPerProcessOff: without ProcessSeries nothing per process is
// described or collected.
func TestPerProcessOff(t *testing.T) {
	got := string(exposition(t, collector(perProcessState())))
	if strings.Contains(got, "gpucanary_process_") {
		t.Errorf("per-process series while off:\n%s", got)
	}
}

// familiesText is the text of c's families of those names, in the order
// the names are given.
func familiesText(t *testing.T, c *Collector, names ...string) string {
	t.Helper()
	fams, err := (&Registry{sources: []source{c}}).Gather()
	if err != nil {
		t.Fatal(err)
	}
	var out []byte
	for _, n := range names {
		i := slices.IndexFunc(fams, func(f *Family) bool { return f.Name() == n })
		if i < 0 {
			t.Fatalf("no family %s", n)
		}
		out = appendText(out, fams[i:i+1])
	}
	return string(out)
}

// TestProcessEnvLabelOnlyForARead is issue 42's item 14: a process's
// VIRTUAL_ENV may name anything (no environment, a path that was never
// read, text made to look like another label); only an environment GPU
// Canary read becomes its env label.
func TestProcessEnvLabelOnlyForARead(t *testing.T) {
	s := perProcessState()
	s.Processes = s.Processes[:1]
	s.Processes[0].Container = nil
	read := s.Processes[0].EnvPath
	for _, planted := range []string{"/nowhere/.venv", `x",verdict="ok`} {
		p := s.Processes[0]
		p.PID, p.EnvPath, p.Torch = 9000+len(s.Processes), planted, nil
		s.Processes = append(s.Processes, p)
	}
	c := processCollector(s, DefaultProcessSeriesMax)
	want := `
# HELP gpucanary_process_gpu_memory_bytes ` + descProcGPUMem.Help() + `
# TYPE gpucanary_process_gpu_memory_bytes gauge
gpucanary_process_gpu_memory_bytes{container="",env="",namespace="",pid="9001",pod="",verdict="gpu"} 8.589934592e+09
gpucanary_process_gpu_memory_bytes{container="",env="",namespace="",pid="9002",pod="",verdict="gpu"} 8.589934592e+09
gpucanary_process_gpu_memory_bytes{container="",env="` + read + `",namespace="",pid="4242",pod="",verdict="gpu"} 8.589934592e+09
`
	if got := familiesText(t, c, "gpucanary_process_gpu_memory_bytes"); got != want[1:] {
		t.Errorf("got:\n%s\nwant:\n%s", got, want[1:])
	}
}
