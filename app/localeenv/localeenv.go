// Package localeenv keeps Fyne from printing "Fyne error: Error parsing
// user locale C" on every start of the GUI build under LANG=C.UTF-8 (the
// default of Docker's Python images), which the user did not ask for.
//
// Fyne's lang package reads the locale in its package initialization,
// through github.com/jeandeaual/go-locale: the first of LC_ALL,
// LC_MESSAGES and LANG that is set, its encoding cut off. "C" and "POSIX"
// themselves are understood (English), but "C.UTF-8" becomes "C", which
// is not a BCP 47 tag, and Fyne logs the parse error, three lines on
// stderr, in every command (`version`, `check --json`…) before main runs.
// Nothing in main can come earlier, and the CLI's code cannot be kept out
// of a binary that holds the GUI, so the variable Fyne reads is given the
// value it understands for exactly as long as Fyne's initialization lasts:
//
//   - this package's init sets it to "C" (same language: untranslated
//     English) when its value is "C.<codeset>" or "POSIX.<codeset>";
//   - the main package calls Restore from its own init, which Go runs
//     after every package it imports, Fyne's included, so every command
//     and every process it starts (pip in a repair) sees the user's
//     locale as it was.
//
// That this init runs before Fyne's rests on the Go specification (since
// Go 1.21): packages are initialized in the order of their import paths,
// a package once all it imports is initialized. This package imports
// only os and strings, both of which go-locale imports too, and its path
// (github.com/gpucanary/…) sorts before go-locale's
// (github.com/jeandeaual/…); so it is initialized before go-locale, which
// Fyne's lang imports. The GUI build's test runs the program under
// LANG=C.UTF-8 and fails on any line of that noise.
//
// It imports os and strings only, and must stay so.
package localeenv

import (
	"os"
	"strings"
)

// hidden is the variable set to "C" at init and its value before, or ""
// when nothing was changed.
var hidden, was string

func init() { hide() }

// hide gives the variable go-locale reads a value Fyne parses, when its
// language is C or POSIX with a codeset.
func hide() {
	for _, name := range []string{"LC_ALL", "LC_MESSAGES", "LANG"} {
		v := os.Getenv(name)
		if v == "" {
			continue
		}
		lang, _, withCodeset := strings.Cut(v, ".")
		if withCodeset && (lang == "C" || lang == "POSIX") {
			if os.Setenv(name, "C") == nil {
				hidden, was = name, v
			}
		}
		return // go-locale reads the first one set
	}
}

// Restore puts back what init changed. The main package of the GUI build
// calls it from its init, once Fyne's packages are initialized.
func Restore() {
	if hidden != "" {
		os.Setenv(hidden, was)
		hidden = ""
	}
}
