//go:build e2e

package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/godbus/dbus/v5"

	"github.com/gpucanary/gpucanary/monitor/wheeltest"
)

// TestKeepThisCUDABuild: the tray's "Keep this CUDA build…" on a venv
// with a CUDA torch opens the windows process's dialog; its "Keep it"
// (reached from the keyboard with xdotool: Xvfb has no window manager and
// the dialog is drawn inside the window) sets the guard: the venv's
// pip.conf names GPU Canary's constraints file, and the menu then says
// the build is kept.
func TestKeepThisCUDABuild(t *testing.T) {
	bin := desktopBin(t)
	if _, err := exec.LookPath("xdotool"); err != nil {
		t.Fatal("xdotool is missing (make deps-test installs it)")
	}
	py := wheeltest.Python(t)
	home, links := t.TempDir(), t.TempDir()
	if _, err := wheeltest.Write(links, wheeltest.Torch("2.5.1", "cu121")); err != nil {
		t.Fatal(err)
	}
	venv := filepath.Join(home, "work", "sd", ".venv")
	wheeltest.NewVenv(t, py, venv)
	wheeltest.Pip(t, py, venv, "install", "--no-index", "--find-links", links, "torch==2.5.1+cu121")
	sim := filepath.Join(t.TempDir(), "gpu.json")
	os.WriteFile(sim, []byte(a100), 0o644)

	conn, err := dbus.ConnectSessionBus()
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	cmd := exec.Command(bin, "--gpu-sim", sim)
	cmd.Env = homeEnviron(home)
	item := startTray(t, conn, cmd)
	entry := func(label string) (id int32, ok bool) {
		for _, n := range tree(t, conn, item) {
			if strings.Contains(n.Label, "sd/.venv") {
				for _, c := range n.Children {
					if c.Label == label {
						return c.ID, !c.Disabled
					}
				}
			}
		}
		return 0, false
	}
	keep := waitFor(t, 30*time.Second, "the venv's Keep this CUDA build…", func() (int32, bool) { return entry("Keep this CUDA build…") })
	click(t, conn, item, keep)
	win := waitFor(t, 15*time.Second, "the dialog's window", func() (string, bool) {
		out, err := exec.Command("xdotool", "search", "--name", "GPU Canary — Environments").Output()
		id := strings.TrimSpace(string(out))
		return id, err == nil && id != ""
	})
	time.Sleep(time.Second) // drawn
	shoot(t, "GPU Canary — Environments", "keep-dialog.png")
	// Tab to the dialog's buttons ("Not now", then "Keep it") and press.
	if out, err := exec.Command("xdotool", "windowfocus", "--sync", strings.Fields(win)[0], "key", "--delay", "200", "Tab", "Tab", "space").CombinedOutput(); err != nil {
		t.Fatalf("xdotool: %v\n%s", err, out)
	}
	waitFor(t, 15*time.Second, "pip.conf to name the constraints file", func() (string, bool) {
		b, err := os.ReadFile(filepath.Join(venv, "pip.conf"))
		return string(b), err == nil && strings.Contains(string(b), "gpucanary-constraints.txt") && strings.Contains(string(b), "gpucanary unguard")
	})
	waitFor(t, 15*time.Second, "the menu to say the build is kept", func() (bool, bool) {
		_, enabled := entry("CUDA build kept (gpucanary unguard lifts it)")
		id, _ := entry("CUDA build kept (gpucanary unguard lifts it)")
		return enabled, id != 0
	})
	shoot(t, "GPU Canary — Environments", "kept.png")
}
