package tray

import (
	"bufio"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/godbus/dbus/v5"
)

// privateBus starts a dbus-daemon of the test's own and returns its
// address.
func privateBus(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("dbus-daemon"); err != nil {
		t.Skip("dbus-daemon is not installed (make test installs it)")
	}
	cmd := exec.Command("dbus-daemon", "--session", "--nofork", "--nopidfile", "--print-address=1")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting dbus-daemon: %v", err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	addr, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("reading dbus-daemon's address: %v", err)
	}
	return strings.TrimSpace(addr)
}

func connect(t *testing.T, addr string) *dbus.Conn {
	t.Helper()
	conn, err := dbus.Connect(addr)
	if err != nil {
		t.Fatalf("connecting to the test bus: %v", err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

// hungNotifications serves org.freedesktop.Notifications and never
// answers Notify until released, like a notification daemon that hangs.
type hungNotifications struct{ release chan struct{} }

func (h hungNotifications) Notify(app string, id uint32, icon, title, body string, actions []string,
	hints map[string]dbus.Variant, timeout int32) (uint32, *dbus.Error) {
	<-h.release
	return 1, nil
}

func TestNotifyGivesUpOnAHungService(t *testing.T) {
	addr := privateBus(t)
	server := connect(t, addr)
	hung := hungNotifications{release: make(chan struct{})}
	t.Cleanup(func() { close(hung.release) })
	if err := server.Export(hung, "/org/freedesktop/Notifications", "org.freedesktop.Notifications"); err != nil {
		t.Fatal(err)
	}
	if reply, err := server.RequestName("org.freedesktop.Notifications", dbus.NameFlagDoNotQueue); err != nil || reply != dbus.RequestNameReplyPrimaryOwner {
		t.Fatalf("owning the Notifications name: %v %v", reply, err)
	}
	old := busTimeout
	busTimeout = 300 * time.Millisecond
	t.Cleanup(func() { busTimeout = old })

	client := connect(t, addr)
	done := make(chan error, 1)
	go func() { done <- notifyOn(client, "torch replaced", "a CPU build") }()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "sending a notification") {
			t.Errorf("notify on a hung service returned %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("notify waited for a service that does not answer")
	}
}
