package prom

import (
	"cmp"
	"slices"
	"strconv"
	"sync/atomic"

	"github.com/gpucanary/gpucanary/monitor"
	"github.com/gpucanary/gpucanary/monitor/procs"
)

// DefaultProcessSeriesMax is --collector.processes.max's default: how many
// processes get series of their own at most.
const DefaultProcessSeriesMax = 200

// ProcessSeries turns on a series per process (the agent's
// --collector.processes), off by default: each process adds a series
// for as long as it lives, and a PID label makes a new one for every job,
// so a busy machine's series churn. Max bounds how many a scrape gives;
// the processes past it are counted in
// gpucanary_process_series_dropped_total, never silently lost.
type ProcessSeries struct {
	// Max is the most processes a scrape gives series for; 0 turns
	// per-process series off.
	Max int
}

var (
	processLabels   = []string{"pid", "env", "verdict", "container", "pod", "namespace"}
	descProcGPUMem  = desc("process_gpu_memory_bytes", "GPU memory one process holds, on all GPUs (absent where the driver cannot say: WDDM, WSL2). Only with --collector.processes; container, pod and namespace are empty for a process on the host or where they are not known.", processLabels...)
	descProcCPUOne  = desc("process_cpu_cores", "CPU one process uses over the last poll interval, in cores. Only with --collector.processes; absent for a PID outside this view.", processLabels...)
	descProcDropped = newDesc(Namespace+"_process_series_dropped_total", "Processes left without series of their own because --collector.processes.max was reached, summed over scrapes. Only with --collector.processes.", counterKind)
)

// perProcess is the per-process part of a Collector.
type perProcess struct {
	max     int
	dropped atomic.Uint64
}

func (pp *perProcess) descs() []*Desc {
	if pp == nil {
		return nil
	}
	return []*Desc{descProcGPUMem, descProcCPUOne, descProcDropped}
}

// collect gives each process that holds GPU memory or is flagged (a
// verdict of cpu or cuda-idle, or a finding) its series, and each PID the
// driver lists that is no longer running (orphaned: the memory it still
// holds is what GPU_MEMORY_ORPHANED is about), the most telling
// first: findings, then the most GPU memory, then the lowest PID.
func (pp *perProcess) collect(b *batch, s monitor.State) {
	if pp == nil {
		return
	}
	var rows []monitor.Process
	for _, p := range s.Processes {
		if p.Verdict == procs.VerdictGPU || p.Verdict == procs.VerdictCPU || p.Verdict == procs.VerdictCUDAIdle ||
			p.Verdict == procs.VerdictOrphaned || len(p.Findings) > 0 {
			rows = append(rows, p)
		}
	}
	slices.SortFunc(rows, func(a, b monitor.Process) int {
		if c := cmp.Compare(flagged(b), flagged(a)); c != 0 {
			return c
		}
		if c := cmp.Compare(memoryOf(b), memoryOf(a)); c != 0 {
			return c
		}
		return cmp.Compare(a.PID, b.PID)
	})
	if len(rows) > pp.max {
		pp.dropped.Add(uint64(len(rows) - pp.max))
		rows = rows[:pp.max]
	}
	read := map[string]bool{}
	for _, e := range s.Envs {
		if e.Env != nil {
			read[e.Path] = true
		}
	}
	for _, p := range rows {
		labels := []string{strconv.Itoa(p.PID), envLabel(p, read), string(p.Verdict), "", "", ""}
		if c := p.Container; c != nil {
			labels[3], labels[4], labels[5] = c.ID, cmp.Or(c.Pod, c.PodUID), c.Namespace
		}
		if p.GPUMemoryBytes != nil {
			b.add(descProcGPUMem, float64(*p.GPUMemoryBytes), labels...)
		}
		if p.Measured() {
			b.add(descProcCPUOne, p.CPUPercent/100, labels...)
		}
	}
	b.add(descProcDropped, float64(pp.dropped.Load()))
}

// envLabel is the process's environment for its env label, only when it
// is one GPU Canary read: the path an environment report has, or one the
// process scan matched to a read environment (its torch is known). A
// process's VIRTUAL_ENV is whatever its parent set, any text at all, and
// a label of it would put that text into every dashboard and alert that
// groups by env.
func envLabel(p monitor.Process, read map[string]bool) string {
	if read[p.EnvPath] || p.Torch != nil {
		return p.EnvPath
	}
	return ""
}

// flagged is 1 for a process with a finding, else 0.
func flagged(p monitor.Process) int { return min(1, len(p.Findings)) }

func memoryOf(p monitor.Process) uint64 {
	if p.GPUMemoryBytes == nil {
		return 0
	}
	return *p.GPUMemoryBytes
}
