//go:build e2e

package e2e

import (
	"bytes"
	"image"
	"image/color"
	"image/png"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
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
// Then, torch overwritten again, the window's own Repair… button, clicked
// with the mouse, asks the same question and repairs it again.
func TestNotificationRepair(t *testing.T) {
	bin := desktopBin(t)
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
	cmd.Env = homeEnviron(home,
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

	// The window's own Repair… button, clicked with the mouse: real pip
	// overwrites torch once more, the open window's detail shows the
	// finding with its Repair… button, and a click on it asks the same
	// question, whose Repair reinstalls the CUDA build again.
	id := strings.Fields(win)[0]
	// The result is shown once the repair's journal says it finished (the
	// progress dialog before it has a Cancel the keys below must miss).
	waitFor(t, 30*time.Second, "the repair's journal to say it finished", func() (int, bool) {
		n := finishedJournals(home)
		return n, n == 1
	})
	time.Sleep(time.Second) // the result drawn
	// Close the result (Undo, Show log, Keep this CUDA build…, Close).
	if out, err := exec.Command("xdotool", "windowfocus", "--sync", id, "key", "--delay", "200", "Tab", "Tab", "Tab", "Tab", "space").CombinedOutput(); err != nil {
		t.Fatalf("xdotool: %v\n%s", err, out)
	}
	wheeltest.Pip(t, py, venv, "install", "--index-url", srv.URL+"/cpu", "--no-deps", "--force-reinstall", "torch==2.5.1+cpu")
	at := waitFor(t, 30*time.Second, "the window's Repair… button", func() (image.Point, bool) {
		return primaryButton(t, id)
	})
	if out, err := exec.Command("xdotool", "mousemove", "--window", id, strconv.Itoa(at.X), strconv.Itoa(at.Y), "click", "1").CombinedOutput(); err != nil {
		t.Fatalf("xdotool click: %v\n%s", err, out)
	}
	waitFor(t, 20*time.Second, "the click to ask before it repairs", func() (image.Point, bool) {
		// The dialog's own Repair is then the one button of the primary
		// colour: the window's behind it is dimmed.
		p, ok := primaryButton(t, id)
		return p, ok && p != at
	})
	time.Sleep(time.Second) // the plan made
	if out, err := exec.Command("xdotool", "windowfocus", "--sync", id, "key", "--delay", "200", "Tab", "Tab", "Tab", "space").CombinedOutput(); err != nil {
		t.Fatalf("xdotool: %v\n%s", err, out)
	}
	waitFor(t, 3*time.Minute, "the window's Repair… to reinstall the CUDA build", func() ([]string, bool) {
		got, _ := filepath.Glob(filepath.Join(venv, "lib", "python*", "site-packages", "torch-*.dist-info"))
		return got, len(got) == 1 && strings.Contains(got[0], "torch-2.5.1+cu124.dist-info")
	})
}

// finishedJournals counts the repairs whose journal (under the state
// folder in home) says they finished.
func finishedJournals(home string) int {
	files, _ := filepath.Glob(filepath.Join(home, ".local", "state", "gpucanary", "journal", "*.jsonl"))
	n := 0
	for _, f := range files {
		if b, err := os.ReadFile(f); err == nil && bytes.Contains(b, []byte(`"event":"finished"`)) {
			n++
		}
	}
	return n
}

// primary is the theme's primary colour, which fills a high-importance
// button (Repair…) and nothing else as large in the Environments window.
var primary = color.RGBA{R: 41, G: 111, B: 246, A: 255}

// primaryButton finds the one button filled with the primary colour in
// window id as drawn now, and where its centre is in the window.
func primaryButton(t *testing.T, id string) (image.Point, bool) {
	t.Helper()
	b := primaryButtons(t, id)
	if len(b) != 1 {
		return image.Point{}, false
	}
	return image.Pt((b[0].Min.X+b[0].Max.X)/2, (b[0].Min.Y+b[0].Max.Y)/2), true
}

// primaryButtons shoots window id and returns the bounds of each
// button-sized area of the primary colour in it: a person finds the
// button by sight; the test by its colour, as no accessibility tree
// tells where Fyne drew it.
func primaryButtons(t *testing.T, id string) []image.Rectangle {
	t.Helper()
	out, err := exec.Command("import", "-window", id, "png:-").Output()
	if err != nil {
		t.Logf("shooting window %s: %v", id, err)
		return nil
	}
	img, err := png.Decode(bytes.NewReader(out))
	if err != nil {
		t.Logf("reading the shot of window %s: %v", id, err)
		return nil
	}
	r := img.Bounds()
	near := func(p image.Point) bool {
		c := color.RGBAModel.Convert(img.At(p.X, p.Y)).(color.RGBA)
		d := func(a, b uint8) int { return max(int(a), int(b)) - min(int(a), int(b)) }
		return d(c.R, primary.R) <= 8 && d(c.G, primary.G) <= 8 && d(c.B, primary.B) <= 8
	}
	seen := make(map[image.Point]bool)
	var found []image.Rectangle
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			p := image.Pt(x, y)
			if seen[p] || !near(p) {
				continue
			}
			// Flood the area of that colour from p.
			box, n := image.Rectangle{Min: p, Max: p.Add(image.Pt(1, 1))}, 0
			stack := []image.Point{p}
			seen[p] = true
			for len(stack) > 0 {
				q := stack[len(stack)-1]
				stack = stack[:len(stack)-1]
				n++
				box = box.Union(image.Rectangle{Min: q, Max: q.Add(image.Pt(1, 1))})
				for _, s := range []image.Point{{1, 0}, {-1, 0}, {0, 1}, {0, -1}} {
					if o := q.Add(s); o.In(r) && !seen[o] && near(o) {
						seen[o] = true
						stack = append(stack, o)
					}
				}
			}
			if n >= 600 && box.Dx() >= 40 && box.Dy() >= 20 {
				found = append(found, box)
			}
		}
	}
	return found
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
