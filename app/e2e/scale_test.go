//go:build e2e

package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestWindowsFitTheScreenAtScale2: at FYNE_SCALE=2 the processes window
// (1200×520 units, 2400×1040 pixels) and the environments window opened
// wider and taller than the 1280×800 screen, their buttons off it; each
// now opens within the screen.
func TestWindowsFitTheScreenAtScale2(t *testing.T) {
	bin := displayBin(t)
	screen := geometry(t, "-root")
	for _, w := range []struct{ show, title string }{{"processes", "GPU Canary — GPU processes"}, {"envs", "GPU Canary — Environments"}} {
		home := t.TempDir()
		sim := filepath.Join(home, "gpu.json")
		os.WriteFile(sim, []byte(a100), 0o644)
		cmd := exec.Command(bin, "--gpu-sim", sim, "ui", "--show", w.show)
		cmd.Env = append(testEnviron(), "FYNE_SCALE=2", "HOME="+home, "XDG_CONFIG_HOME="+filepath.Join(home, ".config"), "XDG_STATE_HOME="+filepath.Join(home, ".state"))
		var out strings.Builder
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		size := waitFor(t, 20*time.Second, w.title+" within the screen", func() ([2]int, bool) {
			o, err := exec.Command("xwininfo", "-name", w.title).Output()
			if err != nil {
				return [2]int{}, false
			}
			g := parseGeometry(string(o))
			return g, g[0] > 0 && g[0] <= screen[0] && g[1] <= screen[1]
		})
		t.Logf("%s: %d×%d on a %d×%d screen", w.title, size[0], size[1], screen[0], screen[1])
		cmd.Process.Signal(os.Interrupt)
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			t.Errorf("gpucanary ui did not end\n%s", out.String())
		}
	}
}

// geometry is the width and height xwininfo gives for its arguments.
func geometry(t *testing.T, args ...string) [2]int {
	t.Helper()
	out, err := exec.Command("xwininfo", args...).Output()
	if err != nil {
		t.Fatalf("xwininfo %v: %v", args, err)
	}
	return parseGeometry(string(out))
}

var sizeLine = regexp.MustCompile(`(?m)^\s*(Width|Height):\s*(\d+)`)

func parseGeometry(out string) [2]int {
	var g [2]int
	for _, m := range sizeLine.FindAllStringSubmatch(out, -1) {
		n, _ := strconv.Atoi(m[2])
		if m[1] == "Width" {
			g[0] = n
		} else {
			g[1] = n
		}
	}
	return g
}
