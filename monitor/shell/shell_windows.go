//go:build windows

package shell

// native: PowerShell, the shell Windows Terminal and the Start menu's
// terminal open. cmd.exe does not read these commands; docs/windows.md says to
// paste them into PowerShell.
var native Dialect = PowerShell
