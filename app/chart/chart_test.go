package chart

import (
	"image/color"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/test"
)

func TestTicks(t *testing.T) {
	for _, tc := range []struct {
		lo, hi float64
		n      int
		want   []float64
	}{
		{0, 100, 4, []float64{0, 25, 50, 75, 100}},
		{0, 40, 4, []float64{0, 10, 20, 30, 40}},
		{0, 400, 4, []float64{0, 100, 200, 300, 400}},
		{0, 80, 4, []float64{0, 20, 40, 60, 80}},
		{0, 1, 4, []float64{0, 0.25, 0.5, 0.75, 1}},
		{0, 0.3, 3, []float64{0, 0.1, 0.2, 0.3}},
		{5, 5, 4, []float64{5}},
		{0, 7, 4, []float64{0, 2, 4, 6}},
	} {
		if got := Ticks(tc.lo, tc.hi, tc.n); !slices.Equal(got, tc.want) {
			t.Errorf("Ticks(%v, %v, %d) = %v, want %v", tc.lo, tc.hi, tc.n, got, tc.want)
		}
	}
}

func TestNiceMax(t *testing.T) {
	for _, tc := range []struct{ v, want float64 }{
		{0, 1}, {-3, 1}, {0.7, 0.8}, {61, 80}, {87, 100}, {250, 300}, {251, 300}, {1234, 1500},
	} {
		if got := NiceMax(tc.v); got != tc.want {
			t.Errorf("NiceMax(%v) = %v, want %v", tc.v, got, tc.want)
		}
	}
}

func TestTimeTicks(t *testing.T) {
	at := time.Date(2026, 3, 14, 15, 7, 23, 0, time.Local)
	for _, tc := range []struct {
		span  time.Duration
		n     int
		step  time.Duration
		first string
		label string
	}{
		{10 * time.Minute, 6, 2 * time.Minute, "14:58", "14:58"},
		{time.Hour, 6, 10 * time.Minute, "14:10", "14:10"},
		{2 * time.Minute, 6, 30 * time.Second, "15:05:30", "15:05:30"},
		{3 * 24 * time.Hour, 4, 24 * time.Hour, "Thu 12 Mar", "Thu 12 Mar"},
	} {
		ticks, step := TimeTicks(at.Add(-tc.span), at, tc.n)
		if step != tc.step {
			t.Errorf("span %v: step %v, want %v", tc.span, step, tc.step)
			continue
		}
		if len(ticks) == 0 || len(ticks) > tc.n+1 {
			t.Fatalf("span %v: %d ticks", tc.span, len(ticks))
		}
		if got := TimeLabel(ticks[0], step); got != tc.label {
			t.Errorf("span %v: first tick %q, want %q", tc.span, got, tc.label)
		}
		for _, tk := range ticks {
			if tk.Before(at.Add(-tc.span)) || tk.After(at) {
				t.Errorf("span %v: tick %v outside", tc.span, tk)
			}
		}
	}
	if ticks, step := TimeTicks(at, at, 5); len(ticks) != 1 || step != 0 {
		t.Errorf("empty span: %v %v", ticks, step)
	}
}

func TestUnits(t *testing.T) {
	for _, tc := range []struct {
		u    Unit
		v    float64
		want string
	}{
		{Percent, 87, "87 %"},
		{Celsius, 61.4, "61 °C"},
		{Watts, 250.6, "251 W"},
		{Watts, 7.25, "7.2 W"},
		{GiB, 9 << 30, "9 GiB"},
		{GiB, 9.5 * (1 << 30), "9.5 GiB"},
		{GiB, 40 << 30, "40 GiB"},
		{GiB, 0.25 * (1 << 30), "0.2 GiB"},
	} {
		if got := tc.u.Format(tc.v); got != tc.want {
			t.Errorf("%s.Format(%v) = %q, want %q", tc.u.Name, tc.v, got, tc.want)
		}
	}
	// A memory axis is ticked in whole GiB of the total, not in bytes.
	var labels []string
	top := GiB.axisTop(9<<30, 40<<30)
	for _, v := range GiB.ticks(top, 4) {
		labels = append(labels, GiB.Tick(v))
	}
	if got := strings.Join(labels, " "); got != "0 10 20 30 40" {
		t.Errorf("GiB ticks for a 40 GiB card: %s", got)
	}
	// Power above its limit (a limit raised since) still fits on the axis.
	if top := Watts.axisTop(420, 400); top < 420 {
		t.Errorf("axis top %v under the highest value", top)
	}
	if top := Percent.axisTop(87, 100); top != 100 {
		t.Errorf("percent axis top %v", top)
	}
}

func pts(start time.Time, step time.Duration, vs ...float64) []Point {
	out := make([]Point, len(vs))
	for i, v := range vs {
		out[i] = Point{T: start.Add(time.Duration(i) * step), V: v}
	}
	return out
}

func TestDownsample(t *testing.T) {
	start := time.Unix(1_700_000_000, 0)
	// An hour at 2 s with one spike and a stretch nothing was read.
	var vs []float64
	for i := 0; i < 1800; i++ {
		v := 10.0
		switch {
		case i == 900:
			v = 99 // a spike of one sample
		case i >= 1200 && i < 1300:
			v = -1 // asleep
		}
		vs = append(vs, v)
	}
	in := pts(start, 2*time.Second, vs...)
	end := start.Add(time.Hour)
	out := Downsample(in, start, end, 100)
	if len(out) > 200 || len(out) < 100 {
		t.Fatalf("%d points for 100 buckets", len(out))
	}
	if Max(out) != 99 {
		t.Errorf("the spike was lost: max %v", Max(out))
	}
	if !slices.ContainsFunc(out, func(p Point) bool { return !p.Known() }) {
		t.Error("the unknown stretch was joined over")
	}
	if !slices.IsSortedFunc(out, func(a, b Point) int { return a.T.Compare(b.T) }) {
		t.Error("points out of time order")
	}
	// A span covers only its own points: the last ten minutes.
	last := Downsample(in, end.Add(-10*time.Minute), end, 1000)
	if len(last) != 300 || !last[0].T.Equal(end.Add(-10*time.Minute)) {
		t.Errorf("last 10 minutes: %d points from %v", len(last), last[0].T)
	}
	if v, ok := Last(in); !ok || v != 10 {
		t.Errorf("Last = %v %v", v, ok)
	}
	if _, ok := Last(pts(start, time.Second, -1, -1)); ok {
		t.Error("Last found a value among unknowns")
	}
}

// TestChartDraws renders a chart and checks what it drew: the title with
// the unit, the current value of the limit, the axes' labels, and a line
// broken where nothing was read.
func TestChartDraws(t *testing.T) {
	test.NewTempApp(t)
	end := time.Date(2026, 3, 14, 15, 10, 0, 0, time.Local)
	c := NewChart("Memory", GiB, color.NRGBA{R: 200, A: 255})
	c.Limit, c.LimitName = 40<<30, "total"
	c.From, c.To = end.Add(-10*time.Minute), end
	c.Points = pts(c.From, 2*time.Second, slices.Repeat([]float64{9 << 30}, 301)...)
	c.Points[150].V = -1
	c.Resize(fyne.NewSize(400, 160))
	r := test.WidgetRenderer(c)
	r.Refresh()
	var texts []string
	rasters := 0
	for _, o := range r.Objects() {
		switch o := o.(type) {
		case *canvas.Text:
			texts = append(texts, o.Text)
			if o.Position().X < 0 || o.Position().X+o.Size().Width > 400.5 {
				t.Errorf("%q drawn outside the chart at %v", o.Text, o.Position())
			}
		case *canvas.Raster:
			rasters++
		}
	}
	for _, want := range []string{"Memory (GiB)", "9 of 40 GiB", "0", "40", "15:00", "15:10", "total 40 GiB"} {
		if !slices.Contains(texts, want) {
			t.Errorf("no %q among %q", want, texts)
		}
	}
	if rasters != 1 {
		t.Errorf("%d plots", rasters)
	}
	c.Note = "asleep"
	c.Refresh()
	if !slices.ContainsFunc(test.WidgetRenderer(c).Objects(), func(o fyne.CanvasObject) bool {
		t, ok := o.(*canvas.Text)
		return ok && t.Text == "asleep"
	}) {
		t.Error("the note is not shown")
	}
	if math.IsNaN(float64(c.MinSize().Height)) || c.MinSize().Height < plotHeight {
		t.Errorf("MinSize %v", c.MinSize())
	}
}

// TestTimeline draws one lane per subject with its name, a dot per event
// in the span, and a time axis; a long name is cut from the left.
func TestTimeline(t *testing.T) {
	test.NewTempApp(t)
	end := time.Date(2026, 3, 14, 15, 10, 0, 0, time.Local)
	red := color.NRGBA{R: 255, A: 255}
	tl := NewTimeline()
	tl.From, tl.To = end.Add(-2*time.Hour), end
	tl.Lanes = []Lane{
		{Name: "~/work/vision/.venv", Marks: []Mark{{T: end.Add(-90 * time.Minute), Color: red}}},
		{Name: "~/a/very/long/path/that/does/not/fit/in/the/names/column/of/a/small/timeline/llm/.venv",
			Marks: []Mark{{T: end.Add(-42 * time.Minute), Color: red}, {T: end.Add(-3 * time.Minute), Color: red}, {T: end.Add(-3 * time.Hour), Color: red}}},
	}
	tl.Resize(fyne.NewSize(500, tl.MinSize().Height))
	test.WidgetRenderer(tl).Refresh()
	dots, names := 0, []string{}
	for _, o := range test.WidgetRenderer(tl).Objects() {
		switch o := o.(type) {
		case *canvas.Circle:
			dots++
		case *canvas.Text:
			names = append(names, o.Text)
		}
	}
	if dots != 3 {
		t.Errorf("%d dots, want 3 (one event is before the span)", dots)
	}
	if !slices.Contains(names, "~/work/vision/.venv") || !slices.ContainsFunc(names, func(s string) bool {
		return strings.HasPrefix(s, "…") && strings.HasSuffix(s, "/llm/.venv")
	}) || !slices.Contains(names, "14:00") {
		t.Errorf("texts %q", names)
	}
}

// TestArea paints one column per pixel: the highest value in the
// column's time, so a spike of one sample among thousands shows; nothing
// where the values are unknown or nothing was read for a while.
func TestArea(t *testing.T) {
	start := time.Unix(1_700_000_000, 0)
	vs := slices.Repeat([]float64{20}, 1800) // an hour at 2 s
	vs[900] = 100
	for i := 1200; i < 1300; i++ {
		vs[i] = -1
	}
	in := pts(start, 2*time.Second, vs...)
	in = append(in[:1500], in[1600:]...) // 200 s not read
	end := start.Add(time.Hour)
	cols := columns(in, start, time.Hour, 360, maxGap(time.Hour))
	if slices.Max(cols) != 100 {
		t.Errorf("the spike is lost: max %v", slices.Max(cols))
	}
	unknown := 0
	for _, v := range cols {
		if v < 0 {
			unknown++
		}
	}
	// 200 s unknown and 200 s unread: 40 columns of 10 s, give or take
	// the columns at the edges.
	if unknown < 36 || unknown > 44 {
		t.Errorf("%d empty columns, want about 40", unknown)
	}
	// Few points over many columns are joined: no holes between them.
	sparse := columns(pts(start, time.Minute, 10, 20, 30), start, 2*time.Minute, 120, 2*time.Minute)
	if slices.Contains(sparse[:119], -1) || sparse[60] != 20 || sparse[30] < 14 || sparse[30] > 16 {
		t.Errorf("sparse columns %v", sparse)
	}
	img := area(360, 100, in, start, end, 100, maxGap(time.Hour), color.NRGBA{B: 255, A: 255}, 1)
	// At the spike's column the line reaches the top; a plain column is
	// filled from its value (20 of 100) down, and empty above it.
	x := 180
	if _, _, b, a := img.At(x, 0).RGBA(); b == 0 || a == 0 {
		t.Errorf("the spike does not reach the top")
	}
	if _, _, _, a := img.At(10, 10).RGBA(); a != 0 {
		t.Errorf("painted above a value of 20")
	}
	if _, _, _, a := img.At(10, 95).RGBA(); a == 0 {
		t.Errorf("not filled under a value of 20")
	}
}

// TestChartMarks: a mark in the span is a line across the plot in its
// colour, at its time, over the plot; one outside the span is not drawn.
func TestChartMarks(t *testing.T) {
	test.NewTempApp(t)
	end := time.Date(2026, 3, 14, 15, 10, 0, 0, time.Local)
	c := NewChart("Utilization", Percent, color.NRGBA{B: 200, A: 255})
	c.From, c.To = end.Add(-10*time.Minute), end
	c.Points = pts(c.From, 2*time.Second, slices.Repeat([]float64{50}, 301)...)
	started, ended := color.NRGBA{G: 200, A: 255}, color.NRGBA{R: 200, A: 255}
	c.Marks = []Mark{{T: end.Add(-5 * time.Minute), Color: started}, {T: end.Add(-time.Hour), Color: ended}}
	c.Resize(fyne.NewSize(400, 160))
	r := test.WidgetRenderer(c)
	r.Refresh()
	objs := r.Objects()
	var lines []*canvas.Line
	raster := -1
	for i, o := range objs {
		switch o := o.(type) {
		case *canvas.Line:
			if o.StrokeColor == started || o.StrokeColor == ended {
				lines = append(lines, o)
				if raster < 0 {
					t.Error("a mark is drawn under the plot")
				}
			}
		case *canvas.Raster:
			raster = i
		}
	}
	if len(lines) != 1 || lines[0].StrokeColor != started {
		t.Fatalf("mark lines: %v", lines)
	}
	l := lines[0]
	var plot fyne.CanvasObject = objs[raster]
	mid := plot.Position().X + plot.Size().Width/2
	if l.Position1.X != l.Position2.X || math.Abs(float64(l.Position1.X-mid)) > 1 ||
		l.Position1.Y != plot.Position().Y || l.Position2.Y != plot.Position().Y+plot.Size().Height {
		t.Errorf("the mark at the span's middle is drawn from %v to %v; the plot is at %v, %v", l.Position1, l.Position2, plot.Position(), plot.Size())
	}
}
