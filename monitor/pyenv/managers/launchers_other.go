//go:build !windows

package managers

// HostLaunchers are this platform's host interpreters (POSIXLaunchers).
var HostLaunchers = POSIXLaunchers
