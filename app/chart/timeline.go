package chart

import (
	"image/color"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"
)

// Mark is one event on a timeline.
type Mark struct {
	T     time.Time
	Color color.Color
}

// Lane is one row of a timeline: a name and its events.
type Lane struct {
	Name  string
	Marks []Mark
}

// Timeline draws events as dots on one lane per subject (an
// environment), over a time axis, so when something broke shows at a
// glance and across environments.
type Timeline struct {
	widget.BaseWidget
	From, To time.Time
	Lanes    []Lane
}

// NewTimeline is an empty timeline.
func NewTimeline() *Timeline {
	t := &Timeline{}
	t.ExtendBaseWidget(t)
	return t
}

// CreateRenderer implements fyne.Widget.
func (t *Timeline) CreateRenderer() fyne.WidgetRenderer { return &timelineRenderer{t: t} }

type timelineRenderer struct {
	t    *Timeline
	objs []fyne.CanvasObject
}

// laneHeight is one lane's height: a caption line.
func laneHeight() float32 { return theme.CaptionTextSize() * 2.4 }

// maxLabel bounds the lane names' column, as a fraction of the width.
const maxLabel = 0.3

func (r *timelineRenderer) Destroy()                     {}
func (r *timelineRenderer) Objects() []fyne.CanvasObject { return r.objs }
func (r *timelineRenderer) Refresh()                     { r.Layout(r.t.Size()); canvas.Refresh(r.t) }

func (r *timelineRenderer) MinSize() fyne.Size {
	return fyne.NewSize(320, laneHeight()*float32(max(1, len(r.t.Lanes)))+theme.CaptionTextSize()*1.6)
}

func (r *timelineRenderer) Layout(size fyne.Size) {
	t := r.t
	cs, pad, lh := theme.CaptionTextSize(), theme.Padding(), laneHeight()
	dim, grid := theme.Color(theme.ColorNamePlaceHolder), theme.Color(theme.ColorNameSeparator)
	objs := r.objs[:0]
	text := func(s string) *canvas.Text {
		c := canvas.NewText(s, dim)
		c.TextSize = cs
		c.Resize(c.MinSize())
		objs = append(objs, c)
		return c
	}
	gutter := float32(0)
	for _, l := range t.Lanes {
		gutter = max(gutter, fyne.MeasureText(l.Name, cs, fyne.TextStyle{}).Width)
	}
	gutter = min(gutter, size.Width*maxLabel) + pad
	w := size.Width - gutter - pad
	span := t.To.Sub(t.From)
	if w < 10 || span <= 0 {
		r.objs = objs
		return
	}
	x := func(at time.Time) float32 { return gutter + float32(float64(at.Sub(t.From))/float64(span))*w }
	h := lh * float32(len(t.Lanes))
	times, step := TimeTicks(t.From, t.To, max(2, int(w/90)))
	for _, at := range times {
		l := canvas.NewLine(grid)
		l.Position1, l.Position2 = fyne.NewPos(x(at), 0), fyne.NewPos(x(at), h)
		objs = append(objs, l)
		c := text(TimeLabel(at, step))
		c.Move(fyne.NewPos(min(max(x(at)-c.Size().Width/2, gutter), size.Width-c.Size().Width), h))
	}
	dot := cs
	for i, l := range t.Lanes {
		y := lh*float32(i) + lh/2
		name := text(fitText(l.Name, gutter-pad, cs))
		name.Move(fyne.NewPos(0, y-name.Size().Height/2))
		line := canvas.NewLine(grid)
		line.StrokeWidth = 1
		line.Position1, line.Position2 = fyne.NewPos(gutter, y), fyne.NewPos(gutter+w, y)
		objs = append(objs, line)
		for _, m := range l.Marks {
			if m.T.Before(t.From) || m.T.After(t.To) {
				continue
			}
			c := canvas.NewCircle(m.Color)
			c.StrokeColor, c.StrokeWidth = theme.Color(theme.ColorNameBackground), 1
			c.Move(fyne.NewPos(x(m.T)-dot/2, y-dot/2))
			c.Resize(fyne.NewSize(dot, dot))
			objs = append(objs, c)
		}
	}
	r.objs = objs
}

// fitText shortens s from the left ("…/llm/.venv") until it fits width
// at size: the end of a path is the part that tells lanes apart.
func fitText(s string, width, size float32) string {
	r := []rune(s)
	for len(r) > 1 && fyne.MeasureText(string(r), size, fyne.TextStyle{}).Width > width {
		r = append([]rune("…"), r[2:]...)
	}
	return string(r)
}
