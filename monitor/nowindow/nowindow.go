// Package nowindow starts child processes the way a tray app must on
// Windows: without a console window. A program linked as a GUI application
// (gpucanaryw.exe, -H windowsgui) has no console, so Windows gives every
// console program it starts (python.exe for pip, taskkill, powershell) a
// console window of its own, which flashes up, or stays for a whole pip
// run, unless the process is created with CREATE_NO_WINDOW. Its output
// still reaches the pipes it is given, so a repair's progress goes to the
// repair dialog as on Linux.
//
// Every child GPU Canary starts goes through Hide (or Command). Elsewhere
// Hide changes nothing. It imports only the standard library and x/sys.
package nowindow

import "os/exec"

// Command is exec.Command for a child without a console window.
func Command(name string, args ...string) *exec.Cmd { return Hide(exec.Command(name, args...)) }

// Hide makes cmd start without a console window, keeping the creation
// flags already set (a new process group, for one), and returns it.
func Hide(cmd *exec.Cmd) *exec.Cmd {
	hide(cmd)
	return cmd
}
