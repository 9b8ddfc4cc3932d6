// Package shell writes the command text a person pastes into a shell: every
// fix, undo and activate command GPU Canary shows is quoted here, so which
// shell it is written for is decided in one place.
//
// On Windows that is PowerShell (the shell Windows Terminal opens), on
// every other system a POSIX shell. Both dialects are plain functions of
// their input and are tested on every platform; Quote and Join use the
// one this build's users paste into (shell_windows.go, shell_other.go).
package shell

// Dialect is one shell's quoting.
type Dialect interface {
	// Quote writes s as one word of a command line, quoted only when it
	// needs to be, so a command reads as a person would type it and still
	// pastes as it is.
	Quote(s string) string
	// Join writes argv as one command line that runs argv[0] with the
	// rest as its arguments.
	Join(argv []string) string
	// WithEnv writes the line that runs argv with the environment
	// variable name set to value.
	WithEnv(name, value string, argv []string) string
}

// Native is the dialect of the shell a person on this system pastes into.
var Native Dialect = native

// Quote writes s as one word of a command line for Native.
func Quote(s string) string { return Native.Quote(s) }

// Join writes argv as one command line for Native: each argument quoted,
// separated by spaces.
func Join(argv []string) string { return Native.Join(argv) }
