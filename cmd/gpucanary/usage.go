package main

import (
	"errors"
	"fmt"
	"regexp"
	"sync"
	"time"

	"github.com/gpucanary/gpucanary/monitor/shell"
)

// What is wrong with a command line, said in one line before the help:
// a flag the flag package refuses, a wrong number of operands, a value a
// flag cannot take. Every one is exit status 2.

// flagNamed matches the flag package's errors that name a flag as -name
// ("flag provided but not defined: -nope", "invalid value \"0s\" for flag
// -timeout: …"); the help spells long flags --name, and so should the
// error. A one-letter flag keeps its one dash, as the help writes it (-o).
//
// Compiled at first use, not at each start of the program (a check's
// start does not pay for it).
var flagNamed = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^(flag provided but not defined: |flag needs an argument: |invalid boolean value "(?:[^"\\]|\\.)*" for |invalid value "(?:[^"\\]|\\.)*" for flag )-([^-\s:=][^\s:=]+)(:|$)`)
})

// flagError is the flag package's error as GPU Canary prints it.
func flagError(err error) string {
	return flagNamed().ReplaceAllString(err.Error(), "$1--$2$3")
}

// operands is how many arguments besides flags a command takes. The zero
// value takes none: a command that takes some says so in the registry.
type operands struct {
	min, max int    // max < 0: any number
	what     string // one operand, for the message: "environment path"
}

// anyPaths is operands for PATH...: any number, none included.
var anyPaths = operands{max: -1, what: "path"}

// check says what is wrong when args are not what o allows, "" when
// they are.
func (o operands) check(args []string) string {
	n := len(args)
	if n >= o.min && (o.max < 0 || n <= o.max) {
		return ""
	}
	got := "none"
	if n > 0 {
		got = fmt.Sprintf("%d: %s", n, shell.Join(args))
	}
	switch {
	case o.max == 0:
		return "takes no arguments, got " + got
	case o.min == o.max:
		return fmt.Sprintf("needs exactly %s, got %s", count(o.min, o.what), got)
	case o.max > 0 && n > o.max:
		return fmt.Sprintf("takes at most %s, got %s", count(o.max, o.what), got)
	default:
		return fmt.Sprintf("needs at least %s, got %s", count(o.min, o.what), got)
	}
}

// count is "one environment path", "2 paths".
func count(n int, what string) string {
	if n == 1 {
		return "one " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

// positiveDuration is a duration flag that must be above zero: a timeout
// of 0s would stop the installer before it starts, and a negative one
// means nothing.
type positiveDuration time.Duration

func (d *positiveDuration) Set(s string) error {
	v, err := time.ParseDuration(s)
	if err != nil {
		return errors.New("not a duration: want one such as 45m or 2h")
	}
	if v <= 0 {
		return errors.New("want a duration above zero, such as 45m or 2h")
	}
	*d = positiveDuration(v)
	return nil
}

func (d *positiveDuration) String() string { return time.Duration(*d).String() }
