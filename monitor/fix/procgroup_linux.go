//go:build linux

package fix

import (
	"os/exec"
	"syscall"
)

// setProcessGroup starts the installer (or its guardian) in a process
// group of its own, so that stopping it stops everything it started, and
// asks the kernel to signal it if GPU Canary dies first, even by kill -9:
// an installer must never go on alone, unseen. A guardian gets SIGTERM,
// its cue to stop the whole group; an installer started directly gets
// SIGINT, what Ctrl-C sends.
func setProcessGroup(cmd *exec.Cmd, guarded bool) {
	sig := syscall.SIGINT
	if guarded {
		sig = syscall.SIGTERM
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: sig}
}

// lockStartThread: the kernel sends Pdeathsig when the thread that
// started the child ends, not the process (go.dev/issue/27505), so the
// goroutine that starts the installer keeps its thread until it exits.
const lockStartThread = true
