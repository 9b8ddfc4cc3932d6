package prom

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil/promlint"

	"github.com/gpucanary/gpucanary/monitor"
	"github.com/gpucanary/gpucanary/monitor/finding"
	"github.com/gpucanary/gpucanary/monitor/gpu"
	"github.com/gpucanary/gpucanary/monitor/jobend"
	"github.com/gpucanary/gpucanary/monitor/procs"
	"github.com/gpucanary/gpucanary/monitor/pyenv"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// at is the fixed time the fixtures happen at.
var at = time.Date(2026, 3, 14, 9, 26, 53, 0, time.UTC)

func a100() gpu.State {
	return gpu.State{Simulated: true, Source: "sim:/tmp/a100.json", Driver: "550.54.15", CUDADriver: "12.4",
		Devices: []gpu.Device{{Index: 0, Name: "NVIDIA A100-SXM4-40GB", UUID: "GPU-0000", ComputeCapability: "8.0",
			Architecture: "Ampere", MemoryTotalBytes: 42949672960}}}
}

func env(path, installer string, torch *pyenv.Package, fs ...finding.Finding) monitor.EnvReport {
	pkgs := map[string]*pyenv.Package{}
	if torch != nil {
		pkgs[pyenv.Torch] = torch
	}
	for i := range fs {
		fs[i].Env = path
	}
	if fs == nil {
		fs = []finding.Finding{}
	}
	verdict := monitor.VerdictOK
	if finding.Worst(fs) == finding.SeverityError {
		verdict = monitor.VerdictError
	}
	return monitor.EnvReport{Env: &pyenv.Env{Path: path, Kind: "venv", Python: "3.11", Installer: installer, Packages: pkgs},
		Verdict: verdict, Findings: fs}
}

func proc(pid int, envPath string, v procs.Verdict, cpu float64, mem *uint64, cmd ...string) monitor.Process {
	return monitor.Process{Row: procs.Row{Proc: procs.Proc{PID: pid, HostPID: pid, Name: "python3", Cmdline: cmd, CPUPercent: cpu, EnvPath: envPath},
		GPUMemoryBytes: mem, Verdict: v}, Findings: []finding.Finding{}}
}

func bytesOf(n uint64) *uint64 { return &n }

// replacedState is a machine an hour after uv replaced the CUDA torch of
// one environment: a training job on the GPU from the healthy one, a job
// from the broken one computing on the CPU, and file watching degraded.
func replacedState() monitor.State {
	good := env("/home/ana/llm/.venv", "uv", &pyenv.Package{Version: "2.5.1+cu121", Build: pyenv.BuildCUDA, CUDA: "12.1"})
	bad := env("/home/ana/vision/.venv", "uv", &pyenv.Package{Version: "2.5.1", Build: pyenv.BuildCPU},
		finding.Finding{Code: finding.CodeTorchCPUBuild, Severity: finding.SeverityError, Message: "torch 2.5.1 is a CPU-only build",
			Fix: "uv pip install --reinstall torch==2.5.1 --index-url https://download.pytorch.org/whl/cu124"})
	old := env("/opt/conda/envs/old", "conda", &pyenv.Package{Version: "2.1.0+cu118", Build: pyenv.BuildCUDA, CUDA: "11.8"},
		finding.Finding{Code: finding.CodeGPUArchUnsupported, Severity: finding.SeverityError, Message: "no kernels for sm_90"},
		finding.Finding{Code: finding.CodeGPUArchUnsupported, Severity: finding.SeverityError, Message: "no kernels for sm_100"},
		finding.Finding{Code: finding.CodeTorchUnknownRelease, Severity: finding.SeverityInfo, Message: "newer than the table"})
	old.Kind = "conda"
	noTorch := env("/home/ana/tools/.venv", "pip", nil)
	noTorch.Verdict = monitor.VerdictNoTorch

	train := proc(4242, good.Path, procs.VerdictGPU, 98.5, bytesOf(8<<30), "python", "train.py", "--token=s3cret")
	loader := proc(4250, good.Path, procs.VerdictGPU, 150, bytesOf(0), "python", "-c", "from multiprocessing import spawn")
	stuck := proc(5151, bad.Path, procs.VerdictCPU, 399.2, nil, "python", "eval.py", "--all")
	stuck.BusyFor, stuck.JobOnCPU = 95*time.Second, true
	stuck.Findings = []finding.Finding{{Code: finding.CodeJobOnCPU, Severity: finding.SeverityError, Env: bad.Path, PID: 5151, Message: "busy on the CPU"}}
	idle := proc(6000, bad.Path, procs.VerdictCPU, 0.5, nil, "python", "serve.py")
	outside := proc(7000, "", procs.VerdictGPU, 0, bytesOf(1<<30))
	outside.OutsideContainer = true

	return monitor.State{
		GPU:       a100(),
		Envs:      []monitor.EnvReport{good, old, noTorch, bad},
		Processes: []monitor.Process{train, loader, stuck, idle, outside},
		Findings: []finding.Finding{
			{Code: finding.CodeWatchDegraded, Severity: finding.SeverityWarning, Env: "watch:inotify-limit", Message: "degraded"},
		},
		Started:           true,
		DiscoveryComplete: true,
		LastRead:          at.Add(-10 * time.Minute),
		LastReadDuration:  1250 * time.Millisecond,
		Polled:            at,
		TorchChanges: map[string]monitor.TorchChange{
			bad.Path:  {Changed: at.Add(-time.Hour), Replaced: at.Add(-time.Hour)},
			good.Path: {Changed: at.Add(-48 * time.Hour)},
			// An environment no longer listed leaves no series behind.
			"/gone/.venv": {Changed: at, Replaced: at},
		},
	}
}

// noDriverState is a laptop without an NVIDIA driver whose first
// search for environments was cut short.
func noDriverState() monitor.State {
	return monitor.State{
		GPU: gpu.State{Source: "none", Devices: []gpu.Device{}, Error: "NVML not found: libnvidia-ml.so.1"},
		Envs: []monitor.EnvReport{env("/home/bo/.venv", "pip", &pyenv.Package{Version: "2.5.1", Build: pyenv.BuildCPU},
			finding.Finding{Code: finding.CodeTorchCPUBuild, Severity: finding.SeverityInfo, Message: "fine here"})},
		Findings: []finding.Finding{{Code: finding.CodeNoGPUDriver, Severity: finding.SeverityWarning, Message: "No NVIDIA driver answered"}},
		Started:  true,
		LastRead: at, LastReadDuration: 30 * time.Second,
	}
}

func collector(s monitor.State) *Collector {
	return NewCollector(Options{State: func() monitor.State { return s.Clone() }, Version: "v1.2.3", GoVersion: "go1.24.0"})
}

func exposition(t testing.TB, c *Collector) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := WriteText(&b, &Registry{sources: []source{c}}); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// The exposition of each state is compared, byte for byte, with a golden
// file (go test ./output/prom -update rewrites them after a deliberate
// change; metric names and labels are a contract, so read the diff). The
// golden files were written by the Prometheus client library when it
// wrote the agent's metrics, and Prometheus's own linter reads them.
func TestExpositionGolden(t *testing.T) {
	for _, tc := range []struct {
		name  string
		state monitor.State
	}{
		{"replaced", replacedState()},
		{"nodriver", noDriverState()},
		{"starting", monitor.State{GPU: a100()}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := collector(tc.state)
			golden := filepath.Join("testdata", tc.name+".prom")
			got := exposition(t, c)
			if *update {
				if err := os.WriteFile(golden, got, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("%s differs:\n%s", golden, got)
			}
			if problems, err := promlint.New(bytes.NewReader(got)).Lint(); err != nil || len(problems) > 0 {
				t.Errorf("promlint: %v %+v", err, problems)
			}
		})
	}
}

// The metrics an alert hangs on, one by one, so a golden file rewritten
// by mistake cannot hide a lost series.
func TestAlertSeries(t *testing.T) {
	c := collector(replacedState())
	for _, tc := range []struct {
		name, want string
	}{
		{"torch build", `gpucanary_env_torch_info{build="cpu",cuda="",env="/home/ana/vision/.venv",torch_version="2.5.1"} 1`},
		{"replacement time", `gpucanary_env_torch_replaced_timestamp_seconds{env="/home/ana/vision/.venv"} 1.773476813e+09`},
		{"finding per code and severity", `gpucanary_env_findings{code="GPU_ARCH_UNSUPPORTED",env="/opt/conda/envs/old",severity="error"} 2`},
		{"job on the CPU", `gpucanary_job_on_cpu_busy_seconds{env="/home/ana/vision/.venv",name="python3",pid="5151",severity="error",verdict="cpu"} 95`},
		{"processes on the GPU", `gpucanary_processes{env="/home/ana/llm/.venv",verdict="gpu"} 2`},
		{"GPU memory", `gpucanary_processes_gpu_memory_bytes{env="/home/ana/llm/.venv",verdict="gpu"} 8.589934592e+09`},
		{"CPU in cores", `gpucanary_processes_cpu_cores{env="/home/ana/llm/.venv",verdict="gpu"} 2.485`},
		{"degraded", `gpucanary_watch_degraded 1`},
		{"driver", `gpucanary_gpu_driver_info{backend="sim",cuda_driver="12.4",driver="550.54.15"} 1`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if out := string(exposition(t, c)); !strings.Contains(out, tc.want+"\n") {
				t.Errorf("no line %q in:\n%s", tc.want, out)
			}
		})
	}
}

// A driver that does not say which CUDA it supports has the version its
// driver version guarantees as a series of its own, a lower bound, and
// cuda_driver stays empty rather than claiming it; a driver that says
// has no such series.
func TestDerivedDriverCUDA(t *testing.T) {
	s := monitor.State{GPU: a100()}
	if out := string(exposition(t, collector(s))); strings.Contains(out, "gpucanary_gpu_driver_cuda_min_info{") {
		t.Errorf("a driver that gives its CUDA has a derived series:\n%s", out)
	}
	s.GPU.CUDADriver, s.GPU.CUDADriverDerived = "", "12.4"
	out := string(exposition(t, collector(s)))
	for _, want := range []string{`gpucanary_gpu_driver_cuda_min_info{cuda_driver_min="12.4"} 1`, `gpucanary_gpu_driver_info{backend="sim",cuda_driver="",driver="550.54.15"} 1`} {
		if !strings.Contains(out, want+"\n") {
			t.Errorf("no line %q in:\n%s", want, out)
		}
	}
}

// Labels stay bounded: no command line reaches a label, and only the
// process flagged JOB_ON_CPU is named by PID, among a thousand.
func TestLabelCardinality(t *testing.T) {
	s := replacedState()
	for i := range 1000 {
		p := proc(10000+i, s.Envs[i%len(s.Envs)].Path, []procs.Verdict{procs.VerdictGPU, procs.VerdictCPU, procs.VerdictCUDAIdle}[i%3],
			float64(i%100), bytesOf(uint64(i)<<20), "python", fmt.Sprintf("job%d.py", i), fmt.Sprintf("--secret=tok%d", i))
		s.Processes = append(s.Processes, p)
	}
	out := string(exposition(t, collector(s)))
	for _, leak := range []string{"train.py", "s3cret", "eval.py", "job1.py", "tok99", `pid="4242"`, `pid="10001"`} {
		if strings.Contains(out, leak) {
			t.Errorf("%q reached the exposition", leak)
		}
	}
	if n := strings.Count(out, `pid="`); n != 1 {
		t.Errorf("%d series carry a PID, want 1 (the flagged process)", n)
	}
	// 4 environments and the processes outside any, 3 verdicts at most.
	if n := strings.Count(out, "\ngpucanary_processes{"); n > 5*3 {
		t.Errorf("%d gpucanary_processes series for 1005 processes", n)
	}
}

// A scrape reads the state once, and nothing else.
func TestScrapeReadsStateOnce(t *testing.T) {
	calls := 0
	s := replacedState()
	c := NewCollector(Options{State: func() monitor.State { calls++; return s }})
	exposition(t, c)
	if calls != 1 {
		t.Errorf("State was called %d times in one scrape", calls)
	}
}

func TestFromCheck(t *testing.T) {
	r := monitor.CheckResult{GPU: noDriverState().GPU, Envs: noDriverState().Envs, Findings: noDriverState().Findings}
	s := FromCheck(r, false, at.Add(-30*time.Second), 30*time.Second)
	got := exposition(t, collector(s))
	want, err := os.ReadFile(filepath.Join("testdata", "nodriver.prom"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("check's metrics differ from the engine's for the same machine:\n%s\nwant:\n%s", got, want)
	}
}

// TestGPUFindings: a GPU health finding is a series of its GPU, code and
// severity (and counts among the host's findings, as every machine
// finding does); none is exported while there are none.
func TestGPUFindings(t *testing.T) {
	s := monitor.State{GPU: a100()}
	if out := string(exposition(t, collector(s))); strings.Contains(out, "gpucanary_gpu_findings{") {
		t.Errorf("a healthy GPU has a findings series:\n%s", out)
	}
	s.Findings = []finding.Finding{
		{Code: finding.CodeGPUThrottled, Severity: finding.SeverityWarning, Env: "gpu:0"},
		{Code: finding.CodePCIeDegraded, Severity: finding.SeverityInfo, Env: "gpu:0"},
		{Code: finding.CodeNoGPUDriver, Severity: finding.SeverityWarning},
		{Code: finding.CodeVRAMSpill, Severity: finding.SeverityWarning, Env: "gpu:0", PID: 5120},
		{Code: finding.CodeDriverReset, Severity: finding.SeverityError},
	}
	out := string(exposition(t, collector(s)))
	for _, want := range []string{
		`gpucanary_gpu_findings{code="VRAM_SPILL",gpu="0",severity="warning"} 1`,
		`gpucanary_host_findings{code="DRIVER_RESET",severity="error"} 1`,
		`gpucanary_gpu_findings{code="GPU_THROTTLED",gpu="0",severity="warning"} 1`,
		`gpucanary_gpu_findings{code="PCIE_DEGRADED",gpu="0",severity="info"} 1`,
		`gpucanary_host_findings{code="GPU_THROTTLED",severity="warning"} 1`,
	} {
		if !strings.Contains(out, want+"\n") {
			t.Errorf("no line %q in:\n%s", want, out)
		}
	}
	if strings.Contains(out, `gpucanary_gpu_findings{code="NO_GPU_DRIVER"`) || strings.Contains(out, `gpucanary_gpu_findings{code="DRIVER_RESET"`) {
		t.Errorf("a finding about no GPU is a GPU's:\n%s", out)
	}
}

// TestJobsEndedCounter: the engine's count of JOB_ENDED by how is a
// counter, one series per way of ending (zero included, so that rate()
// sees the first), absent in a state the engine never started.
func TestJobsEndedCounter(t *testing.T) {
	s := monitor.State{GPU: a100(), JobsEnded: map[jobend.How]uint64{jobend.Crashed: 2, jobend.Finished: 1, jobend.Unknown: 0}}
	out := string(exposition(t, collector(s)))
	for _, want := range []string{
		"# TYPE gpucanary_jobs_ended_total counter\n",
		`gpucanary_jobs_ended_total{how="crashed"} 2` + "\n",
		`gpucanary_jobs_ended_total{how="finished"} 1` + "\n",
		`gpucanary_jobs_ended_total{how="unknown"} 0` + "\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in:\n%s", want, out)
		}
	}
	if problems, err := promlint.New(strings.NewReader(out)).Lint(); err != nil || len(problems) > 0 {
		t.Errorf("promlint: %v %+v", err, problems)
	}
	if out := string(exposition(t, collector(monitor.State{GPU: a100()}))); strings.Contains(out, "gpucanary_jobs_ended_total{") {
		t.Errorf("a state without the engine's count has series:\n%s", out)
	}
}

// TestJobStalledSeries: a GPU job whose row carries JOB_STALLED or
// JOB_SPINNING is a series of its own, by PID and code; a job without
// either has none.
func TestJobStalledSeries(t *testing.T) {
	stalled := proc(4242, "/home/ana/llm/.venv", procs.VerdictGPU, 0, bytesOf(2<<30), "python", "train.py")
	stalled.Findings = []finding.Finding{{Code: finding.CodeJobStalled, Severity: finding.SeverityWarning, PID: 4242}}
	spinning := proc(5151, "", procs.VerdictGPU, 0, bytesOf(8<<30), "torchrun", "ddp.py")
	spinning.Findings = []finding.Finding{{Code: finding.CodeJobSpinning, Severity: finding.SeverityWarning, PID: 5151}}
	fine := proc(6000, "", procs.VerdictGPU, 0, bytesOf(8<<30), "python", "serve.py")
	out := string(exposition(t, collector(monitor.State{GPU: a100(), Processes: []monitor.Process{stalled, spinning, fine}})))
	for _, want := range []string{
		`gpucanary_job_stalled{code="JOB_STALLED",env="/home/ana/llm/.venv",name="python3",pid="4242"} 1`,
		`gpucanary_job_stalled{code="JOB_SPINNING",env="",name="python3",pid="5151"} 1`,
	} {
		if !strings.Contains(out, want+"\n") {
			t.Errorf("no line %q in:\n%s", want, out)
		}
	}
	if strings.Contains(out, `pid="6000"`) {
		t.Errorf("a job that is neither has a series:\n%s", out)
	}
	if problems, err := promlint.New(strings.NewReader(out)).Lint(); err != nil || len(problems) > 0 {
		t.Errorf("promlint: %v %+v", err, problems)
	}
}
