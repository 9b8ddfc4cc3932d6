// Package tty is the terminal side of the commands that draw a live view
// (`ps --watch`, as top draws): whether an output is a terminal and how
// wide it is, and keys read one at a time so that `q` quits.
//
// Nothing here changes a terminal that is not one: with standard input or
// output redirected, Keys reads nothing and the view is printed as plain
// text. The platform part is keys_unix.go (termios and poll) and
// keys_other.go (no key reading; Ctrl-C still stops).
//
// It imports golang.org/x/term and golang.org/x/sys only.
package tty

import (
	"io"
	"os"

	"golang.org/x/term"
)

// Width is how many columns w is wide when it is a terminal, else 0 (no
// limit: a pipe or a file gets whole lines).
func Width(w io.Writer) int {
	f, ok := w.(*os.File)
	if !ok || !term.IsTerminal(int(f.Fd())) {
		return 0
	}
	cols, _, err := term.GetSize(int(f.Fd()))
	if err != nil || cols <= 0 {
		return 0
	}
	return cols
}

// IsTerminal reports whether f is a terminal.
func IsTerminal(f any) bool {
	file, ok := f.(*os.File)
	return ok && term.IsTerminal(int(file.Fd()))
}
