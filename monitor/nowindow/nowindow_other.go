//go:build !windows

package nowindow

import "os/exec"

// hide: only Windows gives a child a console window of its own.
func hide(*exec.Cmd) {}
