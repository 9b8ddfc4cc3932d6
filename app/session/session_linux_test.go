package session

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fakeX listens where an X server of display :n listens (the abstract
// socket, so no file is needed) and returns that display's name.
func fakeX(t *testing.T) string {
	t.Helper()
	for n := 4700 + os.Getpid()%1000; n < 6000; n++ {
		l, err := net.Listen("unix", fmt.Sprintf("@/tmp/.X11-unix/X%d", n))
		if err != nil {
			continue
		}
		t.Cleanup(func() { l.Close() })
		go func() {
			for {
				c, err := l.Accept()
				if err != nil {
					return
				}
				c.Close()
			}
		}()
		return fmt.Sprintf(":%d", n)
	}
	t.Fatal("no free display number")
	return ""
}

// busSocket is a real unix socket at dir/bus, where the session bus's
// standard place is.
func busSocket(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	l, err := net.Listen("unix", filepath.Join(dir, "bus"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return dir
}

func env(kv map[string]string) Getenv { return func(k string) string { return kv[k] } }

func TestForTrayAndWindows(t *testing.T) {
	t.Setenv("DBUS_SESSION_BUS_ADDRESS", "") // the real one is restored after
	x, runtime, empty := fakeX(t), busSocket(t), t.TempDir()
	dead := ":5999"
	for _, tc := range []struct {
		name           string
		env            map[string]string
		tray, windows  string // "" is no error, else a part of it
		busAddressKept string // what DBUS_SESSION_BUS_ADDRESS holds after, when set
	}{
		{"nothing", map[string]string{"XDG_RUNTIME_DIR": empty}, "DISPLAY and WAYLAND_DISPLAY are unset", "DISPLAY is unset", ""},
		{"a display, no bus", map[string]string{"DISPLAY": x, "XDG_RUNTIME_DIR": empty}, "no session bus", "no session bus", ""},
		{"autolaunch is no bus", map[string]string{"DISPLAY": x, "DBUS_SESSION_BUS_ADDRESS": "autolaunch:", "XDG_RUNTIME_DIR": empty}, "no session bus", "no session bus", ""},
		{"a display and a bus", map[string]string{"DISPLAY": x, "DBUS_SESSION_BUS_ADDRESS": "unix:path=/x"}, "", "", ""},
		{"the bus at its standard place", map[string]string{"DISPLAY": x, "XDG_RUNTIME_DIR": runtime}, "", "", "unix:path=" + filepath.Join(runtime, "bus")},
		{"a display nobody answers", map[string]string{"DISPLAY": dead, "DBUS_SESSION_BUS_ADDRESS": "unix:path=/x"}, "no X server answers on DISPLAY=" + dead, "no X server answers", ""},
		{"not a display name", map[string]string{"DISPLAY": "nonsense", "DBUS_SESSION_BUS_ADDRESS": "unix:path=/x"}, "not an X display name", "not an X display name", ""},
		{"Wayland only: a tray, no windows", map[string]string{"WAYLAND_DISPLAY": "wayland-0", "DBUS_SESSION_BUS_ADDRESS": "unix:path=/x"}, "", "DISPLAY is unset", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for name, check := range map[string]func(Getenv) error{"tray": ForTray, "windows": ForWindows} {
				os.Setenv("DBUS_SESSION_BUS_ADDRESS", tc.env["DBUS_SESSION_BUS_ADDRESS"])
				want := tc.tray
				if name == "windows" {
					want = tc.windows
				}
				err := check(env(tc.env))
				switch {
				case want == "" && err != nil:
					t.Errorf("%s: %v", name, err)
				case want != "" && (err == nil || !strings.Contains(err.Error(), want) || !errors.Is(err, ErrNoDesktop)):
					t.Errorf("%s: %v, want an error saying %q", name, err, want)
				}
				if tc.busAddressKept != "" && os.Getenv("DBUS_SESSION_BUS_ADDRESS") != tc.busAddressKept {
					t.Errorf("%s: DBUS_SESSION_BUS_ADDRESS = %q, want %q", name, os.Getenv("DBUS_SESSION_BUS_ADDRESS"), tc.busAddressKept)
				}
			}
		})
	}
}
