package app

import (
	"fmt"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/gpucanary/gpucanary/app/present/presenttest"
	"github.com/gpucanary/gpucanary/monitor"
	"github.com/gpucanary/gpucanary/monitor/config"
	"github.com/gpucanary/gpucanary/monitor/health"
)

// goldenNow is the golden windows' clock.
var goldenNow = time.Date(2026, 3, 14, 15, 9, 0, 0, time.Local)

// goldenState is a fixed state, so the windows render the same every run.
func goldenState() monitor.State { return presenttest.State() }

// goldenEvents is a fixed history, newest first, as the engine keeps it.
func goldenEvents() []monitor.Event {
	llm := "/home/ada/work/llm/.venv"
	at := func(min int) time.Time { return goldenNow.Add(-time.Duration(min) * time.Minute) }
	return []monitor.Event{
		{Time: at(3), Kind: monitor.KindJobOnCPU, Env: llm, PID: 5151,
			Message: "`python serve.py` (PID 5151) in " + llm + " has been busy on the CPU for 25s: torch is a CPU-only build, although an NVIDIA GPU is present."},
		{Time: at(42), Kind: monitor.KindFindingRaised, Env: llm,
			Finding: &health.Finding{Code: health.CodeTorchCPUBuild, Severity: health.SeverityError},
			Message: "torch 2.10.0 is a CPU-only build, but this machine has an NVIDIA A100-SXM4-40GB."},
		{Time: at(42), Kind: monitor.KindCUDAWheelReplaced, Env: llm,
			Message: "torch in " + llm + " was replaced: 2.5.1+cu121 (CUDA 12.1) → 2.10.0 (CPU only), by `uv run`."},
		{Time: at(90), Kind: monitor.KindEnvAdded, Env: "/home/ada/work/vision/.venv", Message: "Watching /home/ada/work/vision/.venv."},
	}
}

// fixedEngine answers the windows with the golden state and history.
type fixedEngine struct{}

func (fixedEngine) State() monitor.State                      { return goldenState() }
func (fixedEngine) History() []monitor.Event                  { return goldenEvents() }
func (fixedEngine) Subscribe() (<-chan monitor.Event, func()) { return nil, func() {} }
func (fixedEngine) Add(string) error                          { return nil }
func (fixedEngine) Forget(string) error                       { return nil }

// goldenWindow is one window the golden test renders: its file name and
// how to open it on a fresh ui.
type goldenWindow struct {
	name string
	open func(w *windows) fyne.Window
}

var goldenWindows = []goldenWindow{
	{"envs", func(w *windows) fyne.Window {
		w.showEnvs()
		w.envs.list.Select(1) // the broken environment, with its finding and fix
		return w.envs.win
	}},
	{"procs", func(w *windows) fyne.Window {
		w.showProcesses()
		// A click on a cell in the middle of the row stuck on the CPU
		// selects its whole row.
		row := 0
		for i, r := range w.procs.rows {
			if r.PID == 5151 {
				row = i
			}
		}
		w.procs.table.Select(widget.TableCellID{Row: row, Col: 6})
		return w.procs.win
	}},
	{"gpus", func(w *windows) fyne.Window {
		// Two minutes of samples, one per refresh: a job ramping up and
		// settling.
		now := goldenNow
		w.u.now = func() time.Time { return now }
		w.showGPUs()
		for i := 0; i <= 60; i++ {
			st := goldenState()
			d := &st.GPU.Devices[0]
			util := uint32(min(95, i*3))
			d.UtilizationGPU, d.MemoryUsedBytes = &util, uint64(min(i, 30))<<30/3
			now = goldenNow.Add(time.Duration(i) * refreshEvery)
			w.refresh(st)
		}
		return w.gpus.win
	}},
	{"history", func(w *windows) fyne.Window { w.showHistory(); return w.history.win }},
	{"settings", func(w *windows) fyne.Window { w.showSettings(); return w.settings }},
}

// TestWindowGolden renders every window from a fixed state at the size it
// opens with and at 1280×800, and compares them with testdata/*.png
// (Fyne's test renderer is deterministic; a failed run writes
// testdata/failed/*.png to look at). At its own size each window's
// content must fit: nothing may be cut off at an edge.
func TestWindowGolden(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir()) // Settings reads whether it starts at login
	for _, gw := range goldenWindows {
		for _, size := range []fyne.Size{{}, {Width: 1280, Height: 800}} {
			name := gw.name + "-default.png"
			if !size.IsZero() {
				name = fmt.Sprintf("%s-%.0fx%.0f.png", gw.name, size.Width, size.Height)
			}
			t.Run(name, func(t *testing.T) {
				a := test.NewTempApp(t)
				u := newUI(a, Deps{Engine: fixedEngine{}, Config: config.Default()})
				u.now = func() time.Time { return goldenNow }
				win := gw.open(u.wins)
				if size.IsZero() {
					size = u.wins.sizes[win]
					if need := contentMinSize(win); need.Width > size.Width || need.Height > size.Height {
						t.Errorf("%q needs %v but opens at %v: its content is cut off", win.Title(), need, size)
					}
				}
				win.Resize(size)
				// Lay out again what changed since, as the desktop driver
				// does before each frame.
				win.Content().Refresh()
				test.AssertImageMatches(t, name, win.Canvas().Capture())
			})
		}
	}
}

// contentMinSize is the smallest window that shows all of win's content.
func contentMinSize(win fyne.Window) fyne.Size {
	s := win.Content().MinSize()
	if win.Padded() {
		s = s.AddWidthHeight(2*theme.Padding(), 2*theme.Padding())
	}
	return s
}
