package app

import (
	"slices"
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/driver/desktop"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"

	"github.com/gpucanary/gpucanary/app/chart"
	"github.com/gpucanary/gpucanary/app/present"
	"github.com/gpucanary/gpucanary/monitor"
	"github.com/gpucanary/gpucanary/monitor/config"
)

// goldenUI is a ui on the golden state with its ten minutes of samples.
func goldenUI(t *testing.T) *ui {
	t.Helper()
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	u := newUI(test.NewTempApp(t), Deps{Engine: fixedEngine{}, Config: config.Default()})
	u.now = func() time.Time { return goldenNow }
	goldenSamples(u.wins)
	return u
}

// TestGPUWindowSpans: each GPU gets four charts with their units and
// limits, over the span chosen; the choice is remembered.
func TestGPUWindowSpans(t *testing.T) {
	u := goldenUI(t)
	u.wins.showGPUs()
	g := u.wins.gpus
	p := g.panels["GPU-0000"]
	if p == nil {
		t.Fatalf("no panel for the A100: %v", g.panels)
	}
	if p.mem.Limit != 40<<30 || p.power.Limit != 400 || p.util.Limit != 100 || p.temp.Limit != 0 {
		t.Errorf("limits: memory %v, power %v, utilization %v, temperature %v", p.mem.Limit, p.power.Limit, p.util.Limit, p.temp.Limit)
	}
	if p.mem.Unit != chart.GiB || p.power.Unit != chart.Watts || p.temp.Unit != chart.Celsius || p.util.Unit != chart.Percent {
		t.Error("a chart has the wrong unit")
	}
	for _, tc := range []struct {
		span   string
		from   time.Time
		points int
	}{
		{span1h, goldenNow.Add(-time.Hour), 301},
		{spanStart, goldenNow.Add(-10 * time.Minute), 301},
		{span10m, goldenNow.Add(-10 * time.Minute), 301},
	} {
		g.span.SetSelected(tc.span)
		if !p.util.From.Equal(tc.from) || !p.util.To.Equal(goldenNow) || len(p.util.Points) != tc.points {
			t.Errorf("%s: from %v to %v, %d points", tc.span, p.util.From, p.util.To, len(p.util.Points))
		}
		if got := u.app.Preferences().String(prefSpan); got != tc.span {
			t.Errorf("span remembered as %q", got)
		}
	}
	badges := func() (out []string) {
		for _, o := range p.badges.Objects {
			out = append(out, o.(*badge).Text)
		}
		return out
	}
	if got := badges(); !slices.Equal(got, []string{"SIMULATED"}) {
		t.Errorf("badges %v", got)
	}
	// What limits it and its link; its jobs' marks on every chart, and
	// in words under them.
	if got, want := p.health.Text, "Limited by: power cap · PCIe Gen4 x16 (max Gen4 x16)"; got != want || p.health.Hidden {
		t.Errorf("health line %q (hidden %v), want %q", got, p.health.Hidden, want)
	}
	for _, c := range []*chart.Chart{p.util, p.mem, p.temp, p.power} {
		if len(c.Marks) != 4 {
			t.Errorf("%s: %d marks, want 4", c.Title, len(c.Marks))
		}
	}
	if !strings.Contains(p.jobs.Text, "finetune.py ended") || !strings.Contains(p.jobs.Text, "(crashed)") || !p.jobs.Visible() {
		t.Errorf("jobs line %q", p.jobs.Text)
	}
	noJobs := goldenState()
	noJobs.JobMarks = nil
	g.refresh(noJobs)
	if p.jobs.Visible() || len(p.util.Marks) != 0 {
		t.Errorf("with no marks: jobs line shown %v, %d marks", p.jobs.Visible(), len(p.util.Marks))
	}
	// An asleep GPU is marked, and its charts say why they stop.
	st := goldenState()
	d := &st.GPU.Devices[0]
	d.Asleep, d.UtilizationGPU, d.TemperatureC, d.PowerWatts = true, nil, nil, nil
	g.refresh(st)
	if got := badges(); !slices.Equal(got, []string{"ASLEEP", "SIMULATED"}) {
		t.Errorf("asleep: badges %v", got)
	}
	if p.util.Note != "asleep" || p.power.Note != "asleep" {
		t.Errorf("asleep: notes %q %q", p.util.Note, p.power.Note)
	}
	// Closed, the window is not drawn; the samples go on, and it shows
	// them when it opens again.
	u.wins.hide(g.win)
	drawn := len(p.util.Points)
	for i := 1; i <= 5; i++ {
		u.now = func() time.Time { return goldenNow.Add(time.Duration(i) * refreshEvery) }
		u.wins.refresh(goldenState())
	}
	if len(p.util.Points) != drawn {
		t.Errorf("a closed window was drawn: %d points, then %d", drawn, len(p.util.Points))
	}
	u.wins.showGPUs()
	if got := len(g.panels["GPU-0000"].util.Points); got != 301 { // ten minutes at 2 s, moved on by 5
		t.Errorf("shown again: %d points", got)
	}
}

// TestProcessSparklines: each process's GPU memory and CPU cells carry
// its last minutes; the verdict's badge tells the reason on hover.
func TestProcessSparklines(t *testing.T) {
	u := goldenUI(t)
	u.wins.showProcesses()
	p := u.wins.procs
	p.win.Resize(procsSize)
	p.win.Content().Refresh()
	var sparks, tips int
	var shown []*procCell
	find(p.win.Content(), func(o fyne.CanvasObject) bool {
		if box, ok := o.(*fyne.Container); ok && p.cells[box] != nil && box.Visible() {
			shown = append(shown, p.cells[box])
		}
		return false
	})
	for _, c := range shown {
		if c.sbox.Visible() {
			sparks++
			if len(c.spark.Points) < 100 || !c.spark.To.Equal(goldenNow) {
				t.Errorf("a sparkline of %d points to %v", len(c.spark.Points), c.spark.To)
			}
		}
		if c.badge.Visible() && strings.HasPrefix(c.badge.Text, "cpu") {
			tips++
			c.badge.MouseIn(&desktop.MouseEvent{PointEvent: fyne.PointEvent{AbsolutePosition: fyne.NewPos(900, 120)}})
			top := p.win.Canvas().Overlays().Top()
			if top == nil || find(top, func(o fyne.CanvasObject) bool {
				l, ok := o.(*widget.Label)
				return ok && strings.Contains(l.Text, "CPU-only build")
			}) == nil {
				t.Error("the verdict's tip does not give the reason")
			}
			c.badge.MouseOut()
			if p.win.Canvas().Overlays().Top() != nil {
				t.Error("the tip stays after the pointer left")
			}
		}
	}
	if sparks != 4 || tips != 1 {
		t.Errorf("%d sparklines (want 2 processes × 2), %d cpu badges", sparks, tips)
	}
}

// TestHistoryTimeline: one lane per environment, the machine's last, a
// dot per event shown; the kind filter narrows both the lanes and the
// list.
func TestHistoryTimeline(t *testing.T) {
	u := goldenUI(t)
	u.wins.showHistory()
	h := u.wins.history
	u.wins.event(monitor.Event{Time: goldenNow.Add(-time.Minute), Kind: monitor.KindGPUStateChanged, Message: "GPU changed"})
	lanes := func() (out []string) {
		for _, l := range h.timeline.Lanes {
			out = append(out, l.Name+":"+strings.Repeat("•", len(l.Marks)))
		}
		return out
	}
	llm, vision := present.ShortPath("/home/ada/work/llm/.venv"), present.ShortPath("/home/ada/work/vision/.venv")
	if got, want := lanes(), []string{llm + ":•••", vision + ":•", machineLane + ":•"}; !slices.Equal(got, want) {
		t.Errorf("lanes %q, want %q", got, want)
	}
	if !h.timeline.From.Before(goldenNow.Add(-90*time.Minute)) || h.timeline.To.Before(goldenNow) {
		t.Errorf("span %v to %v misses an event", h.timeline.From, h.timeline.To)
	}
	h.kinds.SetSelected(present.KindName(monitor.KindJobOnCPU))
	if got := lanes(); !slices.Equal(got, []string{llm + ":•"}) || len(h.shown) != 1 {
		t.Errorf("job on the CPU only: lanes %q, %d listed", got, len(h.shown))
	}
}

// TestTimelineSpansItsEvents: events of the last three minutes are spread
// over the timeline, not squeezed into the right edge of an hour.
func TestTimelineSpansItsEvents(t *testing.T) {
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	events := []monitor.Event{{Time: now.Add(-30 * time.Second), Env: "/a"}, {Time: now.Add(-3 * time.Minute), Env: "/b"}}
	from, to, lanes := timelineOf(events, now)
	if span := to.Sub(from); span > 6*time.Minute || span < minSpan {
		t.Errorf("the timeline spans %v for events of the last 3 minutes", span)
	}
	if len(lanes) != 2 {
		t.Errorf("lanes %v", lanes)
	}
	old := append(events, monitor.Event{Time: now.Add(-2 * time.Hour)})
	if from, _, _ := timelineOf(old, now); from.After(now.Add(-2 * time.Hour)) {
		t.Errorf("from %v leaves out an event of two hours ago", from)
	}
}
