package chart

import (
	"image/color"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"
)

// Spark is a sparkline: one quantity over the last minutes in a small
// box, with no axes; a table cell says the current value beside it. Its
// axis runs from 0 to Top, or to the highest value when Top is 0.
type Spark struct {
	widget.BaseWidget
	Color    color.Color
	Top      float64
	From, To time.Time
	Points   []Point
	min      fyne.Size
}

// SetMinSize sets the smallest size the sparkline asks for.
func (s *Spark) SetMinSize(size fyne.Size) { s.min = size }

// NewSpark is an empty sparkline drawn in c.
func NewSpark(c color.Color) *Spark {
	s := &Spark{Color: c}
	s.ExtendBaseWidget(s)
	return s
}

// CreateRenderer implements fyne.Widget.
func (s *Spark) CreateRenderer() fyne.WidgetRenderer {
	bg := canvas.NewRectangle(theme.Color(theme.ColorNameInputBackground))
	return &sparkRenderer{s: s, bg: bg, plot: newPlot()}
}

type sparkRenderer struct {
	s    *Spark
	bg   *canvas.Rectangle
	plot *plot
	objs []fyne.CanvasObject
}

func (r *sparkRenderer) Destroy()                     {}
func (r *sparkRenderer) Objects() []fyne.CanvasObject { return r.objs }
func (r *sparkRenderer) Refresh()                     { r.Layout(r.s.Size()); canvas.Refresh(r.s) }
func (r *sparkRenderer) MinSize() fyne.Size {
	if !r.s.min.IsZero() {
		return r.s.min
	}
	return fyne.NewSize(48, theme.TextSize())
}

func (r *sparkRenderer) Layout(size fyne.Size) {
	s := r.s
	r.bg.FillColor = theme.Color(theme.ColorNameInputBackground)
	r.bg.Resize(size)
	r.objs = append(r.objs[:0], r.bg)
	top := s.Top
	if top <= 0 {
		top = Max(s.Points)
	}
	if top <= 0 {
		top = 1
	}
	if s.To.After(s.From) && size.Width > 2 && size.Height > 2 {
		r.plot.raster.Resize(size)
		r.plot.set(Downsample(s.Points, s.From, s.To, int(size.Width)), s.From, s.To, top, size.Width, s.Color, 1)
		r.objs = append(r.objs, r.plot.raster)
	}
}
