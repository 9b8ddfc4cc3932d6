package tray

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gpucanary/gpucanary/app/link"
	"github.com/gpucanary/gpucanary/app/present/presenttest"
	"github.com/gpucanary/gpucanary/monitor"
	"github.com/gpucanary/gpucanary/monitor/engine"
)

// engine is the engine the tray runs beside, for what a test sets or reads
// in it that the tray does not use (its Policy).
func (h *harness) engine() *engine.Monitor {
	h.t.Helper()
	m, ok := h.tr.d.Monitor.(*engine.Monitor)
	if !ok {
		h.t.Fatalf("the tray runs beside a %T, not an *engine.Monitor", h.tr.d.Monitor)
	}
	return m
}

// fakeEngine is the tray's Engine with no engine behind it: a fixed state,
// no events, and the notification controls it is asked to set, recorded.
type fakeEngine struct {
	mu      sync.Mutex
	state   monitor.State
	events  chan monitor.Event
	paused  time.Time
	snoozed map[string]time.Time
	watched []int // the PIDs WatchEnd was asked about
	quieted []int // the PIDs QuietJob was asked about
}

func newFakeEngine(s monitor.State) *fakeEngine {
	return &fakeEngine{state: s, events: make(chan monitor.Event), snoozed: map[string]time.Time{}}
}

func (f *fakeEngine) State() monitor.State        { return f.state }
func (f *fakeEngine) History(int) []monitor.Event { return nil }
func (f *fakeEngine) Subscribe() (<-chan monitor.Event, func()) {
	return f.events, func() {}
}
func (f *fakeEngine) Add(string) error    { return nil }
func (f *fakeEngine) Forget(string) error { return nil }
func (f *fakeEngine) ReadJournals() error { return nil }
func (f *fakeEngine) WatchEnd(pid int, _ time.Time) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.watched = append(f.watched, pid)
	return nil
}
func (f *fakeEngine) QuietJob(pid int, _ time.Time) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.quieted = append(f.quieted, pid)
	return nil
}
func (f *fakeEngine) Snooze(env string, until time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.snoozed[env] = until
}
func (f *fakeEngine) Snoozed(env string, now time.Time) time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	if u := f.snoozed[env]; u.After(now) {
		return u
	}
	return time.Time{}
}
func (f *fakeEngine) Pause(until time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.paused = until
}
func (f *fakeEngine) Paused(now time.Time) time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.paused.After(now) {
		return f.paused
	}
	return time.Time{}
}

// TestTrayOverAFakeEngine: the tray needs no running engine, only its
// Engine: the menu is the fake's state, and Pause and Resume in the menu
// set the fake's pause (an hour from now, then zero).
func TestTrayOverAFakeEngine(t *testing.T) {
	f := newFakeEngine(presenttest.State())
	h := start(t, presenttest.A100, func(d *Deps) { d.Monitor = f })
	before := time.Now()
	h.click(LabelPause)
	h.sync()
	f.mu.Lock()
	paused := f.paused
	f.mu.Unlock()
	if paused.Before(before.Add(59*time.Minute)) || paused.After(time.Now().Add(61*time.Minute)) {
		t.Fatalf("Pause in the menu paused the engine until %v, want an hour from %v", paused, before)
	}
	if h.item(LabelResume).Label != LabelResume {
		t.Fatal("the fake engine's pause is not shown as Resume")
	}
	h.click(LabelResume)
	h.sync()
	if f.Paused(time.Now()) != (time.Time{}) || h.item(LabelPause).Label != LabelPause {
		t.Error("Resume in the menu did not end the fake engine's pause")
	}
	// The Processes window's "Tell me when it ends" reaches the engine.
	h.tr.FromWindows(link.FromWindows{WatchEnd: &link.WatchEnd{PID: 4242, Start: time.Now()}})
	h.sync()
	f.mu.Lock()
	watched := slices.Clone(f.watched)
	f.mu.Unlock()
	if !slices.Equal(watched, []int{4242}) {
		t.Errorf("the engine was asked to watch %v, want [4242]", watched)
	}
	// And its "Not this job".
	h.tr.FromWindows(link.FromWindows{QuietJob: &link.WatchEnd{PID: 5151, Start: time.Now()}})
	h.sync()
	f.mu.Lock()
	quieted := slices.Clone(f.quieted)
	f.mu.Unlock()
	if !slices.Equal(quieted, []int{5151}) {
		t.Errorf("the engine was asked to quiet %v, want [5151]", quieted)
	}
}

// TestTooltipListsRunningJobs: the tooltip lists the engine's running
// jobs under the status line; as their run times move on, the tooltip
// follows and the menu is not rebuilt (which would close an open one).
func TestTooltipListsRunningJobs(t *testing.T) {
	base := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	s := presenttest.State()
	busy := 87.0
	s.Jobs = []monitor.JobRun{{PID: 4242, Command: []string{"python", "/home/ada/train.py"}, Started: base.Add(-75 * time.Minute), GPUs: []int{0}, GPUPercent: &busy}}
	f := newFakeEngine(s)
	h := start(t, presenttest.A100, func(d *Deps) { d.Monitor = f })
	at := func(now time.Time) (string, int) {
		h.tr.do(func() { h.tr.now = func() time.Time { return now }; h.tr.render() })
		h.sync()
		h.host.mu.Lock()
		defer h.host.mu.Unlock()
		return h.host.tooltip, h.host.menus
	}
	tip, menus := at(base)
	if !strings.HasPrefix(tip, "GPU Canary: ") || !strings.HasSuffix(tip, "\ntrain.py · 1h15m · GPU 0 87 %") {
		t.Fatalf("tooltip = %q", tip)
	}
	tip, after := at(base.Add(time.Minute))
	if !strings.HasSuffix(tip, "\ntrain.py · 1h16m · GPU 0 87 %") {
		t.Errorf("a minute later the tooltip = %q", tip)
	}
	if after != menus {
		t.Errorf("the menu was rebuilt %d times for a tooltip's change", after-menus)
	}
}

// TestReportJobAsked: a notification's "Report" and the History
// window's ask the tray to write the job's report into a new folder
// under home, say where, and open it; a failure is said instead.
func TestReportJobAsked(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	var mu sync.Mutex
	var asked []int
	var dirs, opened []string
	fail := false
	h := start(t, presenttest.A100, func(d *Deps) {
		d.Monitor = newFakeEngine(presenttest.State())
		d.ExportJob = func(_ context.Context, dir string, pid int) error {
			mu.Lock()
			defer mu.Unlock()
			asked, dirs = append(asked, pid), append(dirs, dir)
			if fail {
				return errors.New("no job with PID 7")
			}
			return nil
		}
		d.OpenFolder = func(p string) error { mu.Lock(); opened = append(opened, p); mu.Unlock(); return nil }
	})
	h.tr.do(func() { h.tr.open(link.Request{ReportJob: 4242}) })
	h.waitFor("the report written and told", func() bool {
		return slices.ContainsFunc(h.notifications(), func(n string) bool { return strings.Contains(n, "gpucanary-job-4242-") })
	})
	mu.Lock()
	if len(dirs) != 1 || filepath.Dir(dirs[0]) != home || !strings.HasPrefix(filepath.Base(dirs[0]), "gpucanary-job-4242-") {
		t.Errorf("written into %q", dirs)
	}
	fail = true
	mu.Unlock()
	h.waitFor("the folder opened", func() bool { mu.Lock(); defer mu.Unlock(); return len(opened) == 1 && opened[0] == dirs[0] })
	h.tr.FromWindows(link.FromWindows{ReportJob: 7})
	h.waitFor("the failure told", func() bool {
		return slices.ContainsFunc(h.notifications(), func(n string) bool { return strings.Contains(n, "no job with PID 7") })
	})
	mu.Lock()
	defer mu.Unlock()
	if !slices.Equal(asked, []int{4242, 7}) || len(opened) != 1 {
		t.Errorf("asked %v, opened %v", asked, opened)
	}
	h.wins.mu.Lock()
	defer h.wins.mu.Unlock()
	if n := len(h.wins.requests); n != 0 {
		t.Errorf("a report opened %d windows", n)
	}
}

// TestMenuRunningJobs: the menu lists the running GPU jobs under their
// script and GPUs (nothing that changes as they run); a job's "Tell me
// when it ends" and "Not this job" ask the engine for that PID, and a
// job asked about or quieted says so, disabled, rather than offer it
// again.
func TestMenuRunningJobs(t *testing.T) {
	base := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	s := presenttest.State()
	busy := 87.0
	s.Jobs = []monitor.JobRun{
		{PID: 4242, Command: []string{"python", "/home/ada/train.py"}, Started: base.Add(-75 * time.Minute), GPUs: []int{0}, GPUPercent: &busy},
		{PID: 5151, Command: []string{"torchrun", "--nproc-per-node", "2", "finetune.py"}, Started: base.Add(-time.Minute), GPUs: []int{1, 0}, Asked: true, Quiet: true},
	}
	f := newFakeEngine(s)
	h := start(t, presenttest.A100, func(d *Deps) { d.Monitor = f })
	_, _, items := h.host.snapshot()
	if !slices.Contains(labels(items), LabelJobs) {
		t.Fatalf("no %q in the menu: %q", LabelJobs, labels(items))
	}
	train, tune := h.item("train.py on GPU 0"), h.item("finetune.py on GPUs 0,1")
	if got := strings.Join(labels(train.Children), "|"); got != LabelTellWhenEnds+"|"+LabelQuietJob+"|"+LabelProcesses {
		t.Errorf("train.py's submenu: %q", got)
	}
	for _, it := range tune.Children[:2] {
		if !it.Disabled || it.Action != nil {
			t.Errorf("finetune.py's %q is offered although done", it.Label)
		}
	}
	if got := strings.Join(labels(tune.Children), "|"); got != LabelTellWhenEndsAsked+"|"+LabelJobQuiet+"|"+LabelProcesses {
		t.Errorf("finetune.py's submenu: %q", got)
	}
	h.click("train.py on GPU 0", LabelTellWhenEnds)
	h.click("train.py on GPU 0", LabelQuietJob)
	f.mu.Lock()
	defer f.mu.Unlock()
	if !slices.Equal(f.watched, []int{4242}) || !slices.Equal(f.quieted, []int{4242}) {
		t.Errorf("asked the engine: WatchEnd %v, QuietJob %v; want 4242 each", f.watched, f.quieted)
	}
}
