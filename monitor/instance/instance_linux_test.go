//go:build linux

package instance

import (
	"bufio"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/godbus/dbus/v5"
)

// privateBus starts a session bus of the test's own (dbus-daemon) and
// points DBUS_SESSION_BUS_ADDRESS at it.
func privateBus(t *testing.T) {
	t.Helper()
	daemon, err := exec.LookPath("dbus-daemon")
	if err != nil {
		t.Skip("dbus-daemon is not installed (make deps-test installs dbus-x11)")
	}
	cmd := exec.Command(daemon, "--session", "--nofork", "--print-address")
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	addr, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("dbus-daemon printed no address: %v", err)
	}
	t.Setenv("DBUS_SESSION_BUS_ADDRESS", strings.TrimSpace(addr))
}

// TestClaimOverTheSessionBus: the first start owns io.github.gpucanary;
// a second start is told it runs (with its PID), and the first one is
// asked to raise its window, each time; once the first one ends, the
// next start is the tray.
func TestClaimOverTheSessionBus(t *testing.T) {
	privateBus(t)
	dir := t.TempDir()
	c := startChild(t, "claim", dir)
	claimSecond(t, c, dir, true, c.cmd.Process.Pid)
	claimSecond(t, c, dir, true, c.cmd.Process.Pid)
	c.stop()
	p, err := Claim(dir)
	if err != nil {
		t.Fatalf("Claim after the first start ended: %v", err)
	}
	p.Close()
	p.Close()
}

// TestQuitOverTheSessionBus: Quit on the tray's name (testQuit).
func TestQuitOverTheSessionBus(t *testing.T) {
	privateBus(t)
	testQuit(t, func(c *child) int { return c.cmd.Process.Pid })
}

// TestClaimWithoutABus: with no session bus, a lock in the state folder
// says a tray runs (and which), though it cannot be reached: not to
// raise its window, nor to quit.
func TestClaimWithoutABus(t *testing.T) {
	t.Setenv("DBUS_SESSION_BUS_ADDRESS", "unix:path="+t.TempDir()+"/no-bus")
	dir := t.TempDir()
	c := startChild(t, "claim", dir)
	claimSecond(t, c, dir, false, c.cmd.Process.Pid)
	was, err := Quit(context.Background(), dir)
	var nq *NotQuit
	if !was || !errors.As(err, &nq) || nq.Asked || nq.PID != c.cmd.Process.Pid {
		t.Errorf("Quit without a bus: %v, %v; want true and a *NotQuit, not asked, PID %d", was, err, c.cmd.Process.Pid)
	}
	// Looking left the lock as it was: a second start is still refused.
	claimSecond(t, c, dir, false, c.cmd.Process.Pid)
	c.stop()
	if was, err := Quit(context.Background(), dir); was || err != nil {
		t.Errorf("Quit without a bus once the tray ended: %v, %v; want false, nil", was, err)
	}
	p, err := Claim(dir)
	if err != nil {
		t.Fatalf("Claim after the first start ended: %v", err)
	}
	defer p.Close()
	if _, err := os.Stat(filepath.Join(dir, trayLockName)); err != nil {
		t.Errorf("no tray lock: %v", err)
	}
}

// quitter answers Quit only once the test lets it, after it has left
// the bus: a tray that closes its connection as it quits, before its
// answer goes out.
type quitter struct{ asked, release chan struct{} }

func (q quitter) Quit() *dbus.Error {
	close(q.asked)
	<-q.release
	return nil
}

// TestQuitOfATrayThatLeavesBeforeItAnswers: the bus's "disconnected
// without replying" to Quit is the tray quitting, not a failure: Quit
// waits for the name to go and says the tray quit.
func TestQuitOfATrayThatLeavesBeforeItAnswers(t *testing.T) {
	privateBus(t)
	conn, err := dbus.ConnectSessionBus()
	if err != nil {
		t.Fatal(err)
	}
	q := quitter{asked: make(chan struct{}), release: make(chan struct{})}
	defer close(q.release)
	if err := conn.Export(q, busPath, busIface); err != nil {
		t.Fatal(err)
	}
	if reply, err := conn.RequestName(BusName, dbus.NameFlagDoNotQueue); err != nil || reply != dbus.RequestNameReplyPrimaryOwner {
		t.Fatalf("owning %s: %v %v", BusName, reply, err)
	}
	go func() {
		<-q.asked
		conn.Close() // leaves the bus, the answer never sent
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if running, err := Quit(ctx, t.TempDir()); !running || err != nil {
		t.Fatalf("Quit = %v, %v; want true, nil", running, err)
	}
}
