//go:build windows

package nowindow

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/windows"
)

// TestHideSetsTheFlags: CREATE_NO_WINDOW is added to the flags already
// there, and the window is asked to start hidden.
func TestHideSetsTheFlags(t *testing.T) {
	cmd := exec.Command("cmd.exe")
	cmd.SysProcAttr = &syscall.SysProcAttr{CreationFlags: windows.CREATE_NEW_PROCESS_GROUP}
	Hide(cmd)
	if f := cmd.SysProcAttr.CreationFlags; f&windows.CREATE_NO_WINDOW == 0 || f&windows.CREATE_NEW_PROCESS_GROUP == 0 {
		t.Errorf("CreationFlags = %#x, want CREATE_NO_WINDOW and CREATE_NEW_PROCESS_GROUP", f)
	}
	if !cmd.SysProcAttr.HideWindow {
		t.Error("HideWindow is false")
	}
	if c := Command("taskkill", "/PID", "1"); c.SysProcAttr == nil || c.SysProcAttr.CreationFlags&windows.CREATE_NO_WINDOW == 0 {
		t.Errorf("Command's SysProcAttr = %+v, want CREATE_NO_WINDOW", c.SysProcAttr)
	}
}

// TestHiddenChildRuns: a console program started with CREATE_NO_WINDOW
// runs, and its output and exit status reach the parent through the
// pipes, as a repair's progress reaches the dialog. The child is this
// test binary, asked to print its args and exit 3.
func TestHiddenChildRuns(t *testing.T) {
	if os.Getenv("NOWINDOW_CHILD") == "1" {
		os.Stdout.WriteString("child ran: " + strings.Join(os.Args[len(os.Args)-2:], " ") + "\n")
		os.Stderr.WriteString("to stderr\n")
		os.Exit(3)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	marker := filepath.Join(t.TempDir(), "out.txt")
	cmd := Command(exe, "-test.run", "^TestHiddenChildRuns$", "hello", marker)
	cmd.Env = append(os.Environ(), "NOWINDOW_CHILD=1")
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 3 {
		t.Fatalf("child: %v, want exit status 3; output %q", err, out)
	}
	if !strings.Contains(string(out), "child ran: hello "+marker) || !strings.Contains(string(out), "to stderr") {
		t.Errorf("child's output = %q", out)
	}
}
