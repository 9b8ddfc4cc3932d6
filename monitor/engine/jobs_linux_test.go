package engine_test

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gpucanary/gpucanary/monitor"
	"github.com/gpucanary/gpucanary/monitor/engine"
	"github.com/gpucanary/gpucanary/monitor/jobend"
	"github.com/gpucanary/gpucanary/monitor/monitortest"
	"github.com/gpucanary/gpucanary/monitor/procs"
	"github.com/gpucanary/gpucanary/monitor/store"
)

// held is a real process the test started; done is closed once it was
// reaped (at once, as a shell reaps its child).
type held struct {
	cmd  *exec.Cmd
	in   io.WriteCloser
	done chan struct{}
}

func startHeld(t *testing.T, args ...string) *held {
	t.Helper()
	cmd := exec.Command(args[0], args[1:]...)
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	h := &held{cmd: cmd, in: in, done: make(chan struct{})}
	go func() { cmd.Wait(); close(h.done) }()
	t.Cleanup(func() { cmd.Process.Kill(); <-h.done })
	return h
}

func jobEnded(pid int) func(monitor.Event) bool {
	return func(e monitor.Event) bool { return e.Kind == monitor.KindJobEnded && e.PID == pid }
}

// TestJobEndedOnlyPastTheMinimumOrAsked: a GPU job shorter than the
// minimum run time ends and nothing is said; a process one asked about
// (WatchEnd), on the GPU or not, is told whatever its run time. A PID no
// process has cannot be asked about.
func TestJobEndedOnlyPastTheMinimumOrAsked(t *testing.T) {
	short := startHeld(t, "sh", "-c", "read x; exit 0")
	asked := startHeld(t, "sh", "-c", "read y; exit 0") // another command: the same under one parent would be one job (a launcher's workers)
	other := startHeld(t, "sleep", "300")
	gpu := monitortest.SimGPU(t, fmt.Sprintf(`{"driver": "550.54.15", "cuda_driver": "12.4",
 "devices": [{"name": "NVIDIA A100-SXM4-40GB", "compute_capability": "8.0", "memory_total_bytes": 42949672960,
              "processes": [{"pid": %d, "used_memory_bytes": 1073741824}, {"pid": %d, "used_memory_bytes": 1073741824}]}]}`,
		short.cmd.Process.Pid, asked.cmd.Process.Pid))
	f := monitortest.NewTorches(t)
	venv := f.Venv(t, filepath.Join(t.TempDir(), "proj", ".venv"))
	e := monitortest.Start(t, engine.Options{Paths: []string{venv}, GPU: gpu, Processes: procs.NewSource(procs.Options{}), JobMinRuntime: time.Hour})

	if err := e.M.WatchEnd(1<<22+7, time.Time{}); !errors.Is(err, jobend.ErrNoProcess) {
		t.Errorf("WatchEnd of no process: %v", err)
	}
	start, err := procs.StartTimeOf(other.cmd.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.M.WatchEnd(other.cmd.Process.Pid, start.Add(-time.Hour)); !errors.Is(err, jobend.ErrNoProcess) {
		t.Errorf("WatchEnd with another start time: %v", err)
	}
	for _, h := range []*held{asked, other} {
		st, _ := procs.StartTimeOf(h.cmd.Process.Pid)
		if err := e.M.WatchEnd(h.cmd.Process.Pid, st); err != nil {
			t.Fatal(err)
		}
	}
	// The short job ends first, then the asked GPU job, then the other
	// process: when the last is told, the polls have seen the others end.
	short.in.Close()
	<-short.done
	asked.in.Close()
	<-asked.done
	a := e.Wait(60*time.Second, jobEnded(asked.cmd.Process.Pid))
	other.cmd.Process.Kill()
	<-other.done
	o := e.Wait(60*time.Second, jobEnded(other.cmd.Process.Pid))
	if n := e.Count(jobEnded(short.cmd.Process.Pid)); n != 0 {
		t.Errorf("a job shorter than the minimum run time was told %d times:\n%s", n, e.Dump())
	}
	for _, ev := range []monitor.Event{a, o} {
		if ev.Job == nil || !ev.Job.Asked || ev.Job.How != jobend.Unknown || !ev.Notify {
			t.Errorf("asked-for end = %+v (job %+v)", ev, ev.Job)
		}
	}
	if !strings.Contains(o.Message, "sleep 300") || !strings.Contains(o.Message, "not visible to other processes on Linux") {
		t.Errorf("message = %q", o.Message)
	}
	if a.Job.PeakGPUMemoryBytes == nil || *a.Job.PeakGPUMemoryBytes != 1<<30 || o.Job.PeakGPUMemoryBytes != nil {
		t.Errorf("peaks: asked %v, other %v", a.Job.PeakGPUMemoryBytes, o.Job.PeakGPUMemoryBytes)
	}
}

// TestWorkersAreOneJob: two GPU processes one parent started with the
// same command (a launcher's DDP workers) are one job, told once when
// the last of them ends, with both PIDs and their memory summed.
func TestWorkersAreOneJob(t *testing.T) {
	a := startHeld(t, "sh", "-c", "read x; exit 0")
	b := startHeld(t, "sh", "-c", "read x; exit 0")
	gpu := monitortest.SimGPU(t, fmt.Sprintf(`{"driver": "550.54.15", "cuda_driver": "12.4",
 "devices": [{"name": "NVIDIA A100-SXM4-40GB", "compute_capability": "8.0", "memory_total_bytes": 42949672960,
              "processes": [{"pid": %d, "used_memory_bytes": 1073741824}]},
             {"name": "NVIDIA A100-SXM4-40GB", "compute_capability": "8.0", "memory_total_bytes": 42949672960,
              "processes": [{"pid": %d, "used_memory_bytes": 2147483648}]}]}`,
		a.cmd.Process.Pid, b.cmd.Process.Pid))
	f := monitortest.NewTorches(t)
	venv := f.Venv(t, filepath.Join(t.TempDir(), "proj", ".venv"))
	e := monitortest.Start(t, engine.Options{Paths: []string{venv}, GPU: gpu, Processes: procs.NewSource(procs.Options{}), JobMinRuntime: time.Millisecond})
	a.in.Close()
	<-a.done
	b.in.Close()
	<-b.done
	isJob := func(ev monitor.Event) bool { return ev.Kind == monitor.KindJobEnded }
	ev := e.Wait(60*time.Second, isJob)
	if n := e.Count(isJob); n != 1 {
		t.Errorf("%d JOB_ENDED for one job of two workers:\n%s", n, e.Dump())
	}
	if ev.Job == nil || len(ev.Job.PIDs) != 2 || ev.Job.PeakGPUMemoryBytes == nil || *ev.Job.PeakGPUMemoryBytes != 3<<30 ||
		!strings.Contains(ev.Message, "2 processes (workers) as one job") {
		t.Errorf("the job: %+v\n%s", ev.Job, ev.Message)
	}
}

// TestAnEndIsToldOnce: a GPU job that ended but was not reaped yet (a
// zombie, whose parent has not waited for it) is still listed, by the
// scenario here as by a driver tearing its context down: its end is told
// once, not again at every poll that lists it.
func TestAnEndIsToldOnce(t *testing.T) {
	cmd := exec.Command("sh", "-c", "read x; exit 3")
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	pid := cmd.Process.Pid
	gpu := monitortest.SimGPU(t, fmt.Sprintf(`{"driver": "550.54.15", "cuda_driver": "12.4",
 "devices": [{"name": "NVIDIA A100-SXM4-40GB", "compute_capability": "8.0", "memory_total_bytes": 42949672960,
              "processes": [{"pid": %d, "used_memory_bytes": 1073741824}]}]}`, pid))
	f := monitortest.NewTorches(t)
	venv := f.Venv(t, filepath.Join(t.TempDir(), "proj", ".venv"))
	e := monitortest.Start(t, engine.Options{Paths: []string{venv}, GPU: gpu, Processes: procs.NewSource(procs.Options{}), JobMinRuntime: time.Millisecond})
	// Held once a poll saw it on the GPU.
	deadline := time.Now().Add(60 * time.Second)
	for polled := e.M.State().Polled; !e.M.State().Polled.After(polled); {
		if time.Now().After(deadline) {
			t.Fatal("the engine did not poll")
		}
		time.Sleep(20 * time.Millisecond)
	}
	in.Close() // it exits, a zombie until the cleanup reaps it
	ev := e.Wait(60*time.Second, jobEnded(pid))
	if ev.Job == nil || ev.Job.How != jobend.Crashed || !strings.Contains(ev.Message, "exited with status 3") {
		t.Errorf("JOB_ENDED = %q (job %+v)", ev.Message, ev.Job)
	}
	// Five more polls, each listing the zombie.
	for range 5 {
		polled := e.M.State().Polled
		for !e.M.State().Polled.After(polled) {
			if time.Now().After(deadline.Add(time.Minute)) {
				t.Fatal("the engine stopped polling")
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	if n := e.Count(jobEnded(pid)); n != 1 {
		t.Errorf("the end was told %d times:\n%s", n, e.Dump())
	}
}

// TestRunningJobSamplesAndRecord: a GPU job (a real process, listed in
// the scenario) is in the state while it runs, with its busiest GPU's
// utilisation and a start mark on its GPU; when it ends, its end is
// marked, it leaves the state, and a record of it (its samples with the
// throttle reasons, the driver, its GPU's name) is saved in the store,
// readable by another process.
func TestRunningJobSamplesAndRecord(t *testing.T) {
	script := filepath.Join(t.TempDir(), "train.py")
	if err := os.WriteFile(script, []byte("read x\nexit 0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	job := startHeld(t, "sh", script, "--epochs", "3", "--hf-token=hf_abcdefghijklmnopqrstuv")
	pid := job.cmd.Process.Pid
	gpu := monitortest.SimGPU(t, fmt.Sprintf(`{"driver": "550.54.15", "cuda_driver": "12.4",
 "devices": [{"name": "NVIDIA A100-SXM4-40GB", "compute_capability": "8.0", "memory_total_bytes": 42949672960,
              "memory_used_bytes": 1073741824, "utilization_gpu_percent": 87, "temperature_c": 81, "power_watts": 250,
              "clocks_event_reasons": ["gpu_idle", "hw_thermal_slowdown"],
              "processes": [{"pid": %d, "used_memory_bytes": 1073741824, "sm_percent": 87}]}]}`, pid))
	f := monitortest.NewTorches(t)
	venv := f.Venv(t, filepath.Join(t.TempDir(), "proj", ".venv"))
	dir := t.TempDir()
	e := monitortest.Start(t, engine.Options{Paths: []string{venv}, GPU: gpu, Processes: procs.NewSource(procs.Options{}),
		JobMinRuntime: time.Millisecond, Store: store.Open(dir)})

	var run monitor.JobRun
	waitUntil(t, "the job in the state with its utilisation and start mark", func() bool {
		s := e.M.State()
		if len(s.Jobs) != 1 || len(s.JobMarks) == 0 {
			return false
		}
		run = s.Jobs[0]
		m := s.JobMarks[0]
		return m.Kind == monitor.MarkStarted && m.PID == pid && m.GPU == 0 && m.Label == "train.py"
	})
	if run.PID != pid || run.GPUPercent == nil || *run.GPUPercent != 87 || len(run.GPUs) != 1 || run.GPUs[0] != 0 || run.Started.IsZero() {
		t.Errorf("running job = %+v", run)
	}
	job.in.Close()
	<-job.done
	ev := e.Wait(60*time.Second, jobEnded(pid))
	var rec monitor.JobRecord
	waitUntil(t, "the job's record in the store", func() bool {
		r, ok, err := store.Job[monitor.JobRecord](store.Open(dir), pid)
		if err != nil {
			t.Fatal(err)
		}
		rec = r
		return ok
	})
	if rec.Ended.Kind != monitor.KindJobEnded || rec.Ended.Message != ev.Message || rec.Driver != "550.54.15" ||
		rec.GPUNames[0] != "NVIDIA A100-SXM4-40GB" || !rec.Simulated || rec.SampleSeconds <= 0 {
		t.Errorf("record = %+v", rec)
	}
	if len(rec.Samples) == 0 {
		t.Fatal("no samples in the record")
	}
	// What is kept, and what a report writes from it, is redacted as
	// the process scan redacts.
	if cmd := strings.Join(rec.Ended.Job.Command, " "); strings.Contains(cmd, "hf_abcdefghijklmnopqrstuv") || !strings.Contains(cmd, "--epochs 3") {
		t.Errorf("the record's command line: %q", cmd)
	}
	if cmd := strings.Join(run.Command, " "); strings.Contains(cmd, "hf_abcdefghijklmnopqrstuv") {
		t.Errorf("the running job's command line: %q", cmd)
	}
	for _, s := range rec.Samples {
		if s.GPU != 0 || s.UtilPercent == nil || *s.UtilPercent != 87 || s.MemoryUsedBytes != 1<<30 || s.TemperatureC == nil ||
			*s.TemperatureC != 81 || len(s.Reasons) != 1 || s.Reasons[0] != "hw_thermal_slowdown" || s.Time.After(ev.Time) {
			t.Errorf("sample = %+v", s)
		}
	}
	s := e.M.State()
	last := s.JobMarks[len(s.JobMarks)-1]
	if len(s.Jobs) != 0 || last.Kind != monitor.MarkEnded || last.PID != pid || last.Detail != string(jobend.Unknown) {
		t.Errorf("after the end: jobs %+v, last mark %+v", s.Jobs, last)
	}
}

// waitUntil polls cond until it holds, failing after a generous deadline.
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestRunningJobSaysAskedAndQuiet: the state's running job says when one
// asked to be told of its end (WatchEnd) and when its notifications were
// quieted (QuietJob), as the tray's menu shows it.
func TestRunningJobSaysAskedAndQuiet(t *testing.T) {
	job := startHeld(t, "sleep", "300")
	pid := job.cmd.Process.Pid
	gpu := monitortest.SimGPU(t, fmt.Sprintf(`{"driver": "550.54.15", "cuda_driver": "12.4",
 "devices": [{"name": "NVIDIA A100-SXM4-40GB", "compute_capability": "8.0", "memory_total_bytes": 42949672960,
              "processes": [{"pid": %d, "used_memory_bytes": 1073741824}]}]}`, pid))
	f := monitortest.NewTorches(t)
	venv := f.Venv(t, filepath.Join(t.TempDir(), "proj", ".venv"))
	e := monitortest.Start(t, engine.Options{Paths: []string{venv}, GPU: gpu, Processes: procs.NewSource(procs.Options{})})
	running := func(what string, ok func(monitor.JobRun) bool) {
		t.Helper()
		deadline := time.Now().Add(60 * time.Second)
		for {
			for _, j := range e.M.State().Jobs {
				if j.PID == pid && ok(j) {
					return
				}
			}
			if time.Now().After(deadline) {
				t.Fatalf("the running job never %s: %+v", what, e.M.State().Jobs)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	running("ran", func(j monitor.JobRun) bool { return !j.Asked && !j.Quiet })
	start, _ := procs.StartTimeOf(pid)
	if err := e.M.WatchEnd(pid, start); err != nil {
		t.Fatal(err)
	}
	running("said it was asked about", func(j monitor.JobRun) bool { return j.Asked && !j.Quiet })
	if err := e.M.QuietJob(pid, start); err != nil {
		t.Fatal(err)
	}
	running("said it was quieted", func(j monitor.JobRun) bool { return j.Asked && j.Quiet })
}
