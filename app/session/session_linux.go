package session

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// ForTray reports whether the tray can run: a display (X11 or Wayland)
// for its windows and a session bus for its icon.
func ForTray(getenv Getenv) error {
	if getenv("DISPLAY") == "" && getenv("WAYLAND_DISPLAY") == "" {
		return fmt.Errorf("%w (DISPLAY and WAYLAND_DISPLAY are unset)", ErrNoDesktop)
	}
	if getenv("DISPLAY") != "" {
		if err := reachX(getenv("DISPLAY")); err != nil {
			return err
		}
	}
	return useBus(getenv)
}

// ForWindows reports whether the windows can open: an X display that
// answers (Fyne's GLFW driver speaks X11; on Wayland, through XWayland)
// and a session bus, which Fyne asks for the desktop's settings and would
// otherwise start with dbus-launch.
func ForWindows(getenv Getenv) error {
	d := getenv("DISPLAY")
	if d == "" {
		return fmt.Errorf("%w (DISPLAY is unset: the windows need an X display)", ErrNoDesktop)
	}
	if err := reachX(d); err != nil {
		return err
	}
	return useBus(getenv)
}

// useBus finds the session bus and writes its address into
// DBUS_SESSION_BUS_ADDRESS when it was found at its standard place, so
// that every D-Bus client in the process (the tray, Fyne) connects to it
// and none falls back to starting one.
func useBus(getenv Getenv) error {
	addr, err := sessionBus(getenv)
	if err != nil {
		return err
	}
	if getenv("DBUS_SESSION_BUS_ADDRESS") != addr {
		return os.Setenv("DBUS_SESSION_BUS_ADDRESS", addr)
	}
	return nil
}

// sessionBus is the session bus's address: DBUS_SESSION_BUS_ADDRESS, or
// the socket at $XDG_RUNTIME_DIR/bus (the D-Bus specification's default
// place, where systemd's user bus listens). "autolaunch:" is no address:
// it means "start one", which this program never does.
func sessionBus(getenv Getenv) (string, error) {
	if a := getenv("DBUS_SESSION_BUS_ADDRESS"); a != "" && a != "autolaunch:" {
		return a, nil
	}
	dir := getenv("XDG_RUNTIME_DIR")
	if dir == "" {
		dir = filepath.Join("/run/user", strconv.Itoa(os.Getuid()))
	}
	sock := filepath.Join(dir, "bus")
	if fi, err := os.Stat(sock); err == nil && fi.Mode()&os.ModeSocket != 0 {
		return "unix:path=" + sock, nil
	}
	return "", fmt.Errorf("%w (no session bus: DBUS_SESSION_BUS_ADDRESS is unset and %s is not a socket)", ErrNoDesktop, sock)
}

// reachX connects to the X server that display names (":1", "unix:1.0",
// "host:0") and hangs up: a DISPLAY left from a session that has ended
// names nothing.
func reachX(display string) error {
	host, rest, ok := strings.Cut(display, ":")
	num, _, _ := strings.Cut(rest, ".")
	n, err := strconv.Atoi(num)
	if !ok || err != nil || n < 0 {
		return fmt.Errorf("%w (DISPLAY=%q is not an X display name)", ErrNoDesktop, display)
	}
	var addrs [][2]string
	switch {
	case strings.HasPrefix(host, "/"):
		addrs = [][2]string{{"unix", display}} // a launchd socket path (macOS's XQuartz)
	case host == "" || host == "unix":
		sock := fmt.Sprintf("/tmp/.X11-unix/X%d", n)
		addrs = [][2]string{{"unix", sock}, {"unix", "@" + sock}}
	default:
		addrs = [][2]string{{"tcp", net.JoinHostPort(host, strconv.Itoa(6000+n))}}
	}
	for _, a := range addrs {
		c, err := net.DialTimeout(a[0], a[1], 2*time.Second)
		if err == nil {
			c.Close()
			return nil
		}
	}
	return fmt.Errorf("%w (no X server answers on DISPLAY=%s)", ErrNoDesktop, display)
}
