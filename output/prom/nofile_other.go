//go:build !unix

package prom

// fileLimit is 0 (not known): Windows has no per-process descriptor
// limit that a flood of sockets reaches before memory.
func fileLimit() uint64 { return 0 }
