package chart

import (
	"image"
	"image/color"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"
)

// Chart is a time chart of one quantity: a title with the current value
// on the right, a value axis in the chart's unit from 0, a time axis of
// wall-clock labels, and a dashed line at the limit where there is one.
// It draws only what a window shows: nothing runs between refreshes.
type Chart struct {
	widget.BaseWidget
	// Title names the quantity ("Utilization"); the unit is added.
	Title string
	Unit  Unit
	Color color.Color
	// Limit is the most the value can be (the memory total, the power
	// limit, 100 %), drawn and labelled with LimitName; 0 for none.
	Limit     float64
	LimitName string
	// From and To are the span shown; Points outside it are not drawn.
	From, To time.Time
	Points   []Point
	// Note replaces the current value when there is none to tell
	// ("asleep", "not reported").
	Note string
	// Marks are moments drawn as vertical lines across the plot in their
	// colour (a job started, ended, stalled); those outside the span are
	// not drawn.
	Marks []Mark
}

// NewChart is a chart of one quantity in unit, drawn in c.
func NewChart(title string, unit Unit, c color.Color) *Chart {
	ch := &Chart{Title: title, Unit: unit, Color: c}
	ch.ExtendBaseWidget(ch)
	return ch
}

// plotHeight is the smallest height of the plot area.
const plotHeight = 110

// CreateRenderer implements fyne.Widget.
func (c *Chart) CreateRenderer() fyne.WidgetRenderer {
	return &chartRenderer{c: c, plot: newPlot()}
}

type chartRenderer struct {
	c    *Chart
	objs []fyne.CanvasObject
	plot *plot
}

func (r *chartRenderer) Destroy()                     {}
func (r *chartRenderer) Objects() []fyne.CanvasObject { return r.objs }
func (r *chartRenderer) Refresh()                     { r.Layout(r.c.Size()); canvas.Refresh(r.c) }

// MinSize is wide enough for the title and the current value and tall
// enough to read the plot.
func (r *chartRenderer) MinSize() fyne.Size {
	ts, cs := theme.TextSize(), theme.CaptionTextSize()
	head := fyne.MeasureText(r.c.Title+" ("+r.c.Unit.Name+")", ts, fyne.TextStyle{Bold: true})
	val := fyne.MeasureText("0000.0 "+r.c.Unit.Name+" of 0000 "+r.c.Unit.Name, ts, fyne.TextStyle{Bold: true})
	return fyne.NewSize(max(head.Width+val.Width+4*theme.Padding(), 240), head.Height+theme.Padding()+plotHeight+cs*1.6)
}

// header is the value written at the chart's top right: the newest
// value, with the limit where there is one ("9 GiB of 40 GiB").
func (c *Chart) header() string {
	v, ok := Last(inSpan(c.Points, c.From, c.To))
	if !ok || c.Note != "" {
		return c.Note
	}
	if c.Limit > 0 && c.LimitName != "" {
		return c.Unit.Number(v) + " of " + c.Unit.Format(c.Limit)
	}
	return c.Unit.Format(v)
}

func (r *chartRenderer) Layout(size fyne.Size) {
	c := r.c
	fg, dim := theme.Color(theme.ColorNameForeground), theme.Color(theme.ColorNamePlaceHolder)
	grid := theme.Color(theme.ColorNameSeparator)
	ts, cs, pad := theme.TextSize(), theme.CaptionTextSize(), theme.Padding()
	objs := r.objs[:0]
	text := func(s string, size float32, c color.Color, bold bool) *canvas.Text {
		t := canvas.NewText(s, c)
		t.TextSize, t.TextStyle = size, fyne.TextStyle{Bold: bold}
		t.Resize(t.MinSize())
		objs = append(objs, t)
		return t
	}
	title := text(c.Title+" ("+c.Unit.Name+")", ts, fg, true)
	title.Move(fyne.NewPos(0, 0))
	val := text(c.header(), ts, c.Color, true)
	if c.Note != "" {
		val.Color = dim
	}
	val.Move(fyne.NewPos(size.Width-val.Size().Width, 0))

	// The plot's box: under the title, left of it the value labels, under
	// it the time labels.
	hi := Max(c.Points)
	top := c.Unit.axisTop(hi, c.Limit)
	ticks := c.Unit.ticks(top, 4)
	gutter := float32(0)
	for _, v := range ticks {
		gutter = max(gutter, fyne.MeasureText(c.Unit.Tick(v), cs, fyne.TextStyle{}).Width)
	}
	gutter += pad
	x0, y0 := gutter, title.Size().Height+pad
	w, h := size.Width-x0-1, size.Height-y0-cs*1.6
	if w < 10 || h < 10 {
		r.objs = objs
		return
	}
	bg := canvas.NewRectangle(theme.Color(theme.ColorNameInputBackground))
	bg.StrokeColor, bg.StrokeWidth = grid, 1
	bg.Move(fyne.NewPos(x0, y0))
	bg.Resize(fyne.NewSize(w, h))
	objs = append(objs, bg)
	y := func(v float64) float32 { return y0 + h - float32(v/top)*h }
	span := c.To.Sub(c.From)
	x := func(t time.Time) float32 {
		if span <= 0 {
			return x0 + w
		}
		return x0 + float32(float64(t.Sub(c.From))/float64(span))*w
	}
	for _, v := range ticks {
		if v > 0 && v < top {
			l := canvas.NewLine(grid)
			l.StrokeWidth = 1
			l.Position1, l.Position2 = fyne.NewPos(x0, y(v)), fyne.NewPos(x0+w, y(v))
			objs = append(objs, l)
		}
		t := text(c.Unit.Tick(v), cs, dim, false)
		t.Move(fyne.NewPos(x0-pad/2-t.Size().Width, min(max(y(v)-t.Size().Height/2, y0-pad), y0+h-t.Size().Height+pad)))
	}
	// Ticks by the chart's width, not the plot's: charts side by side
	// get the same times whatever their value labels' widths.
	times, step := TimeTicks(c.From, c.To, max(2, int(size.Width/90)))
	for _, at := range times {
		l := canvas.NewLine(grid)
		l.StrokeWidth = 1
		l.Position1, l.Position2 = fyne.NewPos(x(at), y0), fyne.NewPos(x(at), y0+h)
		objs = append(objs, l)
		t := text(TimeLabel(at, step), cs, dim, false)
		t.Move(fyne.NewPos(min(max(x(at)-t.Size().Width/2, x0), x0+w-t.Size().Width), y0+h))
	}
	var markLines []fyne.CanvasObject
	if c.Limit > 0 && c.Limit <= top {
		objs = dashed(objs, x0, x0+w, y(c.Limit)+1, theme.Color(theme.ColorNameError))
		if c.LimitName != "" {
			t := text(c.LimitName+" "+c.Unit.Format(c.Limit), cs, dim, false)
			t.Move(fyne.NewPos(x0+pad, y(c.Limit)+1))
		}
	}
	for _, m := range c.Marks {
		if m.T.Before(c.From) || m.T.After(c.To) {
			continue
		}
		l := canvas.NewLine(m.Color)
		l.StrokeWidth = 2
		l.Position1, l.Position2 = fyne.NewPos(x(m.T), y0), fyne.NewPos(x(m.T), y0+h)
		markLines = append(markLines, l)
	}
	r.plot.raster.Move(fyne.NewPos(x0, y0))
	r.plot.raster.Resize(fyne.NewSize(w, h))
	r.plot.set(Downsample(c.Points, c.From, c.To, int(w)), c.From, c.To, top, w, c.Color, 1.5)
	// The marks over the plot, so that the area does not hide them.
	r.objs = append(append(objs, r.plot.raster), markLines...)
}

// maxGap is the longest time between two points that a line joins: a
// longer gap is time nothing was read, and the line breaks.
func maxGap(span time.Duration) time.Duration { return max(15*time.Second, span/30) }

// plot is a series drawn as an area under a line (see area) by one
// raster kept across refreshes: a redraw paints the new samples into the
// same texture rather than make a new one every 2 seconds.
type plot struct {
	raster   *canvas.Raster
	pts      []Point
	from, to time.Time
	top      float64
	width    float32 // the raster's width in Fyne units
	color    color.Color
	line     float64 // the line's width in Fyne units
}

func newPlot() *plot {
	p := &plot{}
	p.raster = canvas.NewRaster(p.paint)
	p.raster.ScaleMode = canvas.ImageScalePixels
	return p
}

// set gives the plot what to draw, width Fyne units wide, and repaints it.
func (p *plot) set(pts []Point, from, to time.Time, top float64, width float32, c color.Color, line float64) {
	p.pts, p.from, p.to, p.top, p.width, p.color, p.line = pts, from, to, top, width, c, line
	p.raster.Refresh()
}

// paint draws the plot at the display's pixels, w by h.
func (p *plot) paint(w, h int) image.Image {
	scale := float64(w) / float64(max(1, p.width))
	return area(w, h, p.pts, p.from, p.to, p.top, maxGap(p.to.Sub(p.from)), p.color, p.line*scale)
}

// inSpan is the points from from to to.
func inSpan(pts []Point, from, to time.Time) []Point {
	var out []Point
	for _, p := range pts {
		if !p.T.Before(from) && !p.T.After(to) {
			out = append(out, p)
		}
	}
	return out
}

// dashed adds a horizontal dashed line.
func dashed(objs []fyne.CanvasObject, from, to, y float32, c color.Color) []fyne.CanvasObject {
	const dash, space = 6, 4
	for x := from; x < to; x += dash + space {
		l := canvas.NewLine(c)
		l.StrokeWidth = 1
		l.Position1, l.Position2 = fyne.NewPos(x, y), fyne.NewPos(min(x+dash, to), y)
		objs = append(objs, l)
	}
	return objs
}
