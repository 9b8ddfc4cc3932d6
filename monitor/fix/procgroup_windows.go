//go:build windows

package fix

import (
	"os/exec"
	"strconv"
	"syscall"
	"time"

	"github.com/gpucanary/gpucanary/monitor/nowindow"
)

// setProcessGroup starts the installer in a new process group, with no
// console window: started from the tray (a GUI program, with no console)
// python.exe would otherwise get a console window for the whole pip run.
// Its output goes to the pipes all the same.
func setProcessGroup(cmd *exec.Cmd, _ bool) {
	cmd.SysProcAttr = &syscall.SysProcAttr{CreationFlags: syscall.CREATE_NEW_PROCESS_GROUP}
	nowindow.Hide(cmd)
}

// lockStartThread: nothing is tied to the starting thread on Windows.
const lockStartThread = false

// stopSteps: taskkill /T asks the installer's process tree to close, then
// /F ends it (Windows process groups do not hold a tree together).
var stopSteps = []stopStep{
	{"taskkill /T", func(c *exec.Cmd) { taskkill(c, false) }, 10 * time.Second},
	{"taskkill /T /F", func(c *exec.Cmd) { taskkill(c, true); _ = c.Process.Kill() }, 0},
}

func taskkill(cmd *exec.Cmd, force bool) {
	if cmd.Process == nil {
		return
	}
	args := []string{"/T", "/PID", strconv.Itoa(cmd.Process.Pid)}
	if force {
		args = append([]string{"/F"}, args...)
	}
	_ = nowindow.Command("taskkill", args...).Run()
}
