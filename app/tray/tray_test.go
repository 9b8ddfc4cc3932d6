package tray

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gpucanary/gpucanary/app/link"
	"github.com/gpucanary/gpucanary/app/present"
	"github.com/gpucanary/gpucanary/app/present/presenttest"
	"github.com/gpucanary/gpucanary/assets"
	"github.com/gpucanary/gpucanary/monitor"
	"github.com/gpucanary/gpucanary/monitor/config"
	"github.com/gpucanary/gpucanary/monitor/monitortest"
)

// fakeHost records what the tray shows (evebuddy's fake desktop, for a
// tray with no toolkit).
type fakeHost struct {
	mu      sync.Mutex
	icon    []byte
	title   string
	tooltip string
	menu    []Item
	menus   int // how many times the menu was rebuilt
}

func (h *fakeHost) SetIcon(png []byte)     { h.mu.Lock(); h.icon = png; h.mu.Unlock() }
func (h *fakeHost) SetTooltip(text string) { h.mu.Lock(); h.tooltip = text; h.mu.Unlock() }
func (h *fakeHost) SetTitle(text string)   { h.mu.Lock(); h.title = text; h.mu.Unlock() }
func (h *fakeHost) SetMenu(items []Item)   { h.mu.Lock(); h.menu = items; h.menus++; h.mu.Unlock() }

func (h *fakeHost) snapshot() ([]byte, string, []Item) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.icon, h.tooltip, h.menu
}

// fakeWindows records what the tray asks of the windows process.
type fakeWindows struct {
	mu       sync.Mutex
	requests []link.Request
	sent     []link.ToWindows
	closed   bool
}

func (w *fakeWindows) Open(r link.Request) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.requests = append(w.requests, r)
	return nil
}
func (w *fakeWindows) Send(m link.ToWindows) { w.mu.Lock(); w.sent = append(w.sent, m); w.mu.Unlock() }
func (w *fakeWindows) Running() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.requests) > 0
}
func (w *fakeWindows) Close() { w.mu.Lock(); w.closed = true; w.mu.Unlock() }

// harness is a tray over a real engine, its loop running.
type harness struct {
	t     *testing.T
	tr    *tray
	host  *fakeHost
	wins  *fakeWindows
	paths []string
	mu    sync.Mutex
	told  []string
	notes []present.Note
	// repointed counts the tray's checks of start at login.
	repointed atomic.Int32
	copied    []string
	done      chan struct{}
}

func start(t *testing.T, scenario string, edit func(*Deps)) *harness {
	t.Helper()
	m, paths := presenttest.Engine(t, scenario)
	h := &harness{t: t, host: &fakeHost{}, wins: &fakeWindows{}, paths: paths, done: make(chan struct{})}
	d := Deps{Monitor: m, Host: h.host, Windows: h.wins,
		Notify: func(n present.Note) error {
			h.mu.Lock()
			defer h.mu.Unlock()
			h.told = append(h.told, n.Title+" | "+n.Body+" ["+string(n.Level)+"]")
			h.notes = append(h.notes, n)
			return nil
		},
		Clipboard: func(s string) error {
			h.mu.Lock()
			defer h.mu.Unlock()
			h.copied = append(h.copied, s)
			return nil
		},
		OpenFolder:       func(string) error { return nil },
		HostMissing:      func() bool { return false },
		RepointAutostart: func() (bool, error) { h.repointed.Add(1); return false, nil },
	}
	if edit != nil {
		edit(&d)
	}
	h.tr = newTray(d)
	ctx, cancel := context.WithCancel(context.Background())
	go func() { defer close(h.done); h.tr.loop(ctx) }()
	t.Cleanup(func() { cancel(); <-h.done })
	h.waitFor("the first menu", func() bool { _, _, m := h.host.snapshot(); return len(m) > 0 })
	return h
}

func (h *harness) waitFor(what string, f func() bool) {
	h.t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !f() {
		if time.Now().After(deadline) {
			h.t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// sync waits until the loop has run everything queued before it.
func (h *harness) sync() {
	h.t.Helper()
	done := make(chan struct{})
	h.tr.do(func() { close(done) })
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		h.t.Fatal("the tray's loop did not answer in 5s")
	}
}

// item finds an entry by a path of label prefixes.
func (h *harness) item(path ...string) Item {
	h.t.Helper()
	_, _, items := h.host.snapshot()
	var found Item
	for _, p := range path {
		ok := false
		for _, it := range items {
			if it.Label != "" && strings.HasPrefix(it.Label, p) {
				found, items, ok = it, it.Children, true
				break
			}
		}
		if !ok {
			h.t.Fatalf("no menu entry %q (path %q) in %q", p, path, labels(items))
		}
	}
	return found
}

func (h *harness) click(path ...string) {
	h.t.Helper()
	it := h.item(path...)
	if it.Action == nil {
		h.t.Fatalf("%q has no action", path)
	}
	it.Action()
	h.sync()
}

func labels(items []Item) []string {
	var out []string
	for _, it := range items {
		out = append(out, it.Label)
	}
	return out
}

// clipboard is what was copied, in order.
func (h *harness) clipboard() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.copied)
}

func (h *harness) notifications() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.told)
}

func TestTrayShowsVerdicts(t *testing.T) {
	monitortest.UVOnPath(t)
	h := start(t, presenttest.A100, nil)
	icon, tip, items := h.host.snapshot()
	if !bytes.Equal(icon, assets.TrayError) {
		t.Error("the icon is not the error light")
	}
	if !strings.Contains(tip, "1 GPU (simulated)") || !strings.Contains(tip, "1 env broken") {
		t.Errorf("tooltip = %q", tip)
	}
	got := strings.Join(labels(items), "\n")
	for _, want := range []string{"✓ good/.venv — torch 2.5.1+cu121 CUDA 12.1", "✗ llm/.venv — torch 2.10.0 CPU only",
		LabelProcesses, LabelEnvs, LabelGPUs, LabelHistory, LabelPause, LabelSettings, LabelQuit} {
		if !strings.Contains(got, want) {
			t.Errorf("menu lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, LabelReport) {
		t.Error("Export report… without an exporter")
	}
	// A tray host lists the item by its Title.
	if h.host.mu.Lock(); h.host.title != "GPU Canary" {
		t.Errorf("tray title = %q", h.host.title)
	}
	h.host.mu.Unlock()
	if sub := labels(h.item("✗ llm").Children); strings.Join(sub, "|") != "Copy fix command|Copy activate command|Open folder|Snooze for 1 hour" {
		t.Errorf("submenu = %v", sub)
	}
	h.click("✗ llm", "Copy fix command")
	h.click("✗ llm", "Copy activate command")
	h.waitFor("two copies", func() bool { return len(h.clipboard()) == 2 })
	if copied := h.clipboard(); !strings.Contains(copied[0], "uv pip install --python "+h.paths[1]) ||
		copied[1] != "source "+filepath.Join(h.paths[1], "bin", "activate") {
		t.Errorf("copied %q", copied)
	}
	// Snooze marks it, live, and Unsnooze takes it back.
	h.click("✗ llm", "Snooze for 1 hour")
	if !strings.HasSuffix(h.item("✗ llm").Label, "(snoozed)") || h.engine().Policy().Snoozed(h.paths[1], time.Now()).IsZero() {
		t.Error("snooze is not shown or not applied")
	}
	h.click("✗ llm", "Unsnooze")
	if strings.HasSuffix(h.item("✗ llm").Label, "(snoozed)") {
		t.Error("unsnooze is not shown")
	}
	// An unchanged state does not rebuild the menu (it would close an
	// open one).
	before := h.host.menus
	h.tr.do(h.tr.render)
	h.sync()
	if h.host.menus != before {
		t.Error("the menu was rebuilt without a change")
	}
}

// TestWindowsAreAskedFor: each window entry asks the windows process, and
// an open one receives the state and events as they come.
func TestWindowsAreAskedFor(t *testing.T) {
	h := start(t, presenttest.A100, func(d *Deps) { d.CanRepair = true })
	for _, l := range []string{LabelProcesses, LabelEnvs, LabelGPUs, LabelHistory, LabelSettings} {
		h.click(l)
	}
	if sub := labels(h.item("✓ good").Children); slices.Contains(sub, "Reinstall CUDA torch…") {
		t.Error("a healthy environment offers a reinstall")
	}
	h.click("✗ llm", "Reinstall CUDA torch…")
	want := []link.Request{{Show: link.ShowProcesses}, {Show: link.ShowEnvs}, {Show: link.ShowGPUs}, {Show: link.ShowHistory}, {Show: link.ShowSettings}, {Repair: h.paths[1]}}
	if !slices.Equal(h.wins.requests, want) {
		t.Errorf("requests %+v\nwant     %+v", h.wins.requests, want)
	}
	h.tr.do(func() {
		h.tr.onEvent(monitor.Event{Kind: monitor.KindTorchInstalled, Env: h.paths[0], Time: time.Now()})
	})
	h.sync()
	var states, events int
	h.wins.mu.Lock()
	for _, m := range h.wins.sent {
		if m.State != nil {
			states++
		}
		if m.Event != nil {
			events++
		}
	}
	h.wins.mu.Unlock()
	if states == 0 || events != 1 {
		t.Errorf("sent %d states and %d events to the open windows process", states, events)
	}
	hello := h.tr.Hello()
	if len(hello.State.Envs) != 2 || len(hello.Samples.GPUs) != 1 {
		t.Errorf("hello: %d envs, samples for %d GPUs", len(hello.State.Envs), len(hello.Samples.GPUs))
	}
	// The windows process's requests reach the engine and the clipboard.
	h.tr.FromWindows(link.FromWindows{Forget: h.paths[0]})
	h.waitFor("Remove from list", func() bool { return len(h.tr.d.Monitor.State().Envs) == 1 })
	h.tr.FromWindows(link.FromWindows{Copy: "pip check"})
	h.waitFor("the copy", func() bool { return slices.Contains(h.clipboard(), "pip check") })
}

// TestSlowDesktopKeepsTheTrayResponsive hangs the clipboard (a wl-copy
// stuck on the compositor) and the notification service, both other
// processes: they hold neither the menu nor the windows process's
// requests, and after Quit a late request from the windows process is
// dropped rather than waited on.
func TestSlowDesktopKeepsTheTrayResponsive(t *testing.T) {
	stuck := make(chan struct{})
	h := start(t, presenttest.A100, func(d *Deps) {
		d.Clipboard = func(string) error { <-stuck; return nil }
		d.Notify = func(present.Note) error { <-stuck; return nil }
	})
	// Registered after start, so it runs before the harness waits for the
	// tray to end: a failing run must not hang on the stuck clipboard.
	t.Cleanup(func() { close(stuck) })
	told := make(chan struct{})
	go func() {
		for range 2 * cap(h.tr.notes) {
			h.tr.tell(present.Note{Title: "stuck", Body: "the service does not answer"})
		}
		close(told)
	}()
	select {
	case <-told:
	case <-time.After(5 * time.Second):
		t.Fatal("a notification service that does not answer blocked the tray")
	}
	h.click("✗ llm", "Copy fix command")
	h.click(LabelGPUs) // click returns once the loop has run it
	h.tr.FromWindows(link.FromWindows{Forget: h.paths[0]})
	h.waitFor("Remove from list", func() bool { return len(h.tr.d.Monitor.State().Envs) == 1 })

	h.item(LabelQuit).Action()
	select {
	case <-h.done:
	case <-time.After(5 * time.Second):
		t.Fatal("Quit did not end the tray")
	}
	late := make(chan struct{})
	go func() {
		for range 2 * cap(h.tr.actions) {
			h.tr.FromWindows(link.FromWindows{Add: h.paths[0]})
		}
		close(late)
	}()
	select {
	case <-late:
	case <-time.After(5 * time.Second):
		t.Fatal("a request after Quit blocked the windows process's reader")
	}
}

func TestNotifications(t *testing.T) {
	h := start(t, presenttest.A100, func(d *Deps) { d.CanRepair = true })
	// Each event names its own PID, so the notifications tell which was sent.
	event := func(pid int, notify bool) monitor.Event {
		return monitor.Event{Kind: monitor.KindCUDAWheelReplaced, Env: h.paths[1], Notify: notify, Time: time.Now(),
			Message: fmt.Sprintf("torch in %s was replaced: 2.5.1+cu121 (CUDA 12.1) → 2.10.0 (CPU only), by `uv run train.py` (PID %d).", h.paths[1], pid),
			Fix:     "uv pip install --python " + h.paths[1] + " --reinstall --no-deps torch==2.10.0+cu128"}
	}
	send := func(e monitor.Event) { h.tr.do(func() { h.tr.onEvent(e) }); h.sync() }
	// Notifications are sent in order, so once the last one is there, any
	// that should not have been sent before it would be there too.
	waitPID := func(pid int) []string {
		h.waitFor(fmt.Sprintf("the notification for PID %d", pid), func() bool {
			got := h.notifications()
			return len(got) > 0 && strings.Contains(got[len(got)-1], fmt.Sprintf("PID %d", pid))
		})
		return h.notifications()
	}
	send(event(1, true))
	got := waitPID(1)
	if len(got) != 1 || !strings.HasSuffix(got[0], "by “uv run train.py” (PID 1). [error]") || !strings.Contains(got[0], "llm/.venv") {
		t.Fatalf("sent %q", got)
	}
	h.mu.Lock()
	if env := h.notes[0].Env; env != h.paths[1] {
		t.Errorf("the notification is about %q, want %q (where a click on it leads)", env, h.paths[1])
	}
	if !h.notes[0].Repair {
		t.Error("the notification does not carry the repair the menu offers")
	}
	h.mu.Unlock()
	send(event(2, false))
	h.click(LabelPause)
	send(event(3, true))
	if !h.engine().Policy().Allows(monitor.KindCUDAWheelReplaced) || h.item(LabelResume).Label != LabelResume {
		t.Error("pause is not shown as Resume")
	}
	h.click(LabelResume)
	send(event(4, true))
	if got := waitPID(4); len(got) != 2 {
		t.Errorf("sent %q: one not marked Notify or sent while paused was shown", got)
	}
}

func TestNoDriverNoEnvironment(t *testing.T) {
	h := start(t, `{"devices": []}`, nil)
	icon, tip, _ := h.host.snapshot()
	if !bytes.Equal(icon, assets.TrayNoDriver) || !strings.Contains(tip, "no NVIDIA driver") {
		t.Errorf("tooltip %q, no-driver icon %v", tip, bytes.Equal(icon, assets.TrayNoDriver))
	}
	for _, p := range h.paths {
		h.tr.d.Monitor.Forget(p)
	}
	h.waitFor("an empty list", func() bool { return len(h.tr.d.Monitor.State().Envs) == 0 })
	h.tr.do(h.tr.render)
	h.sync()
	h.click(LabelAddFirst)
	if !slices.Equal(h.wins.requests, []link.Request{{Show: link.ShowAdd}}) {
		t.Errorf("requests %+v", h.wins.requests)
	}
}

// TestNoTrayHostOpensAWindow: without a StatusNotifierWatcher the icon
// cannot appear, so the Environments window opens.
func TestNoTrayHostOpensAWindow(t *testing.T) {
	for _, missing := range []bool{true, false} {
		var said []string
		var mu sync.Mutex
		h := start(t, presenttest.A100, func(d *Deps) {
			d.HostMissing = func() bool { return missing }
			d.Say = func(line string) { mu.Lock(); said = append(said, line); mu.Unlock() }
		})
		h.sync()
		mu.Lock()
		want := []string{InTray}
		if missing {
			want = []string{NoTrayHint} // one line, no library's words
			if !slices.Equal(h.wins.requests, []link.Request{{Show: link.ShowEnvs}}) {
				t.Errorf("requests %+v", h.wins.requests)
			}
		}
		if !slices.Equal(said, want) {
			t.Errorf("host missing %v: said %q, want %q", missing, said, want)
		}
		mu.Unlock()
	}
}

// TestClipboardFailureShowsTheText: with no clipboard the command is
// shown in a notification, so it can still be read.
func TestClipboardFailureShowsTheText(t *testing.T) {
	monitortest.UVOnPath(t)
	h := start(t, presenttest.A100, func(d *Deps) {
		d.Clipboard = func(string) error { return errors.New("no clipboard: no display") }
	})
	h.click("✗ llm", "Copy fix command")
	h.waitFor("the notification", func() bool { return len(h.notifications()) > 0 })
	got := h.notifications()
	if len(got) != 1 || !strings.Contains(got[0], "uv pip install --python "+h.paths[1]) || !strings.HasSuffix(got[0], "[warning]") {
		t.Errorf("notifications %q", got)
	}
}

func TestQuitEndsTheWindowsProcess(t *testing.T) {
	h := start(t, presenttest.A100, nil)
	h.click(LabelEnvs)
	h.item(LabelQuit).Action()
	h.item(LabelQuit).Action() // a second click is harmless
	select {
	case <-h.done:
	case <-time.After(5 * time.Second):
		t.Fatal("Quit did not end the tray")
	}
	if !h.wins.closed {
		t.Error("the windows process was not closed")
	}
}

// TestExportReport writes the bundle and says where.
func TestExportReport(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	wrote := make(chan string, 1)
	h := start(t, presenttest.A100, func(d *Deps) {
		d.Export = func(_ context.Context, dir string) error { wrote <- dir; return os.MkdirAll(dir, 0o755) }
	})
	h.click(LabelReport)
	var dir string
	select {
	case dir = <-wrote:
	case <-time.After(5 * time.Second):
		t.Fatal("the report was not written")
	}
	if !strings.HasPrefix(filepath.Base(dir), "gpucanary-report-") {
		t.Errorf("report folder %s", dir)
	}
	h.waitFor("the notification", func() bool { return len(h.notifications()) == 1 })
	// It says so as a success, not as a warning.
	if got := h.notifications()[0]; !strings.Contains(got, "~/"+filepath.Base(dir)) || !strings.HasSuffix(got, "[success]") {
		t.Errorf("notification %q", got)
	}
}

// TestSettingsApplyAtOnce: a change to the settings file, from Settings…
// or an editor, reaches the engine without a restart; a broken file is
// told once and changes nothing.
func TestSettingsApplyAtOnce(t *testing.T) {
	path := filepath.Join(t.TempDir(), "gpucanary", "config.toml")
	applied := make(chan config.Config, 4)
	h := start(t, presenttest.A100, func(d *Deps) {
		d.ConfigPath = path
		d.Reconfigure = func(c config.Config) { applied <- c }
	})
	h.sync()
	c := config.Default()
	c.Roots = []string{"/data/projects"}
	if err := config.Save(path, c); err != nil {
		t.Fatal(err)
	}
	select {
	case got := <-applied:
		if !slices.Equal(got.Roots, c.Roots) {
			t.Errorf("applied roots %v", got.Roots)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the saved settings were not applied")
	}
	for i := 0; i < 2; i++ {
		if err := os.WriteFile(path, []byte("refresh = \"soon\"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		time.Sleep(3 * config.Settle)
	}
	h.waitFor("the error notification", func() bool { return len(h.notifications()) > 0 })
	time.Sleep(2 * config.Settle)
	if got := h.notifications(); len(got) != 1 || !strings.Contains(got[0], "settings file has an error") || !strings.Contains(got[0], `"soon"`) {
		t.Errorf("notifications %q, want one about the broken file", got)
	}
	select {
	case got := <-applied:
		t.Errorf("a broken file was applied: %+v", got)
	default:
	}
}

// TestTrayProcessHasNoGUIToolkit: the resident process must not link
// Fyne, whose driver redraws at 60 Hz (the idle goal depends on it).
func TestTrayProcessHasNoGUIToolkit(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Skipf("go list: %v", err)
	}
	for _, dep := range strings.Fields(string(out)) {
		if strings.HasPrefix(dep, "fyne.io/fyne/") || strings.Contains(dep, "go-gl/") {
			t.Errorf("package tray depends on %s", dep)
		}
	}
}

func TestPNGToICO(t *testing.T) {
	ico := pngToICO(assets.TrayError)
	var hdr struct {
		Reserved, Type, Count uint16
		W, H, Colours, _      uint8
		Planes, Bits          uint16
		Size, Offset          uint32
	}
	if err := binary.Read(bytes.NewReader(ico), binary.LittleEndian, &hdr); err != nil {
		t.Fatal(err)
	}
	if hdr.Type != 1 || hdr.Count != 1 || hdr.Offset != 22 || int(hdr.Size) != len(assets.TrayError) || hdr.W == 0 || hdr.Bits != 32 {
		t.Errorf("ICO header %+v", hdr)
	}
	if !bytes.Equal(ico[22:], assets.TrayError) {
		t.Error("the PNG is not embedded as it is")
	}
}

// TestMain makes the test binary a stand-in windows process when asked:
// it tells (through Copy) what its snapshot held, then goes idle.
func TestMain(m *testing.M) {
	if os.Getenv("GPUCANARY_TRAY_CHILD") == "1" {
		t := link.Start(os.Stdin, os.Stdout)
		handled := 0
		for r := range t.Requests() {
			handled++
			t.Copy(fmt.Sprintf("show=%s envs=%d samples=%d", r.Show, len(t.State().Envs), len(t.Samples().GPUs)))
			t.Idle(handled)
		}
		if t.Err() != nil {
			os.Exit(2)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestRealWindowsProcess clicks a window entry with the real link: the
// process starts from a snapshot holding the state and the GPU samples
// (taken without waiting on the busy tray loop), its clipboard request
// comes back, and it ends when idle.
func TestRealWindowsProcess(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	h := start(t, presenttest.A100, func(d *Deps) {
		d.Windows = nil
		d.WindowsCommand = func() *exec.Cmd {
			c := exec.Command(exe)
			c.Env = append(os.Environ(), "GPUCANARY_TRAY_CHILD=1")
			c.Stderr = os.Stderr
			return c
		}
	})
	begun := time.Now()
	h.click(LabelGPUs)
	h.waitFor("the windows process's answer", func() bool { return len(h.clipboard()) == 1 })
	if took := time.Since(begun); took > 2*time.Second {
		t.Errorf("the window took %v to open", took)
	}
	if got := h.clipboard()[0]; got != "show=gpus envs=2 samples=1" {
		t.Errorf("the windows process saw %q", got)
	}
	h.waitFor("the idle windows process to end", func() bool { return !h.tr.d.Windows.Running() })
}

// TestPauseIsThePolicys: the engine's policy holds the one pause. A pause
// set there (by another view of the same engine) shows in the menu as
// Resume and silences the tray; Resume in the menu ends it there.
func TestPauseIsThePolicys(t *testing.T) {
	h := start(t, presenttest.A100, nil)
	policy := h.engine().Policy()
	policy.Pause(time.Now().Add(time.Hour))
	h.tr.do(h.tr.render)
	h.sync()
	if h.item(LabelResume).Label != LabelResume {
		t.Fatal("a pause set in the policy is not shown as Resume")
	}
	h.tr.do(func() {
		h.tr.onEvent(monitor.Event{Kind: monitor.KindCUDAWheelReplaced, Env: h.paths[1], Notify: true, Time: time.Now(), Message: "while paused"})
	})
	h.click(LabelResume)
	if !policy.Paused(time.Now()).IsZero() {
		t.Error("Resume in the menu did not end the policy's pause")
	}
	h.tr.do(func() {
		h.tr.onEvent(monitor.Event{Kind: monitor.KindCUDAWheelReplaced, Env: h.paths[1], Notify: true, Time: time.Now(), Message: "after resume"})
	})
	h.waitFor("the notification after resume", func() bool { return len(h.notifications()) > 0 })
	if got := h.notifications(); len(got) != 1 || !strings.Contains(got[0], "after resume") {
		t.Errorf("notifications = %q, want only the one after resume", got)
	}
}
