//go:build linux

package app

import (
	"os/exec"
	"syscall"

	"fyne.io/systray"
	"github.com/godbus/dbus/v5"
)

// openFolder shows path in the file manager.
func openFolder(path string) error {
	return exec.Command("xdg-open", path).Start()
}

// terminate asks a process to stop.
func terminate(pid int) error { return syscall.Kill(pid, syscall.SIGTERM) }

// setTooltip sets the StatusNotifierItem's tooltip (Fyne's tray API has
// none; its systray package does).
func setTooltip(s string) { systray.SetTooltip(s) }

// trayHostMissing reports whether no StatusNotifierWatcher is on the
// session bus: then the tray icon cannot appear, and the app opens a
// window instead of running invisibly.
func trayHostMissing() bool {
	conn, err := dbus.ConnectSessionBus()
	if err != nil {
		return true
	}
	defer conn.Close()
	var has bool
	if err := conn.BusObject().Call("org.freedesktop.DBus.NameHasOwner", 0, "org.kde.StatusNotifierWatcher").Store(&has); err != nil {
		return false // cannot tell: assume a tray
	}
	return !has
}
