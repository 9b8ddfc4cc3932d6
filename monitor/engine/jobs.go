package engine

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/gpucanary/gpucanary/monitor"
	"github.com/gpucanary/gpucanary/monitor/finding"
	"github.com/gpucanary/gpucanary/monitor/gpu"
	"github.com/gpucanary/gpucanary/monitor/human"
	"github.com/gpucanary/gpucanary/monitor/jobend"
)

// JOB_ENDED: the GPU jobs seen at the process polls are held
// (jobend.Open) while they run, and every poll asks each held process
// whether it has ended; when every process of a job has, the job's end
// is explained (jobend.Explain) and published, if the job ran at least
// the minimum run time or someone asked for it (WatchEnd).

// DefaultJobMinRuntime is how long a GPU job must have run for its end
// to be told: shorter ones are tests, notebooks' cells, a script's
// import check.
const DefaultJobMinRuntime = 5 * time.Minute

// jobWatch is the jobs held between polls.
type jobWatch struct {
	members map[int]*member // by PID
	// siblings finds the job of a process whose parent is not a GPU
	// process by that parent and its command: the workers a launcher
	// (torchrun) started are one job.
	siblings map[string]*job
	// oom is the kernel's OOM kill count at the last poll (oomOK: read).
	oom   uint64
	oomOK bool
	// ended are the processes seen to end, by PID, with their start
	// times: one not reaped yet (a zombie) is still listed, by the
	// process scan and by a driver tearing its context down, and must
	// not be held, and its end told, again at every poll. An entry goes
	// when a scan no longer lists its PID.
	ended map[int]time.Time
	// stalls are the JOB_STALLED and JOB_SPINNING findings raised.
	stalls findingSet
	// shown is set while the state lists running jobs: an idle machine's
	// polls leave the state alone.
	shown bool
}

// member is one process of a job, held.
type member struct {
	held *jobend.Held
	job  *job
}

// job is one job: a process on the GPU with its DataLoader workers, or a
// launcher's workers.
type job struct {
	pid     int
	cmdline []string
	env     string
	start   time.Time
	pids    []int
	live    int
	sibling string // its key in siblings, "" when none
	// gpu: a process of it held GPU memory at some poll; asked: someone
	// asked to be told of its end.
	gpu, asked bool
	// What the polls saw of it: the most GPU memory it held, the sum and
	// count of its utilisation, and how full its fullest GPU was at the
	// last poll.
	peak    *uint64
	utilSum float64
	utilN   int
	memFrac float64
	best    *jobend.End // the end that tells most among its processes'
	bestPID int
	// stall is what JOB_STALLED and JOB_SPINNING remember of it
	// (stall.go).
	stall stallWatch
	// ring is its last samples (jobsamples.go); gpus the GPUs it held
	// memory on at the last poll, and ever; util the busiest one's
	// utilisation then; marked is set once its start was marked.
	ring     *sampleRing
	gpus     []int
	gpusEver []int
	util     *float64
	marked   bool
}

func newJobWatch() jobWatch {
	return jobWatch{members: map[int]*member{}, siblings: map[string]*job{}, ended: map[int]time.Time{}, stalls: findingSet{}}
}

// observeJobs holds the GPU jobs among rows (a process scan) and notes
// what each used of the GPU; it returns what this scan saw of each job,
// for the stall rules.
func (m *Monitor) observeJobs(rows []monitor.Process, g gpu.State, now time.Time) map[*job]*jobSample {
	jw := &m.jobs
	byPID := make(map[int]*monitor.Process, len(rows))
	for i := range rows {
		byPID[rows[i].PID] = &rows[i]
	}
	for pid := range jw.ended {
		if byPID[pid] == nil {
			delete(jw.ended, pid)
		}
	}
	polled := map[*job]bool{}
	sampled := map[*job]*jobSample{}
	var mem = map[*job]uint64{}
	var util = map[*job][]float64{}
	var procsOf = map[*job][]*monitor.Process{}
	for i := range rows {
		r := &rows[i]
		if !r.Job() {
			continue
		}
		j := jw.jobOf(r, byPID)
		if j == nil {
			continue
		}
		j.gpu = true
		procsOf[j] = append(procsOf[j], r)
		if !polled[j] {
			polled[j] = true
			j.memFrac = 0
			sampled[j] = &jobSample{}
		}
		sampled[j].add(r, g)
		if r.GPUMemoryBytes != nil {
			mem[j] += *r.GPUMemoryBytes
		}
		if r.SMPercent != nil {
			util[j] = append(util[j], float64(*r.SMPercent))
		}
		for _, d := range g.Devices {
			if !slices.Contains(r.GPUs, d.Index) {
				continue
			}
			if d.MemoryTotalBytes > 0 {
				j.memFrac = max(j.memFrac, float64(d.MemoryUsedBytes)/float64(d.MemoryTotalBytes))
			}
			if r.SMPercent == nil && d.UtilizationGPU != nil {
				util[j] = append(util[j], float64(*d.UtilizationGPU))
			}
		}
	}
	for j := range polled {
		if b, ok := mem[j]; ok && (j.peak == nil || b > *j.peak) {
			j.peak = &b
		}
		j.util = nil
		if u := util[j]; len(u) > 0 {
			busiest := slices.Max(u)
			j.utilSum += busiest
			j.utilN++
			j.util = &busiest
		}
		m.sampleJob(j, jobGPUs(procsOf[j]), g, now)
	}
	m.showJobs()
	return sampled
}

// sampleJob keeps one row of samples of the GPUs j is on now, and marks
// its start on them the first time it is seen on a GPU.
func (m *Monitor) sampleJob(j *job, gpus []int, g gpu.State, now time.Time) {
	j.gpus = gpus
	for _, i := range gpus {
		if !slices.Contains(j.gpusEver, i) {
			j.gpusEver = append(j.gpusEver, i)
		}
	}
	if len(gpus) == 0 {
		return
	}
	if j.ring == nil {
		j.ring = newSampleRing(monitor.JobSampleWindow, m.o.Interval)
	}
	row := make([]monitor.JobSample, 0, len(gpus))
	for _, d := range g.Devices {
		if slices.Contains(gpus, d.Index) {
			row = append(row, gpuSample(d, now))
		}
	}
	j.ring.add(row)
	if !j.marked {
		j.marked = true
		at := j.start
		if at.IsZero() {
			at = now
		}
		m.markJob(j, monitor.MarkStarted, at, "")
	}
}

// markJob notes a moment of j's life (monitor.MarkStarted, MarkEnded,
// MarkStalled) on each GPU it was seen on, for the GPUs window's charts;
// the newest monitor.JobMarksKept are kept. The stall rules call it with
// MarkStalled (markStalls).
func (m *Monitor) markJob(j *job, kind string, at time.Time, detail string) {
	if len(j.gpusEver) == 0 {
		return
	}
	name := human.JobName(j.cmdline)
	m.view.update(func(s *monitor.State) {
		marks := slices.Clone(s.JobMarks) // copy on write: earlier copies of the state share it
		for _, i := range j.gpusEver {
			marks = append(marks, monitor.JobMark{Time: at, Kind: kind, PID: j.pid, GPU: i, Label: name, Detail: detail})
		}
		if n := len(marks) - monitor.JobMarksKept; n > 0 {
			marks = slices.Delete(marks, 0, n)
		}
		s.JobMarks = marks
	})
}

// showJobs puts the GPU jobs running now into the state, oldest first.
func (m *Monitor) showJobs() {
	var runs []monitor.JobRun
	seen := map[*job]bool{}
	for _, mb := range m.jobs.members {
		j := mb.job
		if seen[j] || !j.gpu {
			continue
		}
		seen[j] = true
		runs = append(runs, monitor.JobRun{PID: j.pid, Command: j.cmdline, Env: j.env, Started: j.start,
			GPUs: slices.Clone(j.gpus), GPUPercent: j.util, Asked: j.asked,
			Quiet: !m.policy.Snoozed(JobSubject(j.pid), m.clock.Now()).IsZero()})
	}
	if len(runs) == 0 && !m.jobs.shown {
		return
	}
	m.jobs.shown = len(runs) > 0
	slices.SortFunc(runs, func(a, b monitor.JobRun) int {
		if c := a.Started.Compare(b.Started); c != 0 {
			return c
		}
		return a.PID - b.PID
	})
	m.view.update(func(s *monitor.State) { s.Jobs = runs })
}

// jobOf is the job of a GPU process, holding it first when it is new: the
// job of its topmost ancestor that is a GPU process too or runs the same
// command (DataLoader workers), or of a sibling of that ancestor with the
// same command under the same parent (a launcher's workers). nil when it
// cannot be held (it ended meanwhile).
func (jw *jobWatch) jobOf(r *monitor.Process, byPID map[int]*monitor.Process) *job {
	if mb, ok := jw.members[r.PID]; ok {
		return mb.job
	}
	if start, ok := jw.ended[r.PID]; ok && sameStart(start, r.StartTime) {
		return nil // ended, not reaped yet
	}
	held, err := jobend.Open("", r.PID, r.StartTime)
	if err != nil {
		return nil
	}
	root := r
	for seen := 0; seen < 64; seen++ { // a PPID loop cannot hold it
		p := byPID[root.PPID]
		if p == nil || p.PID == root.PID || !(p.Job() || slices.Equal(p.Cmdline, root.Cmdline)) {
			break
		}
		root = p
	}
	var j *job
	if mb, ok := jw.members[root.PID]; ok && root != r {
		j = mb.job
	}
	sib := ""
	if root.PPID > 1 {
		sib = fmt.Sprintf("%d|%s", root.PPID, strings.Join(root.Cmdline, "\x00"))
	}
	if j == nil && sib != "" {
		j = jw.siblings[sib]
	}
	if j == nil {
		j = &job{pid: root.PID, cmdline: root.Cmdline, env: root.EnvPath, start: root.StartTime, sibling: sib}
		if sib != "" {
			jw.siblings[sib] = j
		}
	}
	jw.add(j, held)
	if j.env == "" {
		j.env = r.EnvPath
	}
	return j
}

// add makes held a member of j.
func (jw *jobWatch) add(j *job, held *jobend.Held) {
	if len(jw.members) == 0 {
		// the count an end is compared with, from the first poll that
		// holds a process on
		jw.oom, jw.oomOK = jobend.OOMKills("")
	}
	jw.members[held.PID] = &member{held: held, job: j}
	j.live++
	if !slices.Contains(j.pids, held.PID) {
		j.pids = append(j.pids, held.PID)
	}
	if j.start.IsZero() || (!held.Start.IsZero() && held.Start.Before(j.start)) {
		j.start = held.Start
	}
}

// sameStart tells whether two readings of a process's start time are of
// one process: equal within the clock tick's rounding, or one unknown.
func sameStart(a, b time.Time) bool {
	if a.IsZero() || b.IsZero() {
		return true
	}
	d := a.Sub(b)
	return d < time.Second && d > -time.Second
}

// WatchEnd asks to be told when the process pid (started at start; zero
// when not known) ends, whatever its run time and whether or not it uses
// a GPU: a JOB_ENDED event then says how. The Processes window's "Tell
// me when it ends" calls it. An error when no such process runs.
func (m *Monitor) WatchEnd(pid int, start time.Time) error {
	held, err := jobend.Open("", pid, start)
	if err != nil {
		return err
	}
	err = m.request(func(context.Context) {
		jw := &m.jobs
		if mb, ok := jw.members[pid]; ok {
			mb.job.asked = true
			held.Close()
			m.showJobs() // the tray's menu says it was asked
			return
		}
		j := &job{pid: pid, cmdline: held.Cmdline, start: held.Start, asked: true}
		jw.add(j, held)
	})
	if err != nil {
		held.Close()
	}
	return err
}

// pollJobEnds asks every held process whether it has ended; a job whose
// processes all have is published as JOB_ENDED when it ran at least the
// minimum run time on a GPU, or was asked for.
func (m *Monitor) pollJobEnds(now time.Time) {
	jw := &m.jobs
	if len(jw.members) == 0 {
		return // nothing held: not even the OOM count is read
	}
	oom, oomOK := jobend.OOMKills("")
	var ended []*job
	for _, pid := range slices.Sorted(maps.Keys(jw.members)) {
		mb := jw.members[pid]
		done, st := mb.held.Poll()
		if !done {
			continue
		}
		j := mb.job
		end := jobend.Explain(jobend.Evidence{Status: st, OOMKilled: oomOK && jw.oomOK && oom > jw.oom,
			Logs: mb.held.Logs, MemFraction: j.memFrac})
		if j.best == nil || end.Rank() > j.best.Rank() || pid == j.pid && end.Rank() == j.best.Rank() {
			j.best, j.bestPID = &end, pid
		}
		jw.ended[pid] = mb.held.Start
		mb.held.Close()
		delete(jw.members, pid)
		j.live--
		if j.live == 0 {
			ended = append(ended, j)
		}
	}
	jw.oom, jw.oomOK = oom, oomOK
	var events []monitor.Event
	var told []*job
	for _, j := range ended {
		if j.sibling != "" && jw.siblings[j.sibling] == j {
			delete(jw.siblings, j.sibling)
		}
		m.policy.Unsnooze(JobSubject(j.pid))
		ran := jobend.RunTime(j.start, now)
		if j.marked {
			m.markJob(j, monitor.MarkEnded, now, string(j.best.How))
		}
		if !j.asked && (!j.gpu || ran < m.o.JobMinRuntime) {
			continue
		}
		events = append(events, jobEndedEvent(j, ran, now))
		told = append(told, j)
	}
	if len(ended) > 0 {
		m.showJobs()
	}
	if len(events) == 0 {
		return
	}
	m.view.update(func(s *monitor.State) {
		n := maps.Clone(s.JobsEnded) // copy on write: earlier copies of the state share the map
		if n == nil {
			n = map[jobend.How]uint64{}
		}
		for _, e := range events {
			n[e.Job.How]++
		}
		s.JobsEnded = n
	})
	m.publish(events)
	for i, j := range told {
		m.memory.saveJob(m.jobRecord(j, events[i]))
	}
}

// jobRecord is what is kept of j, which ended as ev says: its samples,
// the driver and its GPUs' names, its environment's verdict.
func (m *Monitor) jobRecord(j *job, ev monitor.Event) monitor.JobRecord {
	g := m.machine.gpu
	rec := monitor.JobRecord{Ended: ev, SampleSeconds: m.o.Interval.Seconds(), Driver: g.Driver, CUDADriver: g.CUDADriver,
		Simulated: g.Simulated, Samples: []monitor.JobSample{}}
	if j.ring != nil {
		rec.Samples = j.ring.samples()
	}
	for _, d := range g.Devices {
		if slices.Contains(j.gpusEver, d.Index) {
			if rec.GPUNames == nil {
				rec.GPUNames = map[int]string{}
			}
			rec.GPUNames[d.Index] = d.Name
		}
	}
	if e := m.envs.get(j.env); j.env != "" && e != nil {
		rec.EnvVerdict, rec.EnvFindings = e.report.Verdict, slices.Clone(e.report.Findings)
	}
	return rec
}

// jobEndedEvent is the JOB_ENDED event of a job that ended.
func jobEndedEvent(j *job, ran time.Duration, now time.Time) monitor.Event {
	je := &monitor.JobEnd{End: *j.best, PID: j.pid, Command: j.cmdline, Env: j.env, Started: j.start,
		RunSeconds: ran.Seconds(), PeakGPUMemoryBytes: j.peak, Asked: j.asked}
	slices.Sort(j.pids)
	if len(j.pids) > 1 {
		je.PIDs = j.pids
	}
	if j.utilN > 0 {
		mean := j.utilSum / float64(j.utilN)
		je.MeanGPUPercent = &mean
	}
	msg := jobend.Say(human.CommandLine(j.cmdline, "", ""), j.pid, ran, je.End)
	if j.env != "" {
		msg += " Environment: " + j.env + "."
	}
	var seen []string
	if je.PeakGPUMemoryBytes != nil {
		seen = append(seen, "peak GPU memory "+human.Bytes(*je.PeakGPUMemoryBytes))
	}
	if je.MeanGPUPercent != nil {
		seen = append(seen, fmt.Sprintf("mean GPU utilisation %.0f%%", *je.MeanGPUPercent))
	}
	if len(j.pids) > 1 {
		seen = append(seen, fmt.Sprintf("%d processes (workers) as one job", len(j.pids)))
	}
	if len(seen) > 0 {
		msg += " Seen: " + strings.Join(seen, ", ") + "."
	}
	sev := finding.SeverityInfo
	switch je.How {
	case jobend.Crashed:
		sev = finding.SeverityError
	case jobend.Unknown:
		sev = finding.SeverityWarning
	}
	f := finding.Finding{Code: finding.CodeJobEnded, Severity: sev, Message: msg, Env: j.env, PID: j.pid}
	return monitor.Event{Time: now, Kind: monitor.KindJobEnded, Env: j.env, PID: j.pid, Finding: &f, Message: msg, Job: je}
}

// closeJobs lets every held process go (Run's end).
func (m *Monitor) closeJobs() {
	for _, mb := range m.jobs.members {
		mb.held.Close()
	}
}
