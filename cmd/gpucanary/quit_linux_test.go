package main

import (
	"bufio"
	"os/exec"
	"strings"
	"testing"

	"github.com/gpucanary/gpucanary/monitor/instance"
	"github.com/gpucanary/gpucanary/monitor/store"
)

// TestQuitCommand: `gpucanary quit` asks the session's tray (a Claim on a
// private session bus, which gives the session up when asked, as the
// tray does) to quit and says it did; with none running it says so; a
// tray that does not quit is exit 1 once --timeout ends. Each exit 0
// but the last.
func TestQuitCommand(t *testing.T) {
	daemon, err := exec.LookPath("dbus-daemon")
	if err != nil {
		t.Skip("dbus-daemon is not installed (make deps-test installs dbus-x11)")
	}
	bus := exec.Command(daemon, "--session", "--nofork", "--print-address")
	out, _ := bus.StdoutPipe()
	if err := bus.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { bus.Process.Kill(); bus.Wait() })
	addr, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("dbus-daemon printed no address: %v", err)
	}
	t.Setenv("DBUS_SESSION_BUS_ADDRESS", strings.TrimSpace(addr))
	t.Setenv(store.DirVariable, t.TempDir())

	tray, err := instance.Claim(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		if _, ok := <-tray.Quit; ok {
			tray.Close()
		}
	}()
	stdout, stderr, code := runCLI(t, "quit")
	if code != exitOK || stdout != "GPU Canary's tray quit.\n" {
		t.Errorf("quit with a tray: exit %d, %q %q", code, stdout, stderr)
	}
	stdout, stderr, code = runCLI(t, "quit")
	if code != exitOK || stdout != "GPU Canary's tray is not running.\n" {
		t.Errorf("quit with none: exit %d, %q %q", code, stdout, stderr)
	}

	stubborn, err := instance.Claim(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer stubborn.Close()
	// It never quits: the timeout's length decides nothing.
	stdout, stderr, code = runCLI(t, "quit", "--timeout", "200ms")
	if code != exitFound || !strings.Contains(stderr, "gpucanary quit: GPU Canary's tray (PID ") ||
		!strings.HasSuffix(stderr, "was asked to quit and still runs after 200ms.\n") {
		t.Errorf("quit with a tray that stays: exit %d, %q %q", code, stdout, stderr)
	}
}
