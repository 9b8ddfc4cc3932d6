package engine

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/gpucanary/gpucanary/monitor"
	"github.com/gpucanary/gpucanary/monitor/finding"
	"github.com/gpucanary/gpucanary/monitor/gpu"
	"github.com/gpucanary/gpucanary/monitor/health"
	"github.com/gpucanary/gpucanary/monitor/inspect"
	"github.com/gpucanary/gpucanary/monitor/procs"
)

// What the engine polls on every tick: the GPU, the processes, and the
// environments no file watch covers.

// pollGPU reads the GPU and reports a driver appearing or vanishing, or a
// device lost; findings that depend on the GPU are evaluated again
// whenever what the rules read of it changes (a GPU that woke up and now
// tells its compute capability included), and said again when their
// verdict changed (findingSet.update).
func (m *Monitor) pollGPU(ctx context.Context, first bool) {
	if m.o.GPU == nil {
		return
	}
	g := m.o.GPU.Snapshot(ctx) // annotated (New: kb.Annotated)
	prev := m.machine.gpu
	m.machine.gpu = g
	m.view.update(func(s *monitor.State) { s.GPU = g })
	now := m.clock.Now()
	m.pollGPUHealth(now, g)
	if first {
		m.publish(gpuFindingEvents(now, m.machine.gpuFinds.update(health.CheckGPU(g))))
		return
	}
	msg := gpuChange(prev, g)
	if msg != "" {
		m.publish([]monitor.Event{{Time: now, Kind: monitor.KindGPUStateChanged, Message: msg}})
		m.publish(gpuFindingEvents(now, m.machine.gpuFinds.update(health.CheckGPU(g))))
	}
	if msg == "" && ruleInputs(prev) == ruleInputs(g) {
		return
	}
	for _, p := range m.envs.paths() {
		m.recheckEnv(p, g, now)
	}
}

// recheckEnv evaluates the rules on an environment again for the GPU g,
// from what was read of it, its uv project's findings included (whether
// the torch its lock installs runs here depends on the GPU); a uv project
// that could not be read keeps its finding as it was.
func (m *Monitor) recheckEnv(path string, g gpu.State, now time.Time) {
	e := m.envs.get(path)
	if e.report.Env == nil || len(e.report.Env.Packages) == 0 && e.report.Verdict == monitor.VerdictError {
		return
	}
	fs := inspect.Rejudge(e.report, g, m.o.Health)
	e.report.Findings = fs
	e.report.Verdict = monitor.VerdictOf(e.report.Env, fs)
	m.publish(envFindingEvents(path, now, e.findings.update(fs)))
}

// ruleInputs is what the rules read of the GPU: the driver, its CUDA
// version, and each device's name, compute capability and sleep.
func ruleInputs(g gpu.State) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s|%s", g.Driver, g.CUDADriver)
	for _, d := range g.Devices {
		fmt.Fprintf(&b, "|%s/%s/%v", d.Name, d.ComputeCapability, d.Asleep)
	}
	return b.String()
}

// processPoll is the process side between polls.
type processPoll struct {
	ticks   int
	idle    bool // the last scan saw no GPU workload
	tracker *procs.BusyTracker
	jobs    findingSet // JOB_ON_CPU findings
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
	pp := &m.procs
	pp.ticks++
	if pp.idle && pp.ticks%idleScanEvery != 0 && !m.gpuBusy() {
		return
	}
	ps, err := m.o.Processes.Scan(ctx)
	if err != nil {
		m.log.Warn("scanning processes", "err", err)
		return
	}
	if pp.tracker == nil {
		pp.tracker = procs.NewBusyTracker()
	}
	now := m.clock.Now()
	rows := inspect.Processes(ps, m.machine.gpu, m.envs.envs(), m.o.Reader.Kernels, m.o.Busy, pp.tracker, now, m.o.Alive)
	pp.idle = len(rows) == 0
	var fs []finding.Finding
	for _, r := range rows {
		fs = append(fs, r.Findings...)
	}
	sampled := m.observeJobs(rows, m.machine.gpu, now)
	stalls := m.judgeStalls(now, sampled)
	attachStalls(rows, stalls)
	m.view.update(func(s *monitor.State) { s.Processes = rows })
	m.publish(jobEvents(now, pp.jobs.update(fs)))
	change := m.jobs.stalls.update(stalls)
	m.markStalls(change.raised, sampled)
	m.publish(stallEvents(now, change, func(pid int) bool {
		for j := range sampled {
			if j.pid == pid {
				return true
			}
		}
		return false
	}))
}

// attachStalls adds each JOB_STALLED and JOB_SPINNING finding to the row
// of its job's process, so the Processes window and `watch`'s state show
// it where the job is.
func attachStalls(rows []monitor.Process, stalls []finding.Finding) {
	for _, f := range stalls {
		for i := range rows {
			if rows[i].PID == f.PID {
				rows[i].Findings = append(slices.Clip(rows[i].Findings), f)
				break
			}
		}
	}
}

// gpuBusy is true when NVML lists any process: then processes are scanned
// on every poll.
func (m *Monitor) gpuBusy() bool {
	for _, d := range m.machine.gpu.Devices {
		if len(d.Processes) > 0 {
			return true
		}
	}
	return false
}

// pollUnwatched rereads environments that could not be watched (an
// inotify limit) when their site-packages changed.
func (m *Monitor) pollUnwatched(ctx context.Context) {
	m.readEnvs(ctx, viaWatch, m.w.changedUnwatched()...)
	if n := m.w.unwatchedCount(); n > 0 && m.w.fs != nil {
		m.degrade("inotify-limit", fmt.Sprintf("%d environment(s) could not be watched (the inotify watch limit was reached, see fs.inotify.max_user_watches) and are polled every %s instead", n, m.o.Interval))
	}
}
