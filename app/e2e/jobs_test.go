//go:build e2e

package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/godbus/dbus/v5"
)

// jobLine is the tooltip's line for the job, whatever minute it is in.
var jobLine = regexp.MustCompile(`\ntrain\.py · (<1m|\d+m) · GPU 0 87 %`)

// TestTooltipListsJobs: a real process the simulated GPU lists as a
// job (train.py, busy at 87 %) is named in the tray item's ToolTip, as
// a tray host reads it over DBus, with its run time and its GPU. Killed,
// its end is a notification with a "Report" action; dunst invoking it
// (its context menu, whose dmenu picks Report) writes the job's report
// into a new folder in the home directory.
func TestTooltipListsJobs(t *testing.T) {
	if _, err := exec.LookPath("dunstctl"); err != nil {
		t.Fatal("dunstctl is missing (make deps-test installs it)")
	}
	bin := desktopBin(t)
	home := t.TempDir()
	script := filepath.Join(home, "work", "train.py")
	os.MkdirAll(filepath.Dir(script), 0o755)
	if err := os.WriteFile(script, []byte("sleep 300\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	job := exec.Command("sh", script, "--epochs", "3")
	if err := job.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { job.Process.Kill(); job.Wait() })
	sim := filepath.Join(t.TempDir(), "gpu.json")
	os.WriteFile(sim, []byte(fmt.Sprintf(`{"driver": "550.54.15", "cuda_driver": "12.4",
 "devices": [{"name": "NVIDIA A100-SXM4-40GB", "uuid": "GPU-0000", "compute_capability": "8.0",
              "memory_total_bytes": 42949672960, "memory_used_bytes": 8589934592, "utilization_gpu_percent": 87,
              "processes": [{"pid": %d, "used_memory_bytes": 8589934592, "sm_percent": 87}]}]}`, job.Process.Pid)), 0o644)

	cfg := filepath.Join(home, ".config", "gpucanary", "config.toml")
	os.MkdirAll(filepath.Dir(cfg), 0o755)
	if err := os.WriteFile(cfg, []byte("refresh = \"500ms\"\njob_min_runtime = \"1s\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	notes := watchNotifyActions(t)
	exec.Command("dunstctl", "close-all").Run() // earlier tests' bubbles

	conn, err := dbus.ConnectSessionBus()
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	cmd := exec.Command(bin, "--gpu-sim", sim)
	cmd.Env = homeEnviron(home)
	item := startTray(t, conn, cmd)
	waitFor(t, 60*time.Second, "the tooltip to list the job", func() (string, bool) {
		tip, err := conn.Object(item, "/StatusNotifierItem").GetProperty("org.kde.StatusNotifierItem.ToolTip")
		if err != nil {
			return "", false
		}
		s := fmt.Sprint(tip.Value())
		return s, jobLine.MatchString(s)
	})

	time.Sleep(time.Second) // past job_min_runtime
	job.Process.Kill()      // not reaped until the test ends: the kernel shows its signal meanwhile
	var n notifyCall
	deadline := time.After(60 * time.Second)
	for n.summary == "" {
		select {
		case c := <-notes:
			if slices.Contains(c.actions, "report") {
				n = c
			}
		case <-deadline:
			t.Fatal("no notification with a Report action")
		}
	}
	if want := []string{"report", "Report"}; !slices.Equal(n.actions, want) || !strings.Contains(n.body, "train.py") {
		t.Errorf("the job's notification: %q %q, actions %q", n.summary, n.body, n.actions)
	}
	time.Sleep(500 * time.Millisecond) // dunst draws it
	if out, err := exec.Command("dunstctl", "context").CombinedOutput(); err != nil {
		t.Fatalf("dunstctl context: %v\n%s", err, out)
	}
	readme := waitFor(t, 60*time.Second, "the job's report in the home directory", func() (string, bool) {
		got, _ := filepath.Glob(filepath.Join(home, fmt.Sprintf("gpucanary-job-%d-*", job.Process.Pid), "README.md"))
		if len(got) != 1 {
			return fmt.Sprint(got), false
		}
		b, err := os.ReadFile(got[0])
		return string(b), err == nil && len(b) > 0
	})
	for _, want := range []string{fmt.Sprintf("# What happened to train.py (PID %d)", job.Process.Pid), "**crashed.**", "killed by SIGKILL", "| 0 | 87 / 87 |"} {
		if !strings.Contains(readme, want) {
			t.Errorf("the report lacks %q:\n%s", want, readme)
		}
	}
}
