#!/usr/bin/python3
"""Checks GPU Canary's menu entry as a desktop uses it.

It finds io.github.gpucanary.desktop the way GLib-based menus and launchers
(GNOME Shell, and GLib's own `gio launch`) do: GDesktopAppInfo over
XDG_DATA_HOME and XDG_DATA_DIRS. It checks the program the entry starts
(after the Exec key's quoting is undone) and the icon it names, launches
it as a menu click would, and waits until the started tray's icon is
registered with the StatusNotifierWatcher, the panel's side of the tray
protocol. Then it ends the tray.

Usage, inside a session bus with status-notifier-watcher running
(scripts/menu-entry-check.sh sets that up):
    /usr/bin/python3 scripts/menu-entry-check.py EXPECTED_PROGRAM
It uses Debian's python3-gi, hence /usr/bin/python3.
"""
import glob
import os
import signal
import sys
import time

import gi

gi.require_version("Gio", "2.0")
from gi.repository import Gio, GLib  # noqa: E402

DESKTOP_ID = "io.github.gpucanary.desktop"
WATCHER = "org.kde.StatusNotifierWatcher"
SIZES = {"16x16", "22x22", "24x24", "32x32", "48x48", "64x64", "128x128", "256x256"}
# Upper bounds of waits on a condition, for a loaded 2-core machine; a
# passing run returns as soon as the condition holds.
WAIT_S = 60


def fail(msg):
    print("menu entry: " + msg, file=sys.stderr)
    sys.exit(1)


def wait_for(what, cond):
    deadline = time.monotonic() + WAIT_S
    while True:
        v = cond()
        if v:
            return v
        if time.monotonic() > deadline:
            fail(f"gave up after {WAIT_S} s waiting for {what}")
        time.sleep(0.1)


def dbus_call(bus, dest, path, iface, method, args, reply):
    return bus.call_sync(dest, path, iface, method, args, GLib.VariantType(reply),
                         Gio.DBusCallFlags.NONE, -1, None).unpack()


def registered_items(bus):
    try:
        (v,) = dbus_call(bus, WATCHER, "/StatusNotifierWatcher", "org.freedesktop.DBus.Properties", "Get",
                         GLib.Variant("(ss)", (WATCHER, "RegisteredStatusNotifierItems")), "(v)")
        return set(v)
    except GLib.Error:
        return set()


def pid_of(bus, item):
    name = item.split("/", 1)[0]
    (pid,) = dbus_call(bus, "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus",
                       "GetConnectionUnixProcessID", GLib.Variant("(s)", (name,)), "(u)")
    return pid


def gone(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] == "Z"
    except FileNotFoundError:
        return True


def main():
    if len(sys.argv) != 2:
        fail("usage: menu-entry-check.py EXPECTED_PROGRAM")
    expected = os.path.realpath(sys.argv[1])

    try:
        app = Gio.DesktopAppInfo.new(DESKTOP_ID)
    except TypeError:  # GLib returned NULL: no such entry, or its program is missing
        app = None
    if app is None:
        fail(f"{DESKTOP_ID} is in no applications folder of XDG_DATA_HOME or XDG_DATA_DIRS, "
             "or the program its Exec key names is missing")
    if not app.should_show():
        fail(f"{app.get_filename()} is hidden from menus")
    # The Exec key undone as GLib does before it starts the program: the
    # key file's escapes, then %% to %, then shell-like word splitting.
    # (get_executable() would only cut at the first space.)
    exe = GLib.shell_parse_argv(app.get_commandline().replace("%%", "%"))[1][0]
    found = exe if os.path.isabs(exe) else GLib.find_program_in_path(exe)
    if not found or os.path.realpath(found) != expected:
        fail(f"{app.get_filename()} starts {exe!r} ({found}), not {expected}")
    icon = app.get_icon().to_string()
    dirs = [GLib.get_user_data_dir()] + list(GLib.get_system_data_dirs())
    sizes = {os.path.basename(os.path.dirname(os.path.dirname(p)))
             for d in dirs for p in glob.glob(os.path.join(d, "icons", "hicolor", "*", "apps", icon + ".png"))}
    if not SIZES <= sizes:
        fail(f"icon {icon}: hicolor has {sorted(sizes)}, want {sorted(SIZES)}")
    print(f"menu entry: {app.get_filename()} starts {found}; icon {icon} in {len(sizes)} sizes")

    bus = Gio.bus_get_sync(Gio.BusType.SESSION, None)
    wait_for("the StatusNotifierWatcher on the session bus", lambda: dbus_call(
        bus, "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus", "NameHasOwner",
        GLib.Variant("(s)", (WATCHER,)), "(b)")[0])
    before = registered_items(bus)
    if not app.launch([], None):
        fail("launching the entry failed")

    def new_tray():
        for item in registered_items(bus) - before:
            pid = pid_of(bus, item)
            try:
                if os.path.realpath(f"/proc/{pid}/exe") == expected:
                    return item, pid
            except OSError:
                pass
        return None

    item, pid = wait_for("the launched tray to register its icon", new_tray)
    print(f"menu entry: launched; the tray (PID {pid}, {expected}) registered {item}")
    os.kill(pid, signal.SIGTERM)
    wait_for(f"PID {pid} to end", lambda: gone(pid))


if __name__ == "__main__":
    main()
