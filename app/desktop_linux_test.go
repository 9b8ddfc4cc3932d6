//go:build linux

package app

import (
	"errors"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gpucanary/gpucanary/monitor/procs"
)

// TestTerminateOnlyTheProcessShown signals a real process only when its
// start time is the one the table showed: a PID taken by another process
// since is refused and left running.
func TestTerminateOnlyTheProcessShown(t *testing.T) {
	cmd := exec.Command("sleep", "60")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	pid := cmd.Process.Pid
	start, err := procs.StartTimeOf(pid)
	if err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d < -time.Second || d > time.Minute {
		t.Fatalf("start time %s is not about now", start)
	}

	err = terminate(pid, start.Add(-time.Hour))
	if err == nil || !strings.Contains(err.Error(), "another process") {
		t.Fatalf("terminate with another start time = %v, want a refusal", err)
	}
	if err := syscall.Kill(pid, 0); err != nil {
		t.Fatalf("the other process was signalled: %v", err)
	}

	if err := terminate(pid, start); err != nil {
		t.Fatalf("terminate = %v", err)
	}
	err = cmd.Wait()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.Sys().(syscall.WaitStatus).Signal() != syscall.SIGTERM {
		t.Fatalf("sleep ended with %v, want SIGTERM", err)
	}
	if err := terminate(pid, start); err == nil || !strings.Contains(err.Error(), "exited") {
		t.Errorf("terminate after exit = %v", err)
	}
}
