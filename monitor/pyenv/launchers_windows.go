//go:build windows

package pyenv

// HostLaunchers are this platform's host interpreters (WindowsLaunchers).
var HostLaunchers = WindowsLaunchers
