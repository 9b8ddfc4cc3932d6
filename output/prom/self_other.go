//go:build !linux && !windows

package prom

// collectProcess adds nothing: the process_ metrics are read from
// /proc on Linux and from GetProcessTimes on Windows only.
func collectProcess(*batch, string) {}
