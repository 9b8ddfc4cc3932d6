//go:build windows

package nowindow

import (
	"os/exec"
	"syscall"

	"golang.org/x/sys/windows"
)

// hide adds CREATE_NO_WINDOW (a console program gets no console, so none
// is shown) and STARTF_USESHOWWINDOW with SW_HIDE (a window program is
// asked to start hidden; explorer, which opens its own window whatever it
// is asked, ignores it).
func hide(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.CreationFlags |= windows.CREATE_NO_WINDOW
	cmd.SysProcAttr.HideWindow = true
}
