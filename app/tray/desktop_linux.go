//go:build linux

package tray

import (
	"context"
	"fmt"
	"html"
	"log/slog"
	"os"
	"os/exec"
	"slices"
	"time"

	"github.com/godbus/dbus/v5"

	"github.com/gpucanary/gpucanary/app/link"
	"github.com/gpucanary/gpucanary/app/present"
)

// busTimeout bounds each call on the session bus: a notification daemon
// or bus that has hung must not hold GPU Canary with it.
var busTimeout = 3 * time.Second

// showNote shows a desktop notification through the freedesktop
// Notifications service on the session bus (what dunst, GNOME and KDE
// serve).
func showNote(n present.Note) error {
	conn, err := dbus.SessionBus()
	if err != nil {
		return fmt.Errorf("sending a notification: %w", err)
	}
	return notifyOn(conn, n)
}

// notificationClicks: a click on a notification is not listened for here
// (the notification has no actions).
func notificationClicks(*slog.Logger) <-chan link.Request { return nil }

// noteIcons are the icons (freedesktop Icon Naming Specification names,
// in every icon theme) and urgencies of the notification levels. The
// specification has no "success" icon: emblem-default is the check mark
// that Adwaita and Breeze draw.
var noteIcons = map[present.Level]struct {
	icon    string
	urgency byte // 0 low, 1 normal (2, critical, stays until dismissed)
}{
	present.LevelError:   {"dialog-error", 1},
	present.LevelWarning: {"dialog-warning", 1},
	present.LevelInfo:    {"dialog-information", 0},
	present.LevelSuccess: {"emblem-default", 0},
}

func notifyOn(conn *dbus.Conn, n present.Note) error {
	ctx, cancel := context.WithTimeout(context.Background(), busTimeout)
	defer cancel()
	obj := conn.Object("org.freedesktop.Notifications", "/org/freedesktop/Notifications")
	body := bodyFor(bodyMarkup(ctx, obj), n.Body)
	look, ok := noteIcons[n.Level]
	if !ok {
		look = noteIcons[present.LevelInfo]
	}
	hints := map[string]dbus.Variant{"desktop-entry": dbus.MakeVariant("gpucanary"), "urgency": dbus.MakeVariant(look.urgency)}
	call := obj.CallWithContext(ctx, "org.freedesktop.Notifications.Notify", 0,
		"GPU Canary", uint32(0), look.icon, n.Title, body, []string{}, hints, int32(-1))
	if call.Err != nil {
		return fmt.Errorf("sending a notification: %w", call.Err)
	}
	return nil
}

// bodyMarkup reports whether the notification server parses markup in
// the body (it advertises "body-markup": dunst, GNOME and KDE do, most
// with "body-hyperlinks" too). A body names environments and commands
// read from disk and from other users' processes: a folder may be called
// `<a href="file:/etc/passwd">CLICK</a>`. A server that cannot say is
// treated as parsing markup, since escaping is then the safe side.
func bodyMarkup(ctx context.Context, obj dbus.BusObject) bool {
	var caps []string
	if err := obj.CallWithContext(ctx, "org.freedesktop.Notifications.GetCapabilities", 0).Store(&caps); err != nil {
		return true
	}
	return slices.Contains(caps, "body-markup")
}

// bodyFor escapes body for a server that parses markup, so every
// character shows as written. The summary is plain text by the
// specification, and servers escape it themselves (dunst 1.9 shows
// `<b>` in a summary as written): escaping it too would show `&lt;`.
func bodyFor(markup bool, body string) string {
	if !markup {
		return body
	}
	return html.EscapeString(body)
}

// openFolder shows path in the file manager. xdg-open is reaped when it
// ends, which may be only when the file manager closes.
func openFolder(path string) error {
	cmd := exec.Command("xdg-open", path)
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("opening %s: %w", path, err)
	}
	go cmd.Wait()
	return nil
}

// trayHostMissing reports whether no StatusNotifierWatcher is on the
// session bus: then the tray icon cannot appear, and GPU Canary opens a
// window instead of running invisibly.
func trayHostMissing() bool {
	conn, err := dbus.SessionBus()
	if err != nil {
		return true
	}
	ctx, cancel := context.WithTimeout(context.Background(), busTimeout)
	defer cancel()
	var has bool
	if err := conn.BusObject().CallWithContext(ctx, "org.freedesktop.DBus.NameHasOwner", 0, "org.kde.StatusNotifierWatcher").Store(&has); err != nil {
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
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for ctx.Err() == nil {
		var v dbus.Variant
		err := conn.Object(name, "/StatusNotifierItem").CallWithContext(ctx, "org.freedesktop.DBus.Properties.Get", 0,
			"org.kde.StatusNotifierItem", "Id").Store(&v)
		if err == nil {
			time.Sleep(50 * time.Millisecond) // systray keeps the properties just after exporting them
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}
