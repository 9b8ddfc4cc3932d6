//go:build !windows

package shell

// native: a POSIX shell (bash, zsh, dash; fish reads the same quoting),
// except that a word holding a control character is written as $'…',
// which fish and dash 0.5.12 (Debian 12's sh) do not read (posix.go).
var native Dialect = POSIX
