// Package text writes what commands print for a person: the GPU, the
// environments and their findings (check), the process table (ps) and the
// events (watch), with colour only on a terminal and paths under the home
// directory shortened to ~. Every command that shows one of these shows it
// through here, so they read the same everywhere.
//
// Nothing it prints can act on the terminal: every string argument of
// its printf is written through human.Visible (control characters, bidi
// overrides and bytes that are not UTF-8 shown as escapes), except the
// colour codes it paints with itself, which are of type safe. A process's
// argv or an environment's path, chosen by another user, is shown, never
// obeyed. With a Width, every line is cut to fit it.
//
// It imports the shared types of monitor and its leaves (finding, gpu,
// procs, pyenv, human) and output/words, whose wording it lays out for a
// terminal (the summary, counts, verdicts and cells the windows say too);
// nothing under app/ and nothing of cmd.
package text

import (
	"fmt"
	"io"
	"os"
	"reflect"
	"strings"
	"time"

	"github.com/gpucanary/gpucanary/monitor/human"
	"github.com/gpucanary/gpucanary/output/words"
)

// Printer renders results for a person.
type Printer struct {
	W io.Writer
	// Colour paints verdicts and severities with ANSI colours.
	Colour bool
	// Home is shortened to ~ in paths shown ("" shortens nothing).
	Home string
	// Now is the clock the process table's TIME column counts from; nil
	// means time.Now.
	Now func() time.Time
	// Width is the terminal's width in columns: every line is cut to fit
	// it and the process table drops columns to fit it. 0 is no limit (a
	// pipe or a file).
	Width int
}

// New is a printer for w: coloured when w is a terminal and neither
// NO_COLOR nor TERM=dumb says otherwise, with the user's home shortened.
func New(w io.Writer, getenv func(string) string) Printer {
	home, _ := os.UserHomeDir()
	return Printer{W: w, Colour: IsColourTerminal(w, getenv), Home: home}
}

// IsColourTerminal reports whether w is a terminal that should get colour.
func IsColourTerminal(w io.Writer, getenv func(string) string) bool {
	f, ok := w.(*os.File)
	if !ok || getenv("NO_COLOR") != "" || strings.EqualFold(getenv("TERM"), "dumb") {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

const (
	red    = "\x1b[31m"
	yellow = "\x1b[33m"
	green  = "\x1b[32m"
	dim    = "\x1b[2m"
	bold   = "\x1b[1m"
	reset  = "\x1b[0m"
)

// safe is text this package made (colour codes, and strings already made
// visible): printf writes it as it is.
type safe string

// paint makes s visible and, on a colour terminal, colours it.
func (p Printer) paint(code, s string) safe {
	if !p.Colour {
		return safe(human.Visible(s))
	}
	return safe(code + human.Visible(s) + reset)
}

// printf is the one way this package writes: every argument of a string
// kind (or a Stringer) is made visible unless it is safe, and with a
// Width each line is cut to fit.
func (p Printer) printf(format string, args ...any) {
	shown := make([]any, len(args))
	for i, a := range args {
		shown[i] = visibleArg(a)
	}
	out := fmt.Sprintf(format, shown...)
	if p.Width > 0 {
		out = fitLines(out, p.Width)
	}
	io.WriteString(p.W, out)
}

func visibleArg(a any) any {
	switch v := a.(type) {
	case safe:
		return string(v)
	case string:
		return human.Visible(v)
	case error:
		return human.Visible(v.Error())
	case fmt.Stringer:
		return human.Visible(v.String())
	}
	if rv := reflect.ValueOf(a); rv.Kind() == reflect.String {
		return human.Visible(rv.String()) // named string kinds: Verdict, Kind, Severity
	}
	return a
}

// short replaces the home directory with ~ for reading, never for JSON
// (words.Short).
func (p Printer) short(path string) string { return words.Short(p.Home, path) }

func (p Printer) now() time.Time {
	if p.Now == nil {
		return time.Now()
	}
	return p.Now()
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
