// Package shell writes the command text a person pastes into a shell: every
// fix, undo and activate command GPU Canary shows is quoted here, so which
// shell it is written for is decided in one place.
//
// Today that is a POSIX shell on every system. A Windows build will quote
// for PowerShell behind the same Quote (quote_windows.go beside a
// quote_other.go), and every command shown follows without a change of its
// own.
package shell

import "strings"

// Quote writes s as one word of a command line, quoted only when it needs
// to be, so a command reads as a person would type it and still pastes as
// it is.
func Quote(s string) string { return quote(s) }

// Join writes argv as one command line: each argument quoted by Quote,
// separated by spaces.
func Join(argv []string) string {
	q := make([]string, len(argv))
	for i, a := range argv {
		q[i] = Quote(a)
	}
	return strings.Join(q, " ")
}
