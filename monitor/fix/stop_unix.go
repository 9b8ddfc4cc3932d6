//go:build !windows

package fix

import (
	"os/exec"
	"syscall"
	"time"
)

// stopSteps are how an installer is stopped: first as Ctrl-C would (pip
// and uv unwind and exit on SIGINT; pip does not roll back its uninstall
// then, which the run reports), then SIGTERM, then SIGKILL, each sent to
// the whole process group (pip --python runs a second pip under the
// target interpreter) and given a while to work.
var stopSteps = []stopStep{
	{"SIGINT", func(c *exec.Cmd) { signalGroup(c, syscall.SIGINT) }, 15 * time.Second},
	{"SIGTERM", func(c *exec.Cmd) { signalGroup(c, syscall.SIGTERM) }, 5 * time.Second},
	{"SIGKILL", func(c *exec.Cmd) { signalGroup(c, syscall.SIGKILL) }, 0},
}

func signalGroup(cmd *exec.Cmd, sig syscall.Signal) {
	if cmd.Process != nil {
		_ = syscall.Kill(-cmd.Process.Pid, sig)
	}
}
