//go:build !linux && !windows

package fix

import (
	"os/exec"
	"syscall"
)

// setProcessGroup starts the installer in a process group of its own, so
// that stopping it stops everything it started. This platform cannot ask
// the kernel to stop it when GPU Canary dies (Linux's Pdeathsig).
func setProcessGroup(cmd *exec.Cmd, _ bool) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

// lockStartThread: nothing is tied to the starting thread here.
const lockStartThread = false
