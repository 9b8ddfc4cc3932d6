//go:build !linux && !windows

package report

// readHost: nothing beyond the OS and architecture is read here.
func readHost() Host { return Host{} }
