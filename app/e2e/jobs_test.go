//go:build e2e

package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
		"testing"
	"time"

	"github.com/godbus/dbus/v5"
)

// jobLine is the tooltip's line for the job, whatever minute it is in.
var jobLine = regexp.MustCompile(`\ntrain\.py · (<1m|\d+m) · GPU 0 87 %`)

// TestTooltipListsJobs: a real process the simulated GPU lists as a
// job (train.py, busy at 87 %) is named in the tray item's ToolTip, as
// a tray host reads it over DBus, with its run time and its GPU.
func TestTooltipListsJobs(t *testing.T) {
	bin := os.Getenv("GPUCANARY_BIN")
	if bin == "" || os.Getenv("DBUS_SESSION_BUS_ADDRESS") == "" || os.Getenv("DISPLAY") == "" {
		t.Fatal("run through scripts/e2e-desktop.sh: GPUCANARY_BIN, DISPLAY and a session bus are needed")
	}
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

	conn, err := dbus.ConnectSessionBus()
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	cmd := exec.Command(bin, "--gpu-sim", sim)
	cmd.Env = append(testEnviron(), "HOME="+home, "XDG_CONFIG_HOME="+filepath.Join(home, ".config"),
		"XDG_STATE_HOME="+filepath.Join(home, ".local", "state"), "LANG=C.UTF-8", "LC_ALL=C.UTF-8")
	item := startTray(t, conn, cmd)
	waitFor(t, 60*time.Second, "the tooltip to list the job", func() (string, bool) {
		tip, err := conn.Object(item, "/StatusNotifierItem").GetProperty("org.kde.StatusNotifierItem.ToolTip")
		if err != nil {
			return "", false
		}
		s := fmt.Sprint(tip.Value())
		return s, jobLine.MatchString(s)
	})
}
