// Command trayclick clicks an entry of the tray's menu over DBus, as a tray
// host does when a person clicks it, and prints two numbers of
// milliseconds: until a window with the given title exists (what
// scripts/bench-tray.sh waits for) and until it is mapped, on the screen
// (xwininfo, every 10 ms). scripts/bench-window.sh runs it against the
// real tray: the times it prints are the tray's click, the windows
// process's start and its window's creation together.
package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/godbus/dbus/v5"
)

func main() {
	label := flag.String("label", "Environments…", "the menu entry to click")
	title := flag.String("title", "GPU Canary — Environments", "the title of the window it opens")
	ready := flag.Duration("ready", 30*time.Second, "how long to wait for the tray's menu to list the entry")
	limit := flag.Duration("timeout", 10*time.Second, "how long to wait for the window")
	flag.Parse()
	created, mapped, err := clickAndWait(*label, *title, *ready, *limit)
	if err != nil {
		fmt.Fprintf(os.Stderr, "trayclick: %v\n", err)
		os.Exit(1)
	}
	fmt.Println(created, mapped)
}

// clickAndWait waits for the tray's menu to list label, clicks it and
// returns the milliseconds until a window titled title exists and until
// it is mapped.
func clickAndWait(label, title string, ready, limit time.Duration) (created, mapped int64, err error) {
	conn, err := dbus.ConnectSessionBus()
	if err != nil {
		return 0, 0, fmt.Errorf("connecting to the session bus: %w", err)
	}
	defer conn.Close()
	var item string
	var id int32
	deadline := time.Now().Add(ready)
	for {
		item, id, err = find(conn, label)
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			return 0, 0, fmt.Errorf("waiting for the tray's menu entry %q: %w", label, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if exists, _ := window(title); exists {
		return 0, 0, fmt.Errorf("a window titled %q is on the screen already", title)
	}
	start := time.Now()
	call := conn.Object(item, menuPath(conn, item)).Call("com.canonical.dbusmenu.Event", 0,
		id, "clicked", dbus.MakeVariant(int32(0)), uint32(start.Unix()))
	if call.Err != nil {
		return 0, 0, fmt.Errorf("clicking %q: %w", label, call.Err)
	}
	for {
		exists, viewable := window(title)
		ms := time.Since(start).Milliseconds()
		if exists && created == 0 {
			created = ms
		}
		if viewable {
			return created, ms, nil
		}
		if time.Since(start) > limit {
			return 0, 0, fmt.Errorf("no window titled %q on the screen after %v", title, limit)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// window reports whether a window titled title exists, and whether it is
// mapped (xwininfo's "IsViewable").
func window(title string) (exists, viewable bool) {
	out, err := exec.Command("xwininfo", "-name", title).Output()
	if err != nil {
		return false, false
	}
	return true, strings.Contains(string(out), "IsViewable")
}

// find is the first registered tray item and the id of its menu entry
// labelled label.
func find(conn *dbus.Conn, label string) (item string, id int32, err error) {
	v, err := conn.Object("org.kde.StatusNotifierWatcher", "/StatusNotifierWatcher").
		GetProperty("org.kde.StatusNotifierWatcher.RegisteredStatusNotifierItems")
	if err != nil {
		return "", 0, fmt.Errorf("asking the StatusNotifierWatcher: %w", err)
	}
	items, _ := v.Value().([]string)
	if len(items) == 0 {
		return "", 0, errors.New("no tray item is registered")
	}
	item, _, _ = strings.Cut(items[0], "/")
	var rev uint32
	var root struct {
		ID       int32
		Props    map[string]dbus.Variant
		Children []dbus.Variant
	}
	if err := conn.Object(item, menuPath(conn, item)).Call("com.canonical.dbusmenu.GetLayout", 0,
		int32(0), int32(-1), []string{}).Store(&rev, &root); err != nil {
		return "", 0, fmt.Errorf("reading the tray's menu: %w", err)
	}
	if id, ok := search(root.Children, label); ok {
		return item, id, nil
	}
	return "", 0, errors.New("the menu has no such entry yet")
}

// search finds the entry labelled label among a dbusmenu layout's
// children, depth first.
func search(children []dbus.Variant, label string) (int32, bool) {
	for _, c := range children {
		fields, ok := c.Value().([]any)
		if !ok || len(fields) != 3 {
			continue
		}
		props, _ := fields[1].(map[string]dbus.Variant)
		if l, ok := props["label"]; ok && fmt.Sprint(l.Value()) == label {
			id, _ := fields[0].(int32)
			return id, true
		}
		if sub, ok := fields[2].([]dbus.Variant); ok {
			if id, ok := search(sub, label); ok {
				return id, true
			}
		}
	}
	return 0, false
}

// menuPath is the item's dbusmenu object, from its Menu property.
func menuPath(conn *dbus.Conn, item string) dbus.ObjectPath {
	v, err := conn.Object(item, "/StatusNotifierItem").GetProperty("org.kde.StatusNotifierItem.Menu")
	if p, ok := v.Value().(dbus.ObjectPath); err == nil && ok {
		return p
	}
	return "/StatusNotifierMenu"
}
