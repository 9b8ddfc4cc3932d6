//go:build windows

package managers

// HostLaunchers are this platform's host interpreters (WindowsLaunchers).
var HostLaunchers = WindowsLaunchers
