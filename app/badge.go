package app

import (
	"image/color"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/driver/desktop"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/gpucanary/gpucanary/monitor"
	"github.com/gpucanary/gpucanary/monitor/procs"
)

// badge is a verdict or a state at a glance: a short word on a coloured
// pill. Its tip, shown while the pointer rests on it (Fyne has no
// tooltips of its own), says why.
type badge struct {
	widget.BaseWidget
	Text string
	Tip  string
	// Importance picks the colour, as a label's does.
	Importance widget.Importance
	tip        *widget.PopUp
}

func newBadge(text string, imp widget.Importance, tip string) *badge {
	b := &badge{Text: text, Importance: imp, Tip: tip}
	b.ExtendBaseWidget(b)
	return b
}

// set changes what the badge says, for a recycled table cell.
func (b *badge) set(text string, imp widget.Importance, tip string) {
	if b.Text == text && b.Importance == imp && b.Tip == tip {
		return
	}
	b.Text, b.Importance, b.Tip = text, imp, tip
	b.Refresh()
}

// badgeColors are a badge's fill and text by importance.
func badgeColors(imp widget.Importance) (fill, text color.Color) {
	switch imp {
	case widget.DangerImportance:
		return theme.Color(theme.ColorNameError), theme.Color(theme.ColorNameForegroundOnError)
	case widget.WarningImportance:
		return theme.Color(theme.ColorNameWarning), theme.Color(theme.ColorNameForegroundOnWarning)
	case widget.SuccessImportance:
		return theme.Color(theme.ColorNameSuccess), theme.Color(theme.ColorNameForegroundOnSuccess)
	case widget.HighImportance:
		return theme.Color(theme.ColorNamePrimary), theme.Color(theme.ColorNameForegroundOnPrimary)
	}
	return theme.Color(theme.ColorNameDisabled), theme.Color(theme.ColorNameBackground)
}

// CreateRenderer implements fyne.Widget.
func (b *badge) CreateRenderer() fyne.WidgetRenderer {
	bg := canvas.NewRectangle(color.Transparent)
	t := canvas.NewText("", color.Black)
	t.TextStyle.Bold = true
	t.Alignment = fyne.TextAlignCenter
	r := &badgeRenderer{b: b, bg: bg, text: t}
	r.Refresh()
	return r
}

type badgeRenderer struct {
	b    *badge
	bg   *canvas.Rectangle
	text *canvas.Text
}

func (r *badgeRenderer) Destroy()                     {}
func (r *badgeRenderer) Objects() []fyne.CanvasObject { return []fyne.CanvasObject{r.bg, r.text} }

func (r *badgeRenderer) MinSize() fyne.Size {
	s := fyne.MeasureText(r.b.Text, theme.CaptionTextSize(), fyne.TextStyle{Bold: true})
	return fyne.NewSize(s.Width+3*theme.Padding(), s.Height+theme.Padding())
}

func (r *badgeRenderer) Layout(size fyne.Size) {
	m := r.MinSize()
	// Centred vertically at its own height, from the left, in whatever
	// cell it sits.
	y := max(0, (size.Height-m.Height)/2)
	r.bg.Move(fyne.NewPos(0, y))
	r.bg.Resize(fyne.NewSize(min(m.Width, size.Width), m.Height))
	r.text.Move(fyne.NewPos(0, y+theme.Padding()/2))
	r.text.Resize(fyne.NewSize(min(m.Width, size.Width), m.Height-theme.Padding()))
}

func (r *badgeRenderer) Refresh() {
	fill, fg := badgeColors(r.b.Importance)
	r.bg.FillColor, r.bg.CornerRadius = fill, theme.InputRadiusSize()
	r.text.Text, r.text.Color, r.text.TextSize = r.b.Text, fg, theme.CaptionTextSize()
	r.Layout(r.b.Size())
	r.bg.Refresh()
	r.text.Refresh()
}

// MouseIn shows the tip under the pointer.
func (b *badge) MouseIn(e *desktop.MouseEvent) {
	if b.Tip == "" {
		return
	}
	c := fyne.CurrentApp().Driver().CanvasForObject(b)
	if c == nil {
		return
	}
	l := widget.NewLabel(b.Tip)
	l.Wrapping = fyne.TextWrapWord
	b.tip = widget.NewPopUp(l, c)
	w := min(fyne.MeasureText(b.Tip, theme.TextSize(), fyne.TextStyle{}).Width+4*theme.Padding(), 420)
	b.tip.Resize(fyne.NewSize(w, l.MinSize().Height))
	b.tip.Resize(fyne.NewSize(w, b.tip.MinSize().Height))
	at := e.AbsolutePosition.AddXY(0, 2*theme.Padding()+theme.TextSize())
	at.X = max(0, min(at.X, c.Size().Width-w))
	b.tip.ShowAtPosition(at)
}

// MouseMoved implements desktop.Hoverable.
func (b *badge) MouseMoved(*desktop.MouseEvent) {}

// MouseOut hides the tip.
func (b *badge) MouseOut() {
	if b.tip != nil {
		b.tip.Hide()
		b.tip = nil
	}
}

// verdictImportance colours a verdict.
func verdictImportance(v string) widget.Importance {
	switch v {
	case string(monitor.VerdictError), string(procs.VerdictCPU):
		return widget.DangerImportance
	case string(monitor.VerdictWarning), string(procs.VerdictCUDAIdle), string(procs.VerdictOrphaned):
		return widget.WarningImportance
	case string(monitor.VerdictOK), string(procs.VerdictGPU):
		return widget.SuccessImportance
	}
	return widget.MediumImportance
}
