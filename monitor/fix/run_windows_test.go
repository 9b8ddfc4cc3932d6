//go:build windows

package fix

import (
	"context"
	"errors"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/windows"
)

// TestWindowsInstallerStartsWithoutAWindow: the installer is started in a
// process group of its own and with no console window (from the tray, a
// GUI program, python.exe would otherwise show one for the whole run).
func TestWindowsInstallerStartsWithoutAWindow(t *testing.T) {
	cmd := exec.Command("python.exe", "-m", "pip")
	setProcessGroup(cmd, false)
	want := uint32(windows.CREATE_NO_WINDOW | windows.CREATE_NEW_PROCESS_GROUP)
	if cmd.SysProcAttr == nil || cmd.SysProcAttr.CreationFlags&want != want || !cmd.SysProcAttr.HideWindow {
		t.Fatalf("SysProcAttr = %+v, want CREATE_NO_WINDOW|CREATE_NEW_PROCESS_GROUP and HideWindow", cmd.SysProcAttr)
	}
}

// TestWindowsInstallerOutputReachesTheDialog runs a real console program
// (cmd.exe) the way a repair runs pip: without a window, its stdout and
// stderr lines reach the caller (the progress dialog, the journal) in
// order, and its exit status is reported.
func TestWindowsInstallerOutputReachesTheDialog(t *testing.T) {
	var mu sync.Mutex
	var lines []string
	code, err := runInstaller(context.Background(), []string{"cmd.exe", "/c", "echo Collecting torch& echo Successfully installed torch 1>&2& exit 3"},
		nil, "", time.Minute, func(l string) {
			mu.Lock()
			defer mu.Unlock()
			lines = append(lines, strings.TrimSpace(l))
		}, nil)
	if code != 3 || err == nil || !strings.Contains(err.Error(), "exit status 3") {
		t.Errorf("runInstaller = %d, %v; want exit status 3", code, err)
	}
	mu.Lock()
	defer mu.Unlock()
	if !slices.Equal(lines, []string{"Collecting torch", "Successfully installed torch"}) {
		t.Errorf("lines = %q", lines)
	}
	if errors.Is(err, errStopped) {
		t.Error("a run that ended by itself is reported as stopped")
	}
}
