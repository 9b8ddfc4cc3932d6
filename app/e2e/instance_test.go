//go:build e2e

package e2e

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/godbus/dbus/v5"
)

// TestSecondTrayRaisesTheFirst: a second start of the tray on the same
// desktop (autostart plus a click) adds no second icon and no second
// engine: it brings the first one's Environments window up and ends;
// `watch` refuses the state folder the tray writes, saying why; and
// `gpucanary quit` ends the tray through the same bus name.
func TestSecondTrayRaisesTheFirst(t *testing.T) {
	bin := desktopBin(t)
	home := t.TempDir()
	sim := filepath.Join(home, "gpu.json")
	os.WriteFile(sim, []byte(a100), 0o644)
	env := append(testEnviron(), "HOME="+home, "XDG_CONFIG_HOME="+filepath.Join(home, ".config"),
		"XDG_STATE_HOME="+filepath.Join(home, ".local", "state"), "LANG=C.UTF-8", "LC_ALL=C.UTF-8")
	conn, err := dbus.ConnectSessionBus()
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	items := func() []string {
		v, err := conn.Object("org.kde.StatusNotifierWatcher", "/StatusNotifierWatcher").
			GetProperty("org.kde.StatusNotifierWatcher.RegisteredStatusNotifierItems")
		if err != nil {
			return nil
		}
		got, _ := v.Value().([]string)
		return got
	}
	envWindows := func() int {
		out, _ := exec.Command("xwininfo", "-root", "-tree").Output()
		return strings.Count(string(out), `"GPU Canary — Environments"`)
	}
	before := envWindows()

	first := exec.Command(bin, "--gpu-sim", sim)
	first.Env = env
	var firstLog bytes.Buffer
	first.Stdout, first.Stderr = &firstLog, &firstLog
	if err := first.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { first.Wait(); close(exited) }()
	t.Cleanup(func() {
		first.Process.Signal(os.Interrupt)
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			first.Process.Kill()
			<-exited
		}
		if t.Failed() {
			t.Logf("the first tray's log:\n%s", firstLog.String())
		}
	})
	waitFor(t, 20*time.Second, "the first tray's item", func() ([]string, bool) {
		got := items()
		return got, len(got) == 1
	})

	second := exec.Command(bin, "--gpu-sim", sim)
	second.Env = env
	var out bytes.Buffer
	second.Stdout, second.Stderr = &out, &out
	if err := second.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- second.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("the second start: %v\n%s", err, out.String())
		}
	case <-time.After(20 * time.Second):
		second.Process.Kill()
		t.Fatalf("the second start is still running after 20 s (a second tray)\n%s", out.String())
	}
	want := fmt.Sprintf("GPU Canary is already running (PID %d); its Environments window was brought up", first.Process.Pid)
	if !strings.Contains(out.String(), want) {
		t.Errorf("the second start says %q, want %q", out.String(), want)
	}
	waitFor(t, 15*time.Second, "the first tray's Environments window", func() (int, bool) {
		n := envWindows()
		return n, n > before
	})
	if got := items(); len(got) != 1 {
		t.Errorf("tray items after the second start: %q, want one", got)
	}
	select {
	case <-exited:
		t.Fatalf("the first tray ended\n%s", firstLog.String())
	default:
	}

	// watch on the tray's state folder is refused with who holds it.
	watch := exec.Command(bin, "--gpu-sim", sim, "watch")
	watch.Env = env
	msg, err := watch.CombinedOutput()
	if watch.ProcessState == nil || watch.ProcessState.ExitCode() != 2 {
		t.Fatalf("watch beside the tray: %v, want exit 2\n%s", err, msg)
	}
	if want := fmt.Sprintf("GPU Canary's tray (PID %d) is already running with the state folder %s", first.Process.Pid, filepath.Join(home, ".local", "state", "gpucanary")); !strings.Contains(string(msg), want) {
		t.Errorf("watch says %q, want %q", msg, want)
	}

	// `gpucanary quit` asks the tray through its bus name; it ends as its
	// Quit entry ends it (exit 0, its item gone), and quit says so once it
	// has; then there is no tray to ask.
	quit := exec.Command(bin, "quit")
	quit.Env = env
	if msg, err := quit.CombinedOutput(); err != nil || string(msg) != "GPU Canary's tray quit.\n" {
		t.Fatalf("gpucanary quit: %v, %q", err, msg)
	}
	select {
	case <-exited:
	case <-time.After(20 * time.Second):
		t.Fatalf("the tray still runs 20 s after quit said it had quit\n%s", firstLog.String())
	}
	if code := first.ProcessState.ExitCode(); code != 0 {
		t.Errorf("the tray asked to quit ended with exit %d, want 0\n%s", code, firstLog.String())
	}
	waitFor(t, 15*time.Second, "no tray item", func() ([]string, bool) {
		got := items()
		return got, len(got) == 0
	})
	quit = exec.Command(bin, "quit")
	quit.Env = env
	if msg, err := quit.CombinedOutput(); err != nil || string(msg) != "GPU Canary's tray is not running.\n" {
		t.Errorf("gpucanary quit with no tray: %v, %q", err, msg)
	}
}
