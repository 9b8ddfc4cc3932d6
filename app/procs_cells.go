package app

import (
	"image/color"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/layout"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/gpucanary/gpucanary/app/chart"
	"github.com/gpucanary/gpucanary/app/present"
	"github.com/gpucanary/gpucanary/monitor"
	"github.com/gpucanary/gpucanary/monitor/human"
)

// How the processes table draws its cells: most are text; GPU memory and
// CPU % carry a sparkline of the last minutes beside the value, as nvitop
// does; the verdict is a coloured badge whose tip gives the reason; and
// the row of a job stuck on the CPU is tinted, so it stands out in a long
// list. A column added to procColumns is text unless sparkColumn or the
// verdict's case below says otherwise.

// procCell is the parts of one table cell.
type procCell struct {
	bg    *canvas.Rectangle
	label *widget.Label
	spark *chart.Spark
	sbox  *fyne.Container // the sparkline with its margins
	text  *fyne.Container // the label and sbox
	badge *badge
}

// sparkColumn is the quantity a column's sparkline draws, or nil.
func sparkColumn(col string) func(present.ProcSample) float32 {
	switch col {
	case "GPU memory":
		return func(s present.ProcSample) float32 { return s.Mem }
	case "CPU %":
		return func(s present.ProcSample) float32 { return s.CPU }
	}
	return nil
}

// newProcCell is a cell template; p.cells finds its parts again.
func (p *procsWindow) newProcCell() fyne.CanvasObject {
	c := &procCell{bg: canvas.NewRectangle(color.Transparent), label: widget.NewLabel("cell"), spark: chart.NewSpark(colorMem),
		badge: newBadge("", widget.MediumImportance, "")}
	c.spark.SetMinSize(fyne.NewSize(64, theme.TextSize()))
	c.label.Truncation = fyne.TextTruncateEllipsis
	pad := theme.Padding()
	c.sbox = container.New(layout.NewCustomPaddedLayout(2*pad, 2*pad, 0, pad), c.spark)
	c.text = container.NewBorder(nil, nil, nil, c.sbox, c.label)
	box := container.NewStack(c.bg, c.text,
		container.New(layout.NewCustomPaddedLayout(0, 0, pad, 0), c.badge))
	c.sbox.Hide()
	c.badge.Hide()
	p.cells[box] = c
	return box
}

// tintCPU is the background of a job stuck on the CPU's row.
func tintCPU() color.Color {
	r, g, b, _ := theme.Color(theme.ColorNameError).RGBA()
	return color.NRGBA{uint8(r >> 8), uint8(g >> 8), uint8(b >> 8), 0x70}
}

// updateProcCell shows row r's column col in o.
func (p *procsWindow) updateProcCell(id widget.TableCellID, o fyne.CanvasObject) {
	c := p.cells[o.(*fyne.Container)]
	if c == nil || id.Row >= len(p.rows) {
		return
	}
	r := p.rows[id.Row]
	// The chosen process's whole row is marked, not one cell; a job
	// stuck on the CPU is tinted.
	c.bg.FillColor = color.Transparent
	switch {
	case id.Row == p.chosen:
		c.bg.FillColor = theme.Color(theme.ColorNameSelection)
	case r.JobOnCPU:
		c.bg.FillColor = tintCPU()
	}
	c.bg.Refresh()
	col := procColumns[id.Col]
	if col == "Verdict" {
		c.label.Hide()
		c.sbox.Hide()
		c.badge.set(verdictBadge(r), verdictImportance(string(r.Verdict)), r.Reason)
		c.badge.Show()
		return
	}
	c.badge.Hide()
	c.label.Show()
	c.label.Text = cell(r, id.Col, p.w.u.now())
	if col == "Environment" {
		// A path keeps its end ("…/vision/.venv"): that is what tells
		// two environments apart.
		c.label.Text = leftFit(c.label.Text, p.widths[id.Col]-2*theme.InnerPadding())
	}
	c.label.Refresh()
	f := sparkColumn(col)
	samples := p.w.samples.Procs[present.ProcKey(r)]
	if f == nil || len(samples) < 2 {
		if c.sbox.Visible() {
			c.sbox.Hide()
			c.text.Refresh() // the label takes the sparkline's room
		}
		return
	}
	now := p.w.u.now()
	pts := make([]chart.Point, len(samples))
	for i, s := range samples {
		pts[i] = chart.Point{T: time.UnixMilli(s.At), V: float64(f(s))}
	}
	c.spark.Color, c.spark.Top = colorMem, float64(p.memTotal) // memory against the GPU's
	if col == "CPU %" {
		c.spark.Color, c.spark.Top = colorTemp, max(100, chart.Max(pts))
	}
	c.spark.From, c.spark.To, c.spark.Points = now.Add(-present.ProcSpan), now, pts
	if !c.sbox.Visible() {
		c.sbox.Show()
		c.text.Refresh()
	}
	c.spark.Refresh()
}

// verdictBadge is the verdict's word; a job stuck on the CPU says for
// how long.
func verdictBadge(r monitor.Process) string {
	if r.JobOnCPU && r.BusyFor > 0 {
		return string(r.Verdict) + " · " + human.Duration(r.BusyFor)
	}
	return string(r.Verdict)
}

// leftFit shortens s from the left, behind "…", to room wide.
func leftFit(s string, room float32) string {
	fits := func(s string) bool { return fyne.MeasureText(s, theme.TextSize(), fyne.TextStyle{}).Width <= room }
	if fits(s) {
		return s
	}
	runes := []rune(s)
	for i := 1; i < len(runes); i++ {
		if short := "…" + string(runes[i:]); fits(short) {
			return short
		}
	}
	return "…"
}
