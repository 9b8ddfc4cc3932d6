// Package text writes what commands print for a person: the GPU, the
// environments and their findings (check), the process table (ps) and the
// events (watch), with colour only on a terminal and paths under the home
// directory shortened to ~. Every command that shows one of these shows it
// through here, so they read the same everywhere.
//
// It imports the shared types of monitor and its leaves (gpu, health,
// procs, pyenv, human); nothing under app/ and nothing of cmd.
package text

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"
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

func (p Printer) paint(code, s string) string {
	if !p.Colour {
		return s
	}
	return code + s + reset
}

// short replaces the home directory with ~ for reading, never for JSON.
func (p Printer) short(path string) string {
	if p.Home != "" {
		if rel, err := filepath.Rel(p.Home, path); err == nil && !strings.HasPrefix(rel, "..") {
			if rel == "." {
				return "~"
			}
			return filepath.Join("~", rel)
		}
	}
	return path
}

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

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}
