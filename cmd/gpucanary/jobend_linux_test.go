//go:build linux

package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gpucanary/gpucanary/monitor"
	"github.com/gpucanary/gpucanary/monitor/procs"
	"github.com/gpucanary/gpucanary/monitor/pyenv/pyenvtest"
)

// gpuJob is a real process the simulated GPU lists: it waits for a line
// on its stdin (release), then runs script; its output goes to log when
// one is given.
type gpuJob struct {
	cmd   *exec.Cmd
	in    io.WriteCloser
	start time.Time
	// reaped is closed once the test reaped it (reap); a job not reaped
	// stays a zombie, whose exit status the kernel still shows.
	reaped chan struct{}
}

func startGPUJob(t *testing.T, log, script string) *gpuJob {
	t.Helper()
	cmd := exec.Command("sh", "-c", "read go; "+script, "train-sh")
	if log != "" {
		f, err := os.OpenFile(log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		cmd.Stdout, cmd.Stderr = f, f
	}
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	j := &gpuJob{cmd: cmd, in: in, reaped: make(chan struct{})}
	j.start, _ = procs.StartTimeOf(cmd.Process.Pid)
	t.Cleanup(func() {
		cmd.Process.Kill()
		select {
		case <-j.reaped:
		default:
			cmd.Wait()
		}
	})
	return j
}

// release lets the job run its script once it has run for at least
// ran (its own age, so that it meets a minimum run time whatever the
// load).
func (j *gpuJob) release(t *testing.T, ran time.Duration) {
	t.Helper()
	for time.Since(j.start) < ran {
		time.Sleep(20 * time.Millisecond)
	}
	if _, err := io.WriteString(j.in, "go\n"); err != nil {
		t.Fatal(err)
	}
}

// reap waits for the job as a shell waits for its child: at once.
func (j *gpuJob) reap() {
	go func() { j.cmd.Wait(); close(j.reaped) }()
}

// watchEvents runs `watch --json` over one environment with the settings
// given and the scenario sim, and returns its events as they come.
func watchEvents(t *testing.T, settings, sim string) <-chan monitor.Event {
	t.Helper()
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	t.Setenv("HOME", t.TempDir())
	cfg := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", cfg)
	if err := os.MkdirAll(filepath.Join(cfg, "gpucanary"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(cfg, "gpucanary", "config.toml"), []byte(settings), 0o600); err != nil {
		t.Fatal(err)
	}
	env := filepath.Join(t.TempDir(), "proj", ".venv")
	if err := pyenvtest.Write(env, incidentsSpec("good-cu121")); err != nil {
		t.Fatal(err)
	}
	pr, pw := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		run(ctx, []string{"--gpu-sim", sim, "watch", "--json", env}, stdio{in: strings.NewReader(""), out: pw, err: io.Discard})
		pw.Close()
	}()
	t.Cleanup(func() { cancel(); pr.Close(); <-done })
	events := make(chan monitor.Event, 256)
	go func() {
		defer close(events)
		sc := bufio.NewScanner(pr)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			var ev monitor.Event
			if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
				t.Errorf("not a JSON event: %q", sc.Text())
				continue
			}
			events <- ev
		}
	}()
	return events
}

// nextOf waits for the next event of kind (a condition; the deadline
// only ends a test that would hang) and returns it with the events
// before it.
func nextOf(t *testing.T, events <-chan monitor.Event, kind monitor.Kind) (monitor.Event, []monitor.Event) {
	t.Helper()
	var before []monitor.Event
	timeout := time.After(90 * time.Second)
	for {
		select {
		case ev, ok := <-events:
			if !ok {
				t.Fatalf("watch ended before %s; events: %v", kind, before)
			}
			if ev.Kind == kind {
				return ev, before
			}
			before = append(before, ev)
		case <-timeout:
			t.Fatalf("no %s; events: %v", kind, before)
		}
	}
}

const jobSettings = "refresh = \"200ms\"\njob_min_runtime = \"1s\"\n"

// jobSim is a simulated A100 with pid holding 30 of its 40 GiB at 87 %.
func jobSim(t *testing.T, pid int) string {
	return simFile(t, fmt.Sprintf(`{"driver": "550.54.15", "cuda_driver": "12.4",
 "devices": [{"name": "NVIDIA A100-SXM4-40GB", "compute_capability": "8.0", "memory_total_bytes": 42949672960,
              "memory_used_bytes": 32212254720,
              "processes": [{"pid": %d, "used_memory_bytes": 32212254720, "sm_percent": 87}]}]}`, pid))
}

// TestJobEndedWatchJSON: a real process the simulated GPU lists ends
// while `watch --json` runs, after the minimum run time. Its JOB_ENDED
// says how, from what can be seen of a process GPU Canary did not
// start: a log that ends cleanly is finished; a CUDA out-of-memory
// traceback in its log is crashed, quoted; killed while its parent has
// not reaped it yet, the kernel still shows the signal. Each names its
// command, run time, peak memory and utilisation.
func TestJobEndedWatchJSON(t *testing.T) {
	for _, tc := range []struct {
		name   string
		log    bool
		script string
		kill   bool
		how    string
		reason string
		quote  string
	}{
		{name: "clean log", log: true, script: "echo 'epoch 3/3 loss 0.12'; echo 'saved model.pt'; exit 0",
			how: "finished", reason: "its log ends without an error"},
		{name: "CUDA OOM", log: true,
			script: `printf 'epoch 1\nTraceback (most recent call last):\n  File "train.py", line 9, in <module>\n    loss.backward()\ntorch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 39.39 GiB\n' >&2; exit 1`,
			how:    "crashed", reason: "ran out of GPU memory", quote: "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB"},
		{name: "SIGKILL", script: "sleep 300", kill: true, how: "crashed", reason: "killed by SIGKILL"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			log := ""
			if tc.log {
				log = filepath.Join(t.TempDir(), "train.log")
			}
			job := startGPUJob(t, log, tc.script)
			events := watchEvents(t, jobSettings, jobSim(t, job.cmd.Process.Pid))
			nextOf(t, events, monitor.KindEnvAdded) // the first read, processes included, is done
			if tc.kill {
				for time.Since(job.start) < 1500*time.Millisecond {
					time.Sleep(20 * time.Millisecond)
				}
				job.cmd.Process.Signal(syscall.SIGKILL) // not reaped: a zombie until the event came
			} else {
				job.reap()
				job.release(t, 1500*time.Millisecond)
			}
			ev, _ := nextOf(t, events, monitor.KindJobEnded)
			je := ev.Job
			t.Log(ev.Message)
			if je == nil || string(je.How) != tc.how || !strings.Contains(je.Reason, tc.reason) || !strings.HasPrefix(je.Quote, tc.quote) {
				t.Fatalf("JOB_ENDED = %+v, want %s %q %q", je, tc.how, tc.reason, tc.quote)
			}
			if je.PID != job.cmd.Process.Pid || ev.PID != je.PID || ev.Finding == nil || ev.Finding.Code != "JOB_ENDED" {
				t.Errorf("event = %+v", ev)
			}
			if tc.log && je.Log != log {
				t.Errorf("log = %q, want %s", je.Log, log)
			}
			if je.RunSeconds < 1 || je.PeakGPUMemoryBytes == nil || *je.PeakGPUMemoryBytes != 32212254720 ||
				je.MeanGPUPercent == nil || *je.MeanGPUPercent != 87 {
				t.Errorf("run %v s, peak %v, mean %v", je.RunSeconds, je.PeakGPUMemoryBytes, je.MeanGPUPercent)
			}
			for _, want := range []string{"sh -c", "(PID " + fmt.Sprint(je.PID) + ")", tc.how, "peak GPU memory 30.0 GiB", "mean GPU utilisation 87%"} {
				if tc.how == "unknown" {
					continue
				}
				if !strings.Contains(ev.Message, want) {
					t.Errorf("message %q lacks %q", ev.Message, want)
				}
			}
			if tc.quote != "" && !strings.Contains(ev.Message, tc.quote) {
				t.Errorf("message %q does not quote %q", ev.Message, tc.quote)
			}
		})
	}
}

// waitRun runs `gpucanary wait args...` in the background; its result
// comes on the channel.
type waitResult struct {
	out, err string
	code     int
}

func waitRun(ctx context.Context, t *testing.T, args ...string) <-chan waitResult {
	t.Helper()
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	res := make(chan waitResult, 1)
	var out, errb lockedBuffer
	go func() {
		code := run(ctx, append([]string{"wait"}, args...), stdio{in: strings.NewReader(""), out: &out, err: &errb})
		res <- waitResult{out.String(), errb.String(), code}
	}()
	return res
}

// waitWaiting runs wait and returns once it holds its processes (it says
// it waits).
func waitWaiting(ctx context.Context, t *testing.T, args ...string) <-chan waitResult {
	t.Helper()
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	res := make(chan waitResult, 1)
	var out, errb lockedBuffer
	go func() {
		code := run(ctx, append([]string{"wait"}, args...), stdio{in: strings.NewReader(""), out: &out, err: &errb})
		res <- waitResult{out.String(), errb.String(), code}
	}()
	waitFor(t, &errb, "waiting for")
	return res
}

func waitDone(t *testing.T, res <-chan waitResult) waitResult {
	t.Helper()
	select {
	case r := <-res:
		return r
	case <-time.After(90 * time.Second):
		t.Fatal("wait did not end after its processes did")
	}
	return waitResult{}
}

// TestWaitSaysHowEachEnded runs `gpucanary wait` on real processes it
// did not start: a job whose log ends cleanly finished (0); one killed
// before its parent reaped it crashed (1); several, one crashed, each
// said as a JSON object as it ends (1); two that exited 0 (0).
func TestWaitSaysHowEachEnded(t *testing.T) {
	t.Run("finished", func(t *testing.T) {
		log := filepath.Join(t.TempDir(), "train.log")
		job := startGPUJob(t, log, "echo 'epoch 3/3 done'; exit 0")
		job.reap()
		res := waitWaiting(context.Background(), t, strconv.Itoa(job.cmd.Process.Pid))
		job.release(t, 0)
		r := waitDone(t, res)
		if r.code != 0 || !strings.Contains(r.out, fmt.Sprintf("(PID %d) finished", job.cmd.Process.Pid)) ||
			!strings.Contains(r.out, "its log ends without an error") || !strings.Contains(r.out, log) {
			t.Errorf("exit %d\n%s%s", r.code, r.out, r.err)
		}
	})
	t.Run("crashed", func(t *testing.T) {
		job := startGPUJob(t, "", "sleep 300")
		res := waitWaiting(context.Background(), t, strconv.Itoa(job.cmd.Process.Pid))
		job.cmd.Process.Signal(syscall.SIGKILL) // not reaped: its status is still there
		r := waitDone(t, res)
		if r.code != 1 || !strings.Contains(r.out, "crashed") || !strings.Contains(r.out, "killed by SIGKILL") {
			t.Errorf("exit %d\n%s%s", r.code, r.out, r.err)
		}
	})
	t.Run("several", func(t *testing.T) {
		ok := startGPUJob(t, "", "exit 0")
		log := filepath.Join(t.TempDir(), "train.log")
		oom := startGPUJob(t, log, `printf 'Traceback (most recent call last):\n  File "train.py", line 9\ntorch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB\n' >&2; exit 1`)
		oom.reap()
		res := waitWaiting(context.Background(), t, "--json", strconv.Itoa(ok.cmd.Process.Pid), strconv.Itoa(oom.cmd.Process.Pid))
		ok.release(t, 0)
		oom.release(t, 0)
		r := waitDone(t, res)
		if r.code != 1 {
			t.Errorf("exit %d, want 1 (one crashed)\n%s%s", r.code, r.out, r.err)
		}
		got := map[int]monitor.JobEnd{}
		for _, line := range strings.Split(strings.TrimSpace(r.out), "\n") {
			var je monitor.JobEnd
			if err := json.Unmarshal([]byte(line), &je); err != nil {
				t.Fatalf("not a JSON line: %q", line)
			}
			got[je.PID] = je
		}
		a, b := got[ok.cmd.Process.Pid], got[oom.cmd.Process.Pid]
		if a.How != "finished" || a.ExitCode == nil || *a.ExitCode != 0 || len(a.Command) == 0 {
			t.Errorf("the one that exited 0: %+v", a)
		}
		if b.How != "crashed" || b.Reason != "ran out of GPU memory" || !strings.HasPrefix(b.Quote, "torch.OutOfMemoryError") || b.Log != log {
			t.Errorf("the one out of memory: %+v", b)
		}
	})
	t.Run("all finished", func(t *testing.T) {
		a, b := startGPUJob(t, "", "exit 0"), startGPUJob(t, "", "exit 0")
		res := waitWaiting(context.Background(), t, strconv.Itoa(a.cmd.Process.Pid), strconv.Itoa(b.cmd.Process.Pid))
		a.release(t, 0)
		b.release(t, 0)
		if r := waitDone(t, res); r.code != 0 || strings.Count(r.out, "finished") != 2 {
			t.Errorf("exit %d\n%s%s", r.code, r.out, r.err)
		}
	})
}

// TestWaitRefusesWhatIsNoProcess: a PID no process has, or an argument
// that is no PID, is exit 2 before anything is waited for.
func TestWaitRefusesWhatIsNoProcess(t *testing.T) {
	live := startGPUJob(t, "", "exit 0")
	for _, args := range [][]string{{strconv.Itoa(live.cmd.Process.Pid), strconv.Itoa(1<<22 + 7)}, {"abc"}, {"-5"}, {}} {
		r := waitDone(t, waitRun(context.Background(), t, args...))
		if r.code != 2 || r.out != "" || r.err == "" {
			t.Errorf("wait %v: exit %d, stdout %q, stderr %q", args, r.code, r.out, r.err)
		}
	}
}

// TestWaitInterrupted: Ctrl-C while the process runs ends wait with 130,
// saying nothing of an end that did not happen.
func TestWaitInterrupted(t *testing.T) {
	job := startGPUJob(t, "", "exit 0")
	ctx, cancel := context.WithCancel(context.Background())
	res := waitWaiting(ctx, t, strconv.Itoa(job.cmd.Process.Pid))
	cancel()
	r := waitDone(t, res)
	if r.code != 130 || r.out != "" || !strings.Contains(r.err, "interrupted") {
		t.Errorf("exit %d, stdout %q, stderr %q", r.code, r.out, r.err)
	}
}
