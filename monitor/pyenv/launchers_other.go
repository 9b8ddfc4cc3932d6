//go:build !windows

package pyenv

// HostLaunchers are this platform's host interpreters (POSIXLaunchers).
var HostLaunchers = POSIXLaunchers
