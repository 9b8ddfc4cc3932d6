// Package prom is GPU Canary's Prometheus exposition: the metrics a fleet
// alerts on ("this job's venv got a CPU torch", "this process computes on
// the CPU beside a free A100", "this torch cannot run on this driver"),
// read from a snapshot of the engine's state (monitor.State).
//
// A scrape copies the state and turns it into metrics; it never reads the
// disk and never calls NVML, so scraping costs the watched machine nothing
// but the copy. The device counters themselves (utilization, memory,
// temperature) are dcgm-exporter's job and are not repeated here.
//
// Label cardinality is bounded by what the machine has: environments by
// path, GPUs by index, processes aggregated by environment and verdict.
// Command lines never become labels, and a PID is a label only on a
// process flagged JOB_ON_CPU, JOB_STALLED or JOB_SPINNING, unless per-process series are asked for
// (ProcessSeries, processes.go): then each GPU process and each flagged
// one has series of its own, a bounded number of them.
//
// It imports monitor (and its types) and nothing of Prometheus's own
// libraries: the exposition (expo.go), the agent's own go_ and process_
// metrics (self.go) and the web config's TLS and basic auth (webconfig.go)
// are written here, so that their package initialisation does not slow
// every start of the one CLI. Nothing imports it but the commands that
// serve or write metrics.
package prom

import (
	"maps"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gpucanary/gpucanary/monitor"
	"github.com/gpucanary/gpucanary/monitor/finding"
	"github.com/gpucanary/gpucanary/monitor/procs"
)

// Namespace prefixes every metric GPU Canary exposes.
const Namespace = "gpucanary"

// Options configures a Collector.
type Options struct {
	// State returns the engine's current state; it is called once per
	// scrape and must not block on the engine's work (monitor.Monitor's
	// State copies under a read lock).
	State func() monitor.State
	// Version is GPU Canary's version, for gpucanary_build_info.
	Version string
	// GoVersion is the Go release it was built with; empty means
	// runtime.Version() (tests set it, so golden files do not depend on
	// the toolchain).
	GoVersion string
	// Processes turns on a series per process; the zero value is off.
	Processes ProcessSeries
}

// Collector turns the engine's state into GPU Canary's metrics.
type Collector struct {
	state     func() monitor.State
	version   string
	goVersion string
	processes *perProcess // nil: per-process series are off
}

var _ source = (*Collector)(nil)

// NewCollector returns a collector that reads o.State at each scrape.
func NewCollector(o Options) *Collector {
	gv := o.GoVersion
	if gv == "" {
		gv = runtime.Version()
	}
	c := &Collector{state: o.State, version: o.Version, goVersion: gv}
	if o.Processes.Max > 0 {
		c.processes = &perProcess{max: o.Processes.Max}
	}
	return c
}

func desc(name, help string, labels ...string) *Desc {
	return newDesc(Namespace+"_"+name, help, gaugeKind, labels...)
}

// The metrics. Names and labels are a contract (docs/prometheus.md, "Metrics"): add,
// never rename.
var (
	descBuildInfo  = desc("build_info", "GPU Canary's version and the Go release it was built with; always 1.", "version", "goversion")
	descReady      = desc("ready", "1 once the engine has read every environment for the first time, else 0.")
	descDegraded   = desc("watch_degraded", "1 when file watching is degraded (no inotify, the watch limit reached, an event queue overflow) and environments are polled instead, else 0.")
	descIncomplete = desc("discovery_incomplete", "1 when the last search for environments was cut short, so one may be missing, else 0.")
	descReadTime   = desc("last_read_timestamp_seconds", "When the last full read of every environment (at start and each rediscovery) ended, in seconds since the epoch.")
	descReadDur    = desc("last_read_duration_seconds", "How long the last full read of every environment took.")
	descPollTime   = desc("last_poll_timestamp_seconds", "When the engine last polled the GPU and the processes; a value that stops moving means the engine is stuck.")
	descHostFind   = desc("host_findings", "Findings about the host rather than one environment (NO_GPU_DRIVER, WATCH_DEGRADED, DRIVER_RESET), by code and severity.", "code", "severity")

	descGPUs       = desc("gpus", "How many NVIDIA GPUs the driver lists (0 without a driver).")
	descDriverInfo = desc("gpu_driver_info", "The NVIDIA driver and the newest CUDA version it supports; backend is nvml, sim (a simulated GPU) or none; absent without a driver.", "driver", "cuda_driver", "backend")
	descDriverMin  = desc("gpu_driver_cuda_min_info", "When the driver does not say which CUDA version it supports: the version its driver version guarantees at least (GPU Canary's driver table); always 1, absent when the driver says.", "cuda_driver_min")
	descGPUInfo    = desc("gpu_info", "One NVIDIA GPU: its name, UUID, compute capability and architecture; always 1.", "gpu", "name", "uuid", "compute_capability", "architecture")
	descGPUAsleep  = desc("gpu_asleep", "1 when the GPU is in PCI runtime suspend (and so was not queried, to leave it asleep), else 0.", "gpu")
	descGPURead    = desc("gpu_readable", "1 when everything about the GPU could be read from the driver, else 0.", "gpu")
	descGPUFind    = desc("gpu_findings", "Findings about one GPU's health (GPU_THROTTLED, GPU_LOST, GPU_XID, PCIE_DEGRADED, GPU_MEMORY_ERRORS, GPU_MEMORY_ORPHANED, VRAM_SPILL), by GPU index, code and severity; absent while there are none.", "gpu", "code", "severity")

	descEnvInfo   = desc("env_info", "One watched Python environment: its manager (uv, pip, conda, unknown), kind (venv, conda) and Python version; always 1.", "env", "installer", "kind", "python")
	descTorchInfo = desc("env_torch_info", "The torch installed in an environment: build (cuda, cpu, rocm, xpu, unknown), version and CUDA version; always 1, absent without torch.", "env", "build", "torch_version", "cuda")
	descEnvFind   = desc("env_findings", "Findings about an environment, by code (TORCH_CPU_BUILD, TORCH_CUDA_DRIVER_TOO_OLD, ...) and severity.", "env", "code", "severity")
	descChanged   = desc("env_torch_changed_timestamp_seconds", "When torch in the environment last changed (installed, changed, replaced, removed), in seconds since the epoch; absent until a change is seen.", "env")
	descReplaced  = desc("env_torch_replaced_timestamp_seconds", "When a CUDA torch in the environment was last overwritten by another build, in seconds since the epoch; absent until that happens.", "env")

	descProcs    = desc("processes", "Processes with an ML verdict (a GPU workload or an ML runtime loaded), by environment and verdict (gpu, cpu, cuda-idle, other).", "env", "verdict")
	descProcMem  = desc("processes_gpu_memory_bytes", "GPU memory the processes hold, by environment and verdict (where the driver reports it).", "env", "verdict")
	descProcCPU  = desc("processes_cpu_cores", "CPU the processes use over the last poll interval, in cores (1 = one core busy), by environment and verdict.", "env", "verdict")
	descJobOnCPU = desc("job_on_cpu_busy_seconds", "A process flagged JOB_ON_CPU (busy on the CPU beside a GPU for the whole window): how long it has been busy; severity is error for a CPU-only build, warning for a CUDA build holding no GPU memory.", "env", "pid", "name", "verdict", "severity")
	descJobStall = desc("job_stalled", "A GPU job flagged JOB_STALLED (it computed, then held its memory with its GPU idle for stall_window) or JOB_SPINNING (its GPU fully busy at a fraction of its power limit for stall_window), by code; always 1, absent while none is.", "env", "pid", "name", "code")
)

// descJobsEnded counts JOB_ENDED by how the job ended; a counter from
// the engine's start, one series per way of ending from the first read.
var descJobsEnded = newDesc(Namespace+"_jobs_ended_total", "GPU jobs that ended (JOB_ENDED) since the engine started, by how: finished, crashed, or unknown (its exit status not visible and nothing else telling).", counterKind, "how")

var allDescs = []*Desc{
	descBuildInfo, descReady, descDegraded, descIncomplete, descReadTime, descReadDur, descPollTime, descHostFind,
	descGPUs, descDriverInfo, descDriverMin, descGPUInfo, descGPUAsleep, descGPURead, descGPUFind,
	descEnvInfo, descTorchInfo, descEnvFind, descChanged, descReplaced,
	descProcs, descProcMem, descProcCPU, descJobOnCPU, descJobStall,
	descJobsEnded,
}

// descs are the families c may give, for the tests that check the
// dashboard queries only what is exported.
func (c *Collector) descs() []*Desc {
	return append(slices.Clone(allDescs), c.processes.descs()...)
}

// collect reads the state once and adds its metrics.
func (c *Collector) collect(b *batch) {
	s := c.state()
	b.add(descBuildInfo, 1, c.version, c.goVersion)
	collectEngine(b, s)
	collectGPU(b, s)
	collectEnvs(b, s)
	collectProcesses(b, s)
	c.processes.collect(b, s)
}

func boolValue(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

func seconds(t time.Time) float64 { return float64(t.UnixNano()) / 1e9 }

func collectEngine(b *batch, s monitor.State) {
	b.add(descReady, boolValue(s.Started))
	b.add(descIncomplete, boolValue(s.Started && !s.DiscoveryComplete))
	if !s.LastRead.IsZero() {
		b.add(descReadTime, seconds(s.LastRead))
		b.add(descReadDur, s.LastReadDuration.Seconds())
	}
	if !s.Polled.IsZero() {
		b.add(descPollTime, seconds(s.Polled))
	}
	degraded := false
	for k, n := range countFindings(s.Findings) {
		b.add(descHostFind, float64(n), k.code, string(k.severity))
		degraded = degraded || k.code == finding.CodeWatchDegraded
	}
	b.add(descDegraded, boolValue(degraded))
	for _, how := range slices.Sorted(maps.Keys(s.JobsEnded)) {
		b.add(descJobsEnded, float64(s.JobsEnded[how]), string(how))
	}
}

type findingKey struct {
	code     string
	severity finding.Severity
}

// countFindings gives one series per code and severity: an alert names
// the code, and two findings with the same code (GPU_ARCH_UNSUPPORTED for
// two kinds of GPU) make a value of 2, not a duplicate series.
func countFindings(fs []finding.Finding) map[findingKey]int {
	n := make(map[findingKey]int, len(fs))
	for _, f := range fs {
		n[findingKey{f.Code, f.Severity}]++
	}
	return n
}

func collectGPU(b *batch, s monitor.State) {
	g := s.GPU
	b.add(descGPUs, float64(len(g.Devices)))
	if g.HasDriver() {
		backend, _, _ := strings.Cut(g.Source, ":")
		b.add(descDriverInfo, 1, g.Driver, g.CUDADriver, backend)
		if g.CUDADriver == "" && g.CUDADriverDerived != "" {
			b.add(descDriverMin, 1, g.CUDADriverDerived)
		}
	}
	for _, d := range g.Devices {
		idx := strconv.Itoa(d.Index)
		b.add(descGPUInfo, 1, idx, d.Name, d.UUID, d.ComputeCapability, d.Architecture)
		b.add(descGPUAsleep, boolValue(d.Asleep), idx)
		b.add(descGPURead, boolValue(d.Error == ""), idx)
	}
	// The machine's findings about one GPU ("gpu:N"), by that GPU.
	byGPU := map[string][]finding.Finding{}
	for _, f := range s.Findings {
		if idx, ok := strings.CutPrefix(f.Env, "gpu:"); ok {
			byGPU[idx] = append(byGPU[idx], f)
		}
	}
	for _, idx := range slices.Sorted(maps.Keys(byGPU)) {
		for k, n := range countFindings(byGPU[idx]) {
			b.add(descGPUFind, float64(n), idx, k.code, string(k.severity))
		}
	}
}

func collectEnvs(b *batch, s monitor.State) {
	for _, e := range s.Envs {
		if e.Env == nil {
			continue
		}
		b.add(descEnvInfo, 1, e.Path, e.Installer, e.Kind, e.Python)
		if t := e.Torch(); t != nil {
			b.add(descTorchInfo, 1, e.Path, string(t.Build), t.Version, t.CUDA)
		}
		for k, n := range countFindings(e.Findings) {
			b.add(descEnvFind, float64(n), e.Path, k.code, string(k.severity))
		}
		if t, ok := s.TorchChanges[e.Path]; ok {
			if !t.Changed.IsZero() {
				b.add(descChanged, seconds(t.Changed), e.Path)
			}
			if !t.Replaced.IsZero() {
				b.add(descReplaced, seconds(t.Replaced), e.Path)
			}
		}
	}
}

type procKey struct {
	env     string
	verdict procs.Verdict
}

type procSum struct {
	n          int
	memory     uint64
	cpuPercent float64
}

func collectProcesses(b *batch, s monitor.State) {
	sums := map[procKey]*procSum{}
	for _, p := range s.Processes {
		k := procKey{p.EnvPath, p.Verdict}
		sum := sums[k]
		if sum == nil {
			sum = &procSum{}
			sums[k] = sum
		}
		sum.n++
		if p.GPUMemoryBytes != nil {
			sum.memory += *p.GPUMemoryBytes
		}
		sum.cpuPercent += p.CPUPercent
		for _, f := range p.Findings {
			switch f.Code {
			case finding.CodeJobOnCPU:
				b.add(descJobOnCPU, p.BusyFor.Seconds(), p.EnvPath, strconv.Itoa(p.PID), p.Name, string(p.Verdict), string(f.Severity))
			case finding.CodeJobStalled, finding.CodeJobSpinning:
				b.add(descJobStall, 1, p.EnvPath, strconv.Itoa(p.PID), p.Name, f.Code)
			}
		}
	}
	for k, sum := range sums {
		v := string(k.verdict)
		b.add(descProcs, float64(sum.n), k.env, v)
		b.add(descProcMem, float64(sum.memory), k.env, v)
		b.add(descProcCPU, sum.cpuPercent/100, k.env, v)
	}
}
