//go:build e2e

package e2e

import (
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/godbus/dbus/v5"

	"github.com/gpucanary/gpucanary/monitor/wheeltest"
)

// TestNotificationRepair: the notification about torch overwritten with a
// CPU build carries the actions Show and Repair, as its Notify call on the
// session bus says; dunst's action on it (its default, Show) opens the
// Environments window; dunst itself invokes Repair (its context menu, whose
// dmenu scripts/e2e-desktop.sh sets to pick the first Repair), the tray
// hears dunst's ActionInvoked, and the windows process asks on the
// Environments window; its Repair (pressed from the keyboard) reinstalls
// the CUDA torch from the test's local index with the venv's own pip.
func TestNotificationRepair(t *testing.T) {
	bin := os.Getenv("GPUCANARY_BIN")
	if bin == "" || os.Getenv("DBUS_SESSION_BUS_ADDRESS") == "" || os.Getenv("DISPLAY") == "" {
		t.Fatal("run through scripts/e2e-desktop.sh: GPUCANARY_BIN, DISPLAY and a session bus are needed")
	}
	for _, tool := range []string{"xdotool", "dunstctl"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s is missing (make deps-test installs it)", tool)
		}
	}
	py := wheeltest.Python(t)
	home := t.TempDir()
	idx := wheeltest.NewIndex(t.TempDir())
	for tag, s := range map[string]wheeltest.Spec{"cpu": wheeltest.Torch("2.5.1", "cpu"), "cu124": wheeltest.Torch("2.5.1", "cu124")} {
		if err := idx.Add(tag, s); err != nil {
			t.Fatal(err)
		}
	}
	srv := httptest.NewServer(idx)
	t.Cleanup(srv.Close)
	venv := filepath.Join(home, "work", "vision", ".venv")
	wheeltest.NewVenv(t, py, venv)
	// With its CUDA runtime wheels, which the index serves beside it.
	wheeltest.Pip(t, py, venv, "install", "--index-url", srv.URL+"/cu124", "torch==2.5.1+cu124")
	sim := filepath.Join(t.TempDir(), "gpu.json")
	os.WriteFile(sim, []byte(a100), 0o644)
	cfg := filepath.Join(home, ".config", "gpucanary", "config.toml")
	os.MkdirAll(filepath.Dir(cfg), 0o755)
	if err := os.WriteFile(cfg, []byte("index_base = \""+srv.URL+"\"\nrefresh = \"500ms\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}

	conn, err := dbus.ConnectSessionBus()
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	notes := watchNotifyActions(t)
	exec.Command("dunstctl", "close-all").Run() // earlier tests' bubbles

	cmd := exec.Command(bin, "--gpu-sim", sim)
	cmd.Env = append(testEnviron(), "HOME="+home, "XDG_CONFIG_HOME="+filepath.Join(home, ".config"),
		"XDG_STATE_HOME="+filepath.Join(home, ".local", "state"), "LANG=C.UTF-8", "LC_ALL=C.UTF-8",
		"PIP_NO_CACHE_DIR=1", "PIP_CONFIG_FILE=/dev/null", "PIP_DISABLE_PIP_VERSION_CHECK=1")
	item := startTray(t, conn, cmd)
	waitFor(t, 30*time.Second, "the menu to list the venv's CUDA build", func() (string, bool) {
		for label := range layout(t, conn, item) {
			if strings.Contains(label, "vision/.venv") && strings.Contains(label, "CUDA 12.4") {
				return label, true
			}
		}
		return "", false
	})

	// Real pip overwrites torch with a CPU build.
	wheeltest.Pip(t, py, venv, "install", "--index-url", srv.URL+"/cpu", "--no-deps", "--force-reinstall", "torch==2.5.1+cpu")
	var n notifyCall
	deadline := time.After(30 * time.Second)
	for n.summary == "" {
		select {
		case c := <-notes:
			if strings.Contains(c.summary, "vision/.venv") && slices.Contains(c.actions, "repair") {
				n = c
			}
		case <-deadline:
			t.Fatal("no notification about vision/.venv with a Repair action")
		}
	}
	if want := []string{"default", "Show", "repair", "Repair"}; !slices.Equal(n.actions, want) {
		t.Errorf("actions %q, want %q", n.actions, want)
	}
	if strings.Contains(n.body, "`") || strings.Contains(n.body, "tray menu") {
		t.Errorf("body %q", n.body)
	}
	time.Sleep(500 * time.Millisecond) // dunst draws it
	shoot(t, "", "notification-actions.png")

	// dunst's action on the topmost notification is its default, Show:
	// the Environments window opens.
	if out, err := exec.Command("dunstctl", "action", "0").CombinedOutput(); err != nil {
		t.Fatalf("dunstctl action 0: %v\n%s", err, out)
	}
	waitFor(t, 20*time.Second, "Show to open the Environments window", func() (string, bool) {
		out, err := exec.Command("xdotool", "search", "--name", "GPU Canary — Environments").Output()
		return string(out), err == nil && strings.TrimSpace(string(out)) != ""
	})
	// dunst's context menu picks Repair: dunst sends ActionInvoked.
	if out, err := exec.Command("dunstctl", "context").CombinedOutput(); err != nil {
		t.Fatalf("dunstctl context: %v\n%s", err, out)
	}
	win := waitFor(t, 20*time.Second, "the Environments window with the repair's dialog", func() (string, bool) {
		out, err := exec.Command("xdotool", "search", "--name", "GPU Canary — Environments").Output()
		id := strings.TrimSpace(string(out))
		return id, err == nil && id != ""
	})
	time.Sleep(2 * time.Second) // drawn, the plan made
	shoot(t, "GPU Canary — Environments", "repair-dialog.png")
	// Tab to the dialog's Details, Cancel, then Repair, and press it.
	if out, err := exec.Command("xdotool", "windowfocus", "--sync", strings.Fields(win)[0], "key", "--delay", "200", "Tab", "Tab", "Tab", "space").CombinedOutput(); err != nil {
		t.Fatalf("xdotool: %v\n%s", err, out)
	}
	waitFor(t, 3*time.Minute, "the venv's torch to be the CUDA build again", func() ([]string, bool) {
		got, _ := filepath.Glob(filepath.Join(venv, "lib", "python*", "site-packages", "torch-*.dist-info"))
		return got, len(got) == 1 && strings.Contains(got[0], "torch-2.5.1+cu124.dist-info")
	})
	waitFor(t, 30*time.Second, "the menu to show the CUDA build", func() (string, bool) {
		for label := range layout(t, conn, item) {
			if strings.Contains(label, "vision/.venv") && strings.Contains(label, "CUDA 12.4") {
				return label, true
			}
		}
		return "", false
	})
	time.Sleep(time.Second)
	shoot(t, "GPU Canary — Environments", "repaired.png")
}

// notifyCall is one Notify call as the bus carried it.
type notifyCall struct {
	summary, body string
	actions       []string
}

// watchNotifyActions becomes a bus monitor of Notify calls and sends each
// with its actions.
func watchNotifyActions(t *testing.T) <-chan notifyCall {
	t.Helper()
	mon, err := dbus.ConnectSessionBus()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { mon.Close() })
	rule := "type='method_call',interface='org.freedesktop.Notifications',member='Notify'"
	if call := mon.BusObject().Call("org.freedesktop.DBus.Monitoring.BecomeMonitor", 0, []string{rule}, uint32(0)); call.Err != nil {
		t.Fatalf("BecomeMonitor: %v", call.Err)
	}
	msgs := make(chan *dbus.Message, 16)
	mon.Eavesdrop(msgs)
	out := make(chan notifyCall, 16)
	go func() {
		for m := range msgs {
			if len(m.Body) >= 6 {
				c := notifyCall{}
				c.summary, _ = m.Body[3].(string)
				c.body, _ = m.Body[4].(string)
				c.actions, _ = m.Body[5].([]string)
				out <- c
			}
		}
	}()
	return out
}
