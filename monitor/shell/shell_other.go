//go:build !windows

package shell

// native: a POSIX shell (bash, zsh, dash; fish reads the same quoting).
var native Dialect = POSIX
