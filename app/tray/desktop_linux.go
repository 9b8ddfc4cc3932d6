//go:build linux

package tray

import (
	"fmt"
	"os"
	"os/exec"
	"time"

	"github.com/godbus/dbus/v5"
)

// notify shows a desktop notification through the freedesktop
// Notifications service on the session bus (what dunst, GNOME and KDE
// serve).
func notify(title, body string) error {
	conn, err := dbus.SessionBus()
	if err != nil {
		return fmt.Errorf("sending a notification: %w", err)
	}
	obj := conn.Object("org.freedesktop.Notifications", "/org/freedesktop/Notifications")
	hints := map[string]dbus.Variant{"desktop-entry": dbus.MakeVariant("gpucanary")}
	call := obj.Call("org.freedesktop.Notifications.Notify", 0,
		"GPU Canary", uint32(0), "dialog-warning", title, body, []string{}, hints, int32(-1))
	if call.Err != nil {
		return fmt.Errorf("sending a notification: %w", call.Err)
	}
	return nil
}

// openFolder shows path in the file manager.
func openFolder(path string) error { return exec.Command("xdg-open", path).Start() }

// trayHostMissing reports whether no StatusNotifierWatcher is on the
// session bus: then the tray icon cannot appear, and GPU Canary opens a
// window instead of running invisibly.
func trayHostMissing() bool {
	conn, err := dbus.SessionBus()
	if err != nil {
		return true
	}
	var has bool
	if err := conn.BusObject().Call("org.freedesktop.DBus.NameHasOwner", 0, "org.kde.StatusNotifierWatcher").Store(&has); err != nil {
		return false // cannot tell: assume a tray
	}
	return !has
}

// waitTrayUp waits until systray has exported the StatusNotifierItem's
// properties: systray calls its ready function before it exports them,
// and a tooltip or icon set in between is lost.
func waitTrayUp() {
	conn, err := dbus.SessionBus()
	if err != nil {
		return
	}
	name := fmt.Sprintf("org.kde.StatusNotifierItem-%d-1", os.Getpid())
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		var v dbus.Variant
		err := conn.Object(name, "/StatusNotifierItem").Call("org.freedesktop.DBus.Properties.Get", 0,
			"org.kde.StatusNotifierItem", "Id").Store(&v)
		if err == nil {
			time.Sleep(50 * time.Millisecond) // systray keeps the properties just after exporting them
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}
