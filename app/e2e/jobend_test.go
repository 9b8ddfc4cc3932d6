//go:build e2e

package e2e

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/godbus/dbus/v5"
)

// TestTrayTellsHowJobsEnd: two real processes the simulated GPU lists
// as jobs end under the tray, one exiting 0, one writing a
// torch.OutOfMemoryError traceback to its log and exiting 1; each end is
// a notification that says how: finished, and crashed out of GPU memory
// with the log's line. (A job killed by SIGKILL is TestTooltipListsJobs'.)
func TestTrayTellsHowJobsEnd(t *testing.T) {
	bin := desktopBin(t)
	home := t.TempDir()
	// Each waits for a line on its stdin, then ends; neither is reaped
	// until the test ends, so the kernel shows its exit status meanwhile.
	startJob := func(script, log string) (*exec.Cmd, io.WriteCloser) {
		t.Helper()
		cmd := exec.Command("sh", "-c", "read go; "+script)
		if log != "" {
			f, err := os.Create(log)
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
		t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
		return cmd, in
	}
	started := time.Now()
	finish, finishIn := startJob("echo epoch 3 done; exit 0", "")
	oomLog := filepath.Join(home, "train.log")
	oom, oomIn := startJob(`printf 'Traceback (most recent call last):\n  File "train.py", line 9, in <module>\n'`+
		`'torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 GiB\n' >&2; exit 1`, oomLog)
	sim := filepath.Join(t.TempDir(), "gpu.json")
	os.WriteFile(sim, []byte(fmt.Sprintf(`{"driver": "550.54.15", "cuda_driver": "12.4",
 "devices": [{"name": "NVIDIA A100-SXM4-40GB", "uuid": "GPU-0000", "compute_capability": "8.0",
              "memory_total_bytes": 42949672960, "memory_used_bytes": 8589934592, "utilization_gpu_percent": 87,
              "processes": [{"pid": %d, "used_memory_bytes": 4294967296}, {"pid": %d, "used_memory_bytes": 4294967296}]}]}`,
		finish.Process.Pid, oom.Process.Pid)), 0o644)
	cfg := filepath.Join(home, ".config", "gpucanary", "config.toml")
	os.MkdirAll(filepath.Dir(cfg), 0o755)
	if err := os.WriteFile(cfg, []byte("refresh = \"200ms\"\njob_min_runtime = \"1s\"\ndiscover_home = false\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	conn, err := dbus.ConnectSessionBus()
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	notes := watchNotifyActions(t)
	exec.Command("dunstctl", "close-all").Run() // earlier tests' bubbles
	cmd := exec.Command(bin, "--gpu-sim", sim)
	cmd.Env = homeEnviron(home)
	item := startTray(t, conn, cmd)
	// The tray holds them once a poll saw them on the GPU (its tooltip
	// then lists both), and they must have run past job_min_runtime:
	// their run time is their own age.
	waitFor(t, 60*time.Second, "the tooltip to list both jobs", func() (string, bool) {
		tip, err := conn.Object(item, "/StatusNotifierItem").GetProperty("org.kde.StatusNotifierItem.ToolTip")
		if err != nil {
			return err.Error(), false
		}
		s := fmt.Sprint(tip.Value())
		return s, strings.Count(s, "GPU 0") >= 2
	})
	for time.Since(started) < 2*time.Second {
		time.Sleep(50 * time.Millisecond)
	}
	for _, in := range []io.WriteCloser{finishIn, oomIn} {
		if _, err := io.WriteString(in, "go\n"); err != nil {
			t.Fatal(err)
		}
	}
	got := map[string]notifyCall{}
	deadline := time.After(60 * time.Second)
	for len(got) < 2 {
		select {
		case n := <-notes:
			for _, how := range []string{"A GPU job finished", "A GPU job crashed"} {
				if strings.HasPrefix(n.summary, how) {
					got[how] = n
				}
			}
		case <-deadline:
			t.Fatalf("the jobs' ends were not both told within 60s: %+v", got)
		}
	}
	if n := got["A GPU job finished"]; !strings.Contains(n.body, fmt.Sprintf("PID %d", finish.Process.Pid)) || !strings.Contains(n.body, "exited with status 0") {
		t.Errorf("the finished job's notification: %q", n.body)
	}
	if n := got["A GPU job crashed"]; !strings.Contains(n.body, fmt.Sprintf("PID %d", oom.Process.Pid)) ||
		!strings.Contains(n.body, "ran out of GPU memory") || !strings.Contains(n.body, "torch.OutOfMemoryError: CUDA out of memory") {
		t.Errorf("the crashed job's notification: %q", n.body)
	}
}
