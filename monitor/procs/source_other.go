//go:build !linux && !windows

package procs

// newSource: no scanner for this platform.
func newSource(Options) Source { return unsupported{} }
