//go:build e2e

package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/godbus/dbus/v5"
)

// startTray starts cmd (a tray) with its output in a log, stops it with
// an interrupt (then a kill) when the test ends, and shows the log when
// the test failed. It returns the bus name of the tray item cmd
// registers.
func startTray(t *testing.T, conn *dbus.Conn, cmd *exec.Cmd) string {
	t.Helper()
	logf, _ := os.Create(filepath.Join(t.TempDir(), "gpucanary.log"))
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if cmd.ProcessState != nil {
			return // ended by the test (its Quit)
		}
		cmd.Process.Signal(os.Interrupt)
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			cmd.Process.Kill()
		}
		if t.Failed() {
			b, _ := os.ReadFile(logf.Name())
			t.Logf("gpucanary's log:\n%s", b)
		}
	})
	return waitFor(t, 20*time.Second, "the tray item to register", func() (string, bool) {
		v, err := conn.Object("org.kde.StatusNotifierWatcher", "/StatusNotifierWatcher").
			GetProperty("org.kde.StatusNotifierWatcher.RegisteredStatusNotifierItems")
		if err != nil {
			return "", false
		}
		// The item of this test's process: the last registered.
		items, _ := v.Value().([]string)
		if len(items) == 0 {
			return "", false
		}
		name, _, _ := strings.Cut(items[len(items)-1], "/")
		return name, true
	})
}
