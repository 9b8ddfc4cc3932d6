package app

import (
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"

	"github.com/gpucanary/gpucanary/app/present/presenttest"
	"github.com/gpucanary/gpucanary/monitor"
)

// goldenNow is the golden windows' clock.
var goldenNow = time.Date(2026, 3, 14, 15, 9, 0, 0, time.Local)

// goldenState is a fixed state, so the windows render the same every run.
func goldenState() monitor.State { return presenttest.State() }

// TestWindowGolden renders the three main windows from a fixed state and
// compares them with testdata/*.png (Fyne's test renderer is
// deterministic; a failed run writes testdata/failed/*.png to look at).
func TestWindowGolden(t *testing.T) {
	a := test.NewTempApp(t)
	u := newUI(a, Deps{})
	now := goldenNow
	u.now = func() time.Time { return now }
	w := u.wins
	w.changed = map[string]time.Time{"/home/ada/work/llm/.venv": goldenNow.Add(-42 * time.Minute)}
	s := goldenState()
	for _, tc := range []struct {
		name string
		win  func() fyne.Window
	}{
		{"envs.png", func() fyne.Window {
			e := newEnvsWindow(w)
			e.refresh(s)
			e.list.Select(1)
			return e.win
		}},
		{"procs.png", func() fyne.Window { p := newProcsWindow(w); p.refresh(s); return p.win }},
		{"gpus.png", func() fyne.Window {
			w.gpus = newGPUsWindow(w)
			// Two minutes of samples, one per refresh: a job ramping up
			// and settling.
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
	} {
		t.Run(tc.name, func(t *testing.T) {
			win := tc.win()
			win.Resize(fyne.NewSize(1280, 560))
			test.AssertImageMatches(t, tc.name, win.Canvas().Capture())
		})
	}
}
