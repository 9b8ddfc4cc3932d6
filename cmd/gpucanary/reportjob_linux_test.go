//go:build linux

package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gpucanary/gpucanary/monitor"
	"github.com/gpucanary/gpucanary/monitor/store"
)

// TestReportJob: a real job the simulated GPU lists (thermal throttling
// under load) crashes with a CUDA out-of-memory traceback in its log
// while `watch --json` runs; `gpucanary report --job PID`, another run
// of the program, then writes what happened from the record the watch
// kept: how it ended in the event's words, its command, run time, the
// driver, a table of its samples with the throttle reason, and the
// JOB_ENDED event among the events around its end. While a GPU job
// still runs, the report says what is known and that the samples come
// when it ends.
func TestReportJob(t *testing.T) {
	log := filepath.Join(t.TempDir(), "train.log")
	job := startGPUJob(t, log, `printf 'Traceback (most recent call last):\ntorch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB\n' >&2; exit 1`)
	pid := job.cmd.Process.Pid
	sim := simFile(t, fmt.Sprintf(`{"driver": "550.54.15", "cuda_driver": "12.4",
 "devices": [{"name": "NVIDIA A100-SXM4-40GB", "compute_capability": "8.0", "memory_total_bytes": 42949672960,
              "memory_used_bytes": 32212254720, "utilization_gpu_percent": 87, "temperature_c": 84, "power_watts": 310.5,
              "clocks_event_reasons": ["sw_thermal_slowdown"],
              "processes": [{"pid": %d, "used_memory_bytes": 32212254720, "sm_percent": 87}]}]}`, pid))
	events := watchEvents(t, jobSettings, sim)
	nextOf(t, events, monitor.KindEnvAdded)

	// Still running: what is known now.
	running := filepath.Join(t.TempDir(), "running")
	out, stderr, code := runCLI(t, "--gpu-sim", sim, "report", "--job", fmt.Sprint(pid), "-o", running)
	if code != exitOK || !strings.Contains(out, "still running") {
		t.Fatalf("report --job on a running job: %d\n%s%s", code, out, stderr)
	}
	readme := readFile(t, filepath.Join(running, "README.md"))
	for _, want := range []string{fmt.Sprintf("# Job %d, still running", pid), "written when it ends", "train-sh"} {
		if !strings.Contains(readme, want) {
			t.Errorf("the running job's README lacks %q:\n%s", want, readme)
		}
	}

	job.reap()
	job.release(t, 1500*time.Millisecond)
	ev, _ := nextOf(t, events, monitor.KindJobEnded)
	stateDir, err := store.Dir()
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(60 * time.Second) // the record is written just after the event
	for {
		if _, ok, err := store.Job[monitor.JobRecord](store.Open(stateDir), pid); ok || err != nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no record of the job in the state folder")
		}
		time.Sleep(20 * time.Millisecond)
	}

	dir := filepath.Join(t.TempDir(), "report")
	out, stderr, code = runCLI(t, "report", "--job", fmt.Sprint(pid), "-o", dir)
	if code != exitOK || !strings.Contains(out, "crashed") {
		t.Fatalf("report --job: %d\n%s%s", code, out, stderr)
	}
	readme = readFile(t, filepath.Join(dir, "README.md"))
	t.Log(readme)
	for _, want := range []string{
		fmt.Sprintf("(PID %d)", pid), "**crashed.**", "ran out of GPU memory", "`sh -c", "- Ran: ", "- Started: ",
		"- NVIDIA driver: 550.54.15 (CUDA 12.4)", "- GPU 0: NVIDIA A100-SXM4-40GB", "- Peak GPU memory: 30.0 GiB",
		"| 0 | 87 / 87 | 30.0 GiB (75 %) | 310 | 84 | sw_thermal_slowdown |",
		"Events within 5 minutes of its end", "Its last 30 minutes on the GPU", "| JOB_ENDED | ",
	} {
		if !strings.Contains(readme, want) {
			t.Errorf("README.md lacks %q", want)
		}
	}
	var js struct {
		Record *monitor.JobRecord `json:"record"`
		Events []monitor.Event    `json:"events_around_end"`
	}
	if err := json.Unmarshal([]byte(readFile(t, filepath.Join(dir, "job.json"))), &js); err != nil {
		t.Fatal(err)
	}
	if js.Record == nil || js.Record.Ended.Message != ev.Message || len(js.Record.Samples) == 0 || len(js.Events) == 0 {
		t.Errorf("job.json: %+v", js)
	}

	// The job has ended and its PID is free: still reported from its
	// record. A PID that is nobody's, or no number, is exit status 2.
	for _, tc := range []struct {
		arg, want string
	}{
		{"4194999", "no job with PID 4194999"},
		{"abc", "--job takes a process ID"},
		{"0", "--job takes a process ID"},
	} {
		_, stderr, code := runCLI(t, "report", "--job", tc.arg, "-o", filepath.Join(t.TempDir(), "r"))
		if code != exitUsage || !strings.Contains(stderr, tc.want) {
			t.Errorf("report --job %s: %d %q, want 2 and %q", tc.arg, code, stderr, tc.want)
		}
	}
	// A process that runs but is no job.
	self := fmt.Sprint(os.Getpid())
	if _, stderr, code := runCLI(t, "--gpu-sim", sim, "report", "--job", self, "-o", filepath.Join(t.TempDir(), "r")); code != exitUsage || !strings.Contains(stderr, "not a job") {
		t.Errorf("report --job on the test itself: %d %q", code, stderr)
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}
