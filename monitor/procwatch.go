package monitor

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/gpucanary/gpucanary/monitor/gpu"
	"github.com/gpucanary/gpucanary/monitor/health"
	"github.com/gpucanary/gpucanary/monitor/procs"
	"github.com/gpucanary/gpucanary/monitor/pyenv"
)

// ProcessSource is the process side of the engine: one scan per poll.
type ProcessSource interface {
	Scan(ctx context.Context) ([]procs.Proc, error)
}

var _ ProcessSource = (*procs.Scanner)(nil)

// Process is one row of `gpucanary ps` with the findings about it.
type Process struct {
	procs.Row
	Findings []health.Finding `json:"findings"`
}

// Processes classifies one scan against the GPU and the known
// environments; tracker is nil for a one-shot view.
func Processes(ps []procs.Proc, g gpu.State, envs map[string]*pyenv.Env, rule procs.BusyRule, tracker *procs.BusyTracker, now time.Time) []Process {
	rows := procs.Classify(ps, g, envs, rule, tracker, now)
	out := make([]Process, len(rows))
	for i, r := range rows {
		fs := health.CheckProcess(r)
		if fs == nil {
			fs = []health.Finding{}
		}
		out[i] = Process{Row: r, Findings: fs}
	}
	return out
}

// idleScanEvery: with no GPU workload seen, processes are scanned only on
// every fifth poll (10 s at the default interval); JOB_ON_CPU's window is
// 20 s, so nothing is missed, and an idle machine costs less.
const idleScanEvery = 5

// pollProcesses scans processes and raises or clears JOB_ON_CPU.
func (m *Monitor) pollProcesses(ctx context.Context) {
	if m.o.Processes == nil {
		return
	}
	m.procTick++
	if m.idle && m.procTick%idleScanEvery != 0 && !m.gpuBusy() {
		return
	}
	ps, err := m.o.Processes.Scan(ctx)
	if err != nil {
		m.log.Warn("scanning processes", "err", err)
		return
	}
	envs := make(map[string]*pyenv.Env, len(m.envs))
	for p, e := range m.envs {
		envs[p] = e.report.Env
	}
	if m.tracker == nil {
		m.tracker = procs.NewBusyTracker()
	}
	now := time.Now()
	rows := Processes(ps, m.lastGPU, envs, m.o.Busy, m.tracker, now)
	m.idle = len(rows) == 0
	m.mu.Lock()
	m.state.Processes = rows
	m.mu.Unlock()

	var events []Event
	cur := map[string]health.Finding{}
	for _, r := range rows {
		for _, f := range r.Findings {
			cur[f.Key()] = f
			if _, had := m.jobs[f.Key()]; !had {
				f := f
				events = append(events, Event{Time: now, Kind: KindJobOnCPU, Env: r.EnvPath, PID: r.PID, Finding: &f, Message: f.Message})
			}
		}
	}
	for _, k := range slices.Sorted(maps.Keys(m.jobs)) {
		if _, still := cur[k]; still {
			continue
		}
		f := m.jobs[k]
		events = append(events, Event{Time: now, Kind: KindJobOnCPUCleared, Env: f.Env, PID: f.PID, Finding: &f,
			Message: fmt.Sprintf("PID %d is no longer busy on the CPU (it moved to the GPU, calmed down or exited).", f.PID)})
	}
	m.jobs = cur
	m.publish(events)
}

// gpuBusy is true when NVML lists any process: then processes are scanned
// on every poll.
func (m *Monitor) gpuBusy() bool {
	for _, d := range m.lastGPU.Devices {
		if len(d.Processes) > 0 {
			return true
		}
	}
	return false
}
