package engine

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gpucanary/gpucanary/monitor"
	"github.com/gpucanary/gpucanary/monitor/finding"
	"github.com/gpucanary/gpucanary/monitor/gpu"
	"github.com/gpucanary/gpucanary/monitor/health"
	"github.com/gpucanary/gpucanary/monitor/human"
)

// JOB_STALLED and JOB_SPINNING (issue 44; TRAINING-FACTS.md §5.2): the
// jobs observeJobs groups are judged at every process poll from what
// their GPUs say. A stall is told only of a job that computed before
// (StallArmAfter at load): a notebook or a server that holds memory and
// waits by design never computed that long in one go of polls, and a
// training run that pauses to evaluate or save comes back within the
// window.

// Defaults of the stall rules' times.
const (
	// DefaultStallWindow is how long a job's GPU must stay idle (or spin)
	// for it to be told.
	DefaultStallWindow = 10 * time.Minute
	// DefaultStallArmAfter is how long a job must have computed for a
	// stall of it to be told.
	DefaultStallArmAfter = 5 * time.Minute
)

// Thresholds of the stall rules (docs/codes.md).
const (
	// stallIdlePercent is the utilisation at or under which a job's GPU
	// is idle.
	stallIdlePercent = 2
	// stallMinBytes is the GPU memory a job must hold for its idle GPU
	// to be a stall: less is a process that let go of its work.
	stallMinBytes = 1 << 30
	// spinPercent and spinPowerShare: a GPU at or above spinPercent
	// utilisation drawing at most spinPowerShare of its enforced power
	// limit runs a kernel that waits rather than computes.
	spinPercent    = 95
	spinPowerShare = 0.30
	// cpuBusyCores is the CPU, in cores, a stalled job's processes must
	// use between two polls to be busy on the CPU rather than waiting.
	cpuBusyCores = 0.5
	// maxPollGap is the longest time between two samples of a job that
	// the rules take as seen throughout (three poll intervals, when
	// longer).
	maxPollGap = time.Minute
)

// JobSubject is what Snooze takes to silence one job's notifications
// (JOB_STALLED, JOB_SPINNING, JOB_ON_CPU, JOB_ENDED) rather than its
// environment's: "job:" and the job's PID, as its events carry it. The
// snooze is lifted when the job ends, so a PID used again is told.
func JobSubject(pid int) string { return "job:" + strconv.Itoa(pid) }

// stallWatch is what the stall rules remember of a job between polls.
type stallWatch struct {
	lastAt time.Time // the last poll that sampled it
	// computed is how long it has been at load over the polls; armed
	// once that reaches the arm time, for the job's life.
	computed time.Duration
	armed    bool
	// idleSince and spinSince start the run of polls its GPU has been
	// idle holding memory, or spinning; zero when it is not.
	idleSince, spinSince time.Time
	// cpu is each of its processes' CPU time at the last poll, in
	// seconds, by PID: a worker that joins or leaves is no CPU used.
	cpu map[int]float64
}

// jobSample is what one process poll saw of a job.
type jobSample struct {
	held      uint64 // GPU memory its processes hold
	heldKnown bool   // the driver said it for one of them at least
	devUsed   uint64 // else: the most memory used on one of its GPUs
	gpus      []int
	util      *uint32 // the busiest of its GPUs
	spin      *gpu.Device
	states    []string        // its processes' scheduling states
	cpu       map[int]float64 // its processes' CPU time, in seconds, by PID
}

// sample adds a row of a job and the devices it holds to s.
func (s *jobSample) add(r *monitor.Process, g gpu.State) {
	if r.GPUMemoryBytes != nil {
		s.held += *r.GPUMemoryBytes
		s.heldKnown = true
	}
	if r.State != "" {
		s.states = append(s.states, r.State)
	}
	if r.Measured() {
		if s.cpu == nil {
			s.cpu = map[int]float64{}
		}
		s.cpu[r.PID] = r.CPUTimeSeconds
	}
	for i := range g.Devices {
		d := &g.Devices[i]
		if !slices.Contains(r.GPUs, d.Index) || slices.Contains(s.gpus, d.Index) {
			continue
		}
		s.gpus = append(s.gpus, d.Index)
		s.devUsed = max(s.devUsed, d.MemoryUsedBytes)
		if d.UtilizationGPU != nil && (s.util == nil || *d.UtilizationGPU > *s.util) {
			s.util = d.UtilizationGPU
		}
		if spinning(d) && s.spin == nil {
			s.spin = d
		}
	}
}

// holds is the GPU memory the job holds: its processes' where the
// driver says it, else (WDDM) its GPUs' use.
func (s *jobSample) holds() uint64 {
	if s.heldKnown {
		return s.held
	}
	return s.devUsed
}

// spinning is true when d reads as fully busy at a fraction of its
// power limit.
func spinning(d *gpu.Device) bool {
	return d.UtilizationGPU != nil && *d.UtilizationGPU >= spinPercent && d.PowerWatts != nil && d.PowerLimitWatts != nil &&
		*d.PowerLimitWatts > 0 && *d.PowerWatts <= spinPowerShare**d.PowerLimitWatts
}

// judgeStalls judges the jobs sampled at this poll and returns the
// JOB_STALLED and JOB_SPINNING findings that hold now.
func (m *Monitor) judgeStalls(now time.Time, sampled map[*job]*jobSample) []finding.Finding {
	var out []finding.Finding
	for _, j := range slices.SortedFunc(maps.Keys(sampled), func(a, b *job) int { return a.pid - b.pid }) {
		if f, ok := j.stall.judge(now, j, sampled[j], m.o.StallWindow, m.o.StallArmAfter, max(maxPollGap, 3*m.o.Interval)); ok {
			out = append(out, f)
		}
	}
	return out
}

// judge takes one poll's sample of j and says whether j is stalled or
// spinning now. A gap longer than gap since the last sample breaks the
// runs of polls.
func (w *stallWatch) judge(now time.Time, j *job, s *jobSample, window, armAfter, gap time.Duration) (finding.Finding, bool) {
	dt := time.Duration(0)
	if !w.lastAt.IsZero() && now.After(w.lastAt) {
		dt = now.Sub(w.lastAt)
	}
	cpuRate := 0.0
	if dt > 0 {
		for pid, t := range s.cpu {
			if was, ok := w.cpu[pid]; ok && t > was {
				cpuRate += (t - was) / dt.Seconds()
			}
		}
	}
	w.lastAt, w.cpu = now, s.cpu
	if dt > gap {
		// Nothing was seen between (a suspended machine, polls held up):
		// no run of polls goes on through the gap, and it is no time
		// spent computing.
		w.idleSince, w.spinSince = time.Time{}, time.Time{}
		dt = 0
	}
	if s.util == nil {
		// The driver does not say: nothing to judge by, and no run of
		// polls goes on through it.
		w.idleSince, w.spinSince = time.Time{}, time.Time{}
		return finding.Finding{}, false
	}
	u := *s.util
	if u >= health.LoadPercent {
		w.computed += dt
		w.armed = w.armed || w.computed >= armAfter
	}
	if u <= stallIdlePercent && s.holds() >= stallMinBytes {
		if w.idleSince.IsZero() {
			w.idleSince = now
		}
	} else {
		w.idleSince = time.Time{}
	}
	if s.spin != nil {
		if w.spinSince.IsZero() {
			w.spinSince = now
		}
	} else {
		w.spinSince = time.Time{}
	}
	who := jobWho(j)
	switch {
	case w.armed && !w.idleSince.IsZero() && now.Sub(w.idleSince) >= window:
		msg := fmt.Sprintf("%s has held %s of GPU memory on %s with the GPU idle (%d%% utilisation) for %s, after computing for %s. %s",
			who, human.Bytes(s.holds()), gpuList(s.gpus), u, human.Duration(now.Sub(w.idleSince)), human.Duration(w.computed), stallDoing(s.states, cpuRate, j.pid))
		return finding.Finding{Code: finding.CodeJobStalled, Severity: finding.SeverityWarning, Message: msg, Env: j.env, PID: j.pid}, true
	case !w.spinSince.IsZero() && now.Sub(w.spinSince) >= window:
		d := s.spin
		msg := fmt.Sprintf("%s has kept GPU %d at %d%% utilisation while it draws %.0f W of its %.0f W limit (%.0f%%) for %s: the GPU spins without working, as a collective (an NCCL all-reduce) waiting for a rank that never joins does. Look for a rank of the job that crashed or hangs; NCCL_DEBUG=INFO shows which collective waits, and a timeout in init_process_group makes a wedged collective fail instead of hanging.",
			who, d.Index, *d.UtilizationGPU, *d.PowerWatts, *d.PowerLimitWatts, 100**d.PowerWatts / *d.PowerLimitWatts, human.Duration(now.Sub(w.spinSince)))
		return finding.Finding{Code: finding.CodeJobSpinning, Severity: finding.SeverityWarning, Message: msg, Env: j.env, PID: j.pid}, true
	}
	return finding.Finding{}, false
}

// stallDoing says what a stalled job's processes do while its GPU waits:
// waiting on I/O (state D), busy on the CPU (state R, or CPU time rising
// by half a core or more), or sleeping. Without states (Windows) only
// the CPU time tells.
func stallDoing(states []string, cpuRate float64, pid int) string {
	switch {
	case slices.Contains(states, "D"):
		return "The process is waiting on I/O (state D): a slow or hung disk or network file system holds it; check the storage the job reads its data from and writes its checkpoints to."
	case slices.Contains(states, "R") || cpuRate >= cpuBusyCores:
		return fmt.Sprintf("The process is busy on the CPU (%.1f cores): the GPU waits for data, a DataLoader bottleneck or work done on the CPU; more DataLoader workers (num_workers) or lighter preprocessing keep the GPU fed.", cpuRate)
	case len(states) == 0:
		return fmt.Sprintf("The process uses no CPU (whether it waits on I/O is not visible here): it waits for something that does not come, a lock, a DataLoader worker that died, another rank; py-spy dump --pid %d shows where.", pid)
	}
	return fmt.Sprintf("The process is sleeping and uses no CPU: it waits for something that does not come, a lock, a DataLoader worker that died, another rank; py-spy dump --pid %d shows where.", pid)
}

// jobWho names a job: its command and PID.
func jobWho(j *job) string {
	if c := human.CommandLine(j.cmdline, "", ""); c != "" {
		return fmt.Sprintf("%s (PID %d)", c, j.pid)
	}
	return fmt.Sprintf("PID %d", j.pid)
}

// gpuList is "GPU 0" or "GPUs 0, 1".
func gpuList(idx []int) string {
	slices.Sort(idx)
	var s []string
	for _, i := range idx {
		s = append(s, strconv.Itoa(i))
	}
	if len(s) == 1 {
		return "GPU " + s[0]
	}
	return "GPUs " + strings.Join(s, ", ")
}

// markStalls marks on the GPUs' charts (monitor.MarkStalled) the jobs
// whose JOB_STALLED or JOB_SPINNING was just raised, at the poll their
// idling or spinning began.
func (m *Monitor) markStalls(raised []finding.Finding, sampled map[*job]*jobSample) {
	for _, f := range raised {
		for j := range sampled {
			if j.pid != f.PID {
				continue
			}
			at, detail := j.stall.idleSince, ""
			if f.Code == finding.CodeJobSpinning {
				at, detail = j.stall.spinSince, "spinning"
			}
			if at.IsZero() {
				at = m.clock.Now()
			}
			m.markJob(j, monitor.MarkStalled, at, detail)
		}
	}
}

// stallEvents are the events of JOB_STALLED and JOB_SPINNING changing;
// each is about the job's environment and PID. A clear says whether the
// job computes again or left its GPU (live: it was seen on it at this
// poll).
func stallEvents(at time.Time, c findingChange, live func(pid int) bool) []monitor.Event {
	var events []monitor.Event
	for _, f := range c.raised {
		events = append(events, monitor.Event{Time: at, Kind: monitor.KindFindingRaised, Env: f.Env, PID: f.PID, Finding: &f, Message: f.Message})
	}
	for _, f := range c.cleared {
		msg := fmt.Sprintf("PID %d no longer runs on its GPU (it ended or let go of it).", f.PID)
		switch {
		case !live(f.PID):
		case f.Code == finding.CodeJobStalled:
			msg = fmt.Sprintf("PID %d uses its GPU again (or let go of its memory).", f.PID)
		default:
			msg = fmt.Sprintf("PID %d's GPU no longer spins at low power.", f.PID)
		}
		events = append(events, monitor.Event{Time: at, Kind: monitor.KindFindingCleared, Env: f.Env, PID: f.PID, Finding: &f, Message: msg})
	}
	return events
}

// QuietJob silences the notifications about the job of the process pid
// (started at start; zero when not known) until that job ends: the
// Processes window's "Not this job", for a run whose stalls are expected
// (a job waiting on a queue, a debugger). It is the policy's snooze
// (Snooze, JobSubject), of the job's own PID, so a worker's PID quiets
// the whole job. An error when GPU Canary holds no GPU job with that
// process.
func (m *Monitor) QuietJob(pid int, start time.Time) error {
	answer := make(chan error, 1)
	err := m.request(func(context.Context) {
		mb, ok := m.jobs.members[pid]
		if !ok || !start.IsZero() && !mb.held.Start.IsZero() && !mb.held.Start.Equal(start) {
			answer <- fmt.Errorf("quieting PID %d: %w", pid, ErrNoJob)
			return
		}
		// Until the job ends (pollJobEnds lifts it), whatever that takes.
		m.policy.Snooze(JobSubject(mb.job.pid), m.clock.Now().AddDate(100, 0, 0))
		m.showJobs() // the tray's menu says it is quiet
		answer <- nil
	})
	if err != nil {
		return err
	}
	select {
	case err := <-answer:
		return err
	case <-m.stopped:
		return ErrStopped
	}
}

// ErrNoJob: the process is no GPU job the engine holds (QuietJob).
var ErrNoJob = errors.New("no GPU job GPU Canary watches has this process")
