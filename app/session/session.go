// Package session says whether this process runs inside a desktop
// session, before anything tries to use one: the tray needs a session bus
// (its icon and menu are a StatusNotifierItem over D-Bus) and a display
// for its windows; the windows need an X display (Fyne's GLFW driver).
//
// Without them the tray would start half-way: godbus, asked for the
// session bus while DBUS_SESSION_BUS_ADDRESS is unset, runs dbus-launch,
// which starts a dbus-daemon of its own that outlives the program, and
// GLFW, without a display, panics in the windows process. The tray and
// the windows check here first and, without a desktop, say so in one line
// and exit.
//
// It imports the standard library only.
package session

import "errors"

// ErrNoDesktop is wrapped by every error of this package; its message is
// the one line to show.
var ErrNoDesktop = errors.New("no desktop session")

// Getenv reads the process's environment (os.Getenv; tests pass their own).
type Getenv func(string) string
