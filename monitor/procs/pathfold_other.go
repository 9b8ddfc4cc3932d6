//go:build !windows

package procs

// foldPath: paths compare byte for byte (case matters on Linux).
func foldPath(p string) string { return p }
