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
	"sync"
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

// notificationClicks delivers the actions invoked on GPU Canary's
// notifications (a click on one is its "default" action, "Show") as the
// window to open, through the same path as a click on a Windows toast.
// Nothing is delivered without a session bus.
func notificationClicks(log *slog.Logger) <-chan link.Request {
	conn, err := dbus.SessionBus()
	if err != nil {
		return nil
	}
	clicks, err := listenActions(conn, sentNotes, log)
	if err != nil {
		log.Warn("the notifications' buttons will not work: listening for them on the session bus", "err", err)
		return nil
	}
	return clicks
}

// Action keys of the freedesktop Notify call: "default" is a click on the
// notification itself (the specification's name), which shows it.
const (
	actionDefault = "default"
	actionRepair  = "repair"
	actionReport  = "report"
)

// sentNotes are the notifications of this process that carry actions, by
// the ID the server gave them, until the server says they closed: an
// ActionInvoked signal about another ID (another program's notification)
// is none of ours.
var sentNotes = &noteIDs{byID: map[uint32]present.Note{}}

// noteIDs is a bounded record of notifications by ID; a server that never
// says NotificationClosed cannot make it grow without end.
type noteIDs struct {
	mu    sync.Mutex
	byID  map[uint32]present.Note
	order []uint32
}

// noteIDsKeep is how many notifications' actions are remembered.
const noteIDsKeep = 64

func (r *noteIDs) add(id uint32, n present.Note) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.byID[id]; !ok {
		r.order = append(r.order, id)
	}
	r.byID[id] = n
	for len(r.order) > noteIDsKeep {
		delete(r.byID, r.order[0])
		r.order = r.order[1:]
	}
}

func (r *noteIDs) get(id uint32) (present.Note, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	n, ok := r.byID[id]
	return n, ok
}

func (r *noteIDs) remove(id uint32) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.byID, id)
	r.order = slices.DeleteFunc(r.order, func(x uint32) bool { return x == id })
}

// listenActions subscribes conn to the notification server's
// ActionInvoked and NotificationClosed signals (only the server's: the
// match names its bus name, which the bus resolves to its owner) and
// turns an action on a notification in sent into the request it stands
// for. A request that finds the channel full is dropped: the tray is busy
// opening one already.
func listenActions(conn *dbus.Conn, sent *noteIDs, log *slog.Logger) (<-chan link.Request, error) {
	for _, member := range []string{"ActionInvoked", "NotificationClosed"} {
		if err := conn.AddMatchSignal(dbus.WithMatchSender("org.freedesktop.Notifications"),
			dbus.WithMatchObjectPath("/org/freedesktop/Notifications"),
			dbus.WithMatchInterface("org.freedesktop.Notifications"), dbus.WithMatchMember(member)); err != nil {
			return nil, err
		}
	}
	signals := make(chan *dbus.Signal, 16)
	conn.Signal(signals)
	clicks := make(chan link.Request, 4)
	go func() {
		for sig := range signals {
			if sig.Path != "/org/freedesktop/Notifications" || len(sig.Body) < 2 {
				continue
			}
			id, _ := sig.Body[0].(uint32)
			switch sig.Name {
			case "org.freedesktop.Notifications.NotificationClosed":
				sent.remove(id)
			case "org.freedesktop.Notifications.ActionInvoked":
				key, _ := sig.Body[1].(string)
				n, ok := sent.get(id)
				if !ok {
					continue
				}
				r, ok := actionRequest(n, key)
				if !ok {
					log.Warn("an action GPU Canary did not offer was invoked on its notification", "action", key)
					continue
				}
				select {
				case clicks <- r:
				default:
				}
			}
		}
	}()
	return clicks, nil
}

// noteActions are the Notify call's actions for n: key, label, ….
func noteActions(n present.Note) []string {
	a := []string{}
	if n.Env != "" {
		a = append(a, actionDefault, present.ActionShow)
		if n.Repair {
			a = append(a, actionRepair, present.ActionRepair)
		}
	}
	if n.Job != 0 {
		a = append(a, actionReport, present.ActionReport)
	}
	return a
}

// actionRequest is what action key on n asks of the windows: the
// Environments window on n's environment, and, for "repair", its repair;
// for "report", the report on n's job.
func actionRequest(n present.Note, key string) (link.Request, bool) {
	r := link.Request{Show: link.ShowEnvs, Env: n.Env}
	switch {
	case key == actionReport && n.Job != 0:
		return link.Request{ReportJob: n.Job}, true
	case n.Env == "":
		return link.Request{}, false
	case key == actionDefault:
		return r, true
	case key == actionRepair && n.Repair:
		r.Repair = n.Env
		return r, true
	}
	return link.Request{}, false
}

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
	caps, known := capabilities(ctx, obj)
	if known && !slices.Contains(caps, "actions") {
		n = n.NoActions()
	}
	body := bodyFor(!known || slices.Contains(caps, "body-markup"), n.Body)
	look, ok := noteIcons[n.Level]
	if !ok {
		look = noteIcons[present.LevelInfo]
	}
	hints := map[string]dbus.Variant{"desktop-entry": dbus.MakeVariant("gpucanary"), "urgency": dbus.MakeVariant(look.urgency)}
	actions := noteActions(n)
	var id uint32
	err := obj.CallWithContext(ctx, "org.freedesktop.Notifications.Notify", 0,
		"GPU Canary", uint32(0), look.icon, n.Title, body, actions, hints, int32(-1)).Store(&id)
	if err != nil {
		return fmt.Errorf("sending a notification: %w", err)
	}
	if len(actions) > 0 {
		sentNotes.add(id, n)
	}
	return nil
}

// capabilities are what the notification server says it does; known is
// false when it cannot say. Two matter here: "body-markup" (dunst, GNOME
// and KDE parse markup in the body, most with "body-hyperlinks" too: a
// body names environments and commands read from disk and from other
// users' processes, and a folder may be called
// `<a href="file:/etc/passwd">CLICK</a>`), and "actions" (it shows the
// notification's buttons). A server that cannot say is treated as parsing
// markup, since escaping is then the safe side, and as showing buttons,
// as nearly all do.
func capabilities(ctx context.Context, obj dbus.BusObject) (caps []string, known bool) {
	if err := obj.CallWithContext(ctx, "org.freedesktop.Notifications.GetCapabilities", 0).Store(&caps); err != nil {
		return nil, false
	}
	return caps, true
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
