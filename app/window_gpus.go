package app

import (
	"fmt"
	"image/color"
	"strings"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/layout"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/gpucanary/gpucanary/app/chart"
	"github.com/gpucanary/gpucanary/app/present"
	"github.com/gpucanary/gpucanary/monitor"
	"github.com/gpucanary/gpucanary/monitor/gpu"
)

// gpusWindow shows the driver and one panel per GPU: what it is, and
// charts of its utilization, memory, temperature and power over the span
// chosen (10 minutes, an hour, or since GPU Canary started).
type gpusWindow struct {
	w    *windows
	win  fyne.Window
	head *widget.Label
	span *widget.RadioGroup
	box  *fyne.Container
	// panels are the GPUs' panels by device key, kept across refreshes
	// so the charts are redrawn, not rebuilt.
	panels map[string]*gpuPanel
	// shown is the state shown, drawn again over another span.
	shown monitor.State
}

// gpusSize is the size the window opens at: one GPU's four charts, its
// health line and its jobs' marks.
var gpusSize = fyne.NewSize(960, 560)

// minSampleGap keeps the graphs at one point per refresh tick, however
// often events make the windows re-render.
const minSampleGap = refreshEvery / 2

// The spans a GPU chart can show.
const (
	span10m   = "10 min"
	span1h    = "1 h"
	spanStart = "Since start"
	prefSpan  = "gpus.span"
)

// The charts' colours: Task Manager's and nvitop's habit of one colour
// per quantity, the same in every panel.
var (
	colorUtil  = color.NRGBA{0x30, 0x7f, 0xe0, 0xff}
	colorMem   = color.NRGBA{0xa0, 0x50, 0xd0, 0xff}
	colorTemp  = color.NRGBA{0xe0, 0x8a, 0x30, 0xff}
	colorPower = color.NRGBA{0x2a, 0xa0, 0x60, 0xff}
)

func newGPUsWindow(w *windows) *gpusWindow {
	g := &gpusWindow{w: w, win: w.newWindow("GPU Canary — GPUs", gpusSize), panels: map[string]*gpuPanel{}}
	g.head = widget.NewLabelWithStyle("", fyne.TextAlignLeading, fyne.TextStyle{Bold: true})
	g.head.Wrapping = fyne.TextWrapWord
	g.span = widget.NewRadioGroup([]string{span10m, span1h, spanStart}, func(s string) {
		w.u.app.Preferences().SetString(prefSpan, s)
		g.refresh(g.shown)
	})
	g.span.Horizontal = true
	g.span.Required = true
	g.span.Selected = w.u.app.Preferences().StringWithFallback(prefSpan, span10m)
	g.box = container.NewVBox()
	top := container.NewBorder(nil, nil, nil, container.NewHBox(widget.NewLabel("Show:"), g.span), g.head)
	g.win.SetContent(container.NewBorder(top, nil, nil, nil, container.NewVScroll(g.box)))
	return g
}

// from is where the chosen span begins.
func (g *gpusWindow) from(now time.Time) time.Time {
	switch g.span.Selected {
	case span1h:
		return now.Add(-time.Hour)
	case spanStart:
		if s := g.w.samples.Start; !s.IsZero() && now.Sub(s) > time.Minute {
			return s
		}
		return now.Add(-time.Minute)
	}
	return now.Add(-10 * time.Minute)
}

func (g *gpusWindow) refresh(s monitor.State) {
	g.shown = s
	st := s.GPU
	head := fmt.Sprintf("Driver %s · CUDA %s", orDash(st.Driver), orDash(st.CUDADriver))
	if !st.HasDriver() {
		head = "No NVIDIA driver answers on this machine"
		if st.Error != "" {
			head += ": " + st.Error
		}
	}
	if st.Simulated {
		head += " · SIMULATED (" + st.Source + ")"
	}
	g.head.SetText(head)
	now := g.w.u.now()
	from := now
	if g.span != nil {
		from = g.from(now)
	}
	var objs []fyne.CanvasObject
	seen := map[string]bool{}
	for _, d := range st.Devices {
		key := present.DeviceKey(d)
		seen[key] = true
		p := g.panels[key]
		if p == nil {
			p = newGPUPanel()
			g.panels[key] = p
		}
		p.update(d, st.Simulated, g.w.samples.GPUs[key], marksOn(s.JobMarks, d.Index), from, now)
		objs = append(objs, p.card)
	}
	for k := range g.panels {
		if !seen[k] {
			delete(g.panels, k)
		}
	}
	g.box.Objects = objs
	g.box.Refresh()
}

// marksOn are the job marks on the GPU with index i.
func marksOn(marks []monitor.JobMark, i int) []monitor.JobMark {
	var out []monitor.JobMark
	for _, m := range marks {
		if m.GPU == i {
			out = append(out, m)
		}
	}
	return out
}

// gpuPanel is one GPU: a card whose subtitle says what it is, its state
// as badges (asleep, simulated, MIG), what limits it now and its PCIe
// link, four charts with its jobs' marks, and those marks in words.
type gpuPanel struct {
	card                   *widget.Card
	about                  *widget.Label
	health                 *widget.Label
	badges                 *fyne.Container
	util, mem, temp, power *chart.Chart
	jobs                   *widget.Label
}

func newGPUPanel() *gpuPanel {
	p := &gpuPanel{
		about:  widget.NewLabel(""),
		health: widget.NewLabel(""),
		jobs:   widget.NewLabel(""),
		badges: container.NewHBox(),
		util:   chart.NewChart("Utilization", chart.Percent, colorUtil),
		mem:    chart.NewChart("Memory", chart.GiB, colorMem),
		temp:   chart.NewChart("Temperature", chart.Celsius, colorTemp),
		power:  chart.NewChart("Power", chart.Watts, colorPower),
	}
	p.about.Wrapping = fyne.TextWrapWord
	p.health.Wrapping, p.jobs.Wrapping = fyne.TextWrapWord, fyne.TextWrapWord
	p.jobs.SizeName = theme.SizeNameCaptionText
	p.jobs.Hide()
	p.util.Limit = 100
	p.mem.LimitName, p.power.LimitName = "total", "limit"
	// Room between the charts side by side, so one's value does not
	// run into the other's title.
	gap := func(c *chart.Chart) fyne.CanvasObject {
		return container.New(layout.NewCustomPaddedLayout(0, theme.Padding(), theme.Padding(), 2*theme.Padding()), c)
	}
	charts := container.New(layout.NewGridLayoutWithColumns(2), gap(p.util), gap(p.mem), gap(p.temp), gap(p.power))
	p.card = widget.NewCard("", "", container.NewVBox(container.NewBorder(nil, nil, nil, p.badges, container.NewVBox(p.about, p.health)), charts, p.jobs))
	return p
}

// update shows d, and its samples and its jobs' marks from from to now.
func (p *gpuPanel) update(d gpu.Device, simulated bool, ds *present.DeviceSamples, marks []monitor.JobMark, from, now time.Time) {
	p.card.SetTitle(fmt.Sprintf("GPU %d: %s", d.Index, d.Name))
	arch := d.Architecture
	if arch == "" {
		arch = "unknown architecture"
	}
	about := fmt.Sprintf("%s, compute capability %s", arch, orDash(d.ComputeCapability))
	if d.PCIBusID != "" {
		about += " · " + d.PCIBusID
	}
	if d.Error != "" {
		about += "\nNot read: " + d.Error
	}
	p.about.SetText(about)
	var health []string
	if l := present.LimitedBy(d); l != "" {
		health = append(health, "Limited by: "+l)
	}
	if l := present.PCIeLink(d); l != "" {
		health = append(health, l)
	}
	p.health.SetText(strings.Join(health, " · "))
	p.health.Hidden = len(health) == 0
	var badges []fyne.CanvasObject
	if d.Asleep {
		badges = append(badges, newBadge("ASLEEP", widget.HighImportance, "The GPU is in PCI runtime suspend: GPU Canary does not query it, so as not to wake it."))
	}
	if simulated {
		badges = append(badges, newBadge("SIMULATED", widget.WarningImportance, "These readings come from a scenario file (--gpu-sim), not from a driver."))
	}
	if d.MIGEnabled {
		badges = append(badges, newBadge("MIG", widget.MediumImportance, "MIG mode is on: the GPU is partitioned into instances."))
	}
	p.badges.Objects = badges
	p.badges.Refresh()

	var samples []present.GPUSample
	if ds != nil {
		samples = ds.Since(from)
	}
	series := func(f func(present.GPUSample) float32) []chart.Point {
		out := make([]chart.Point, len(samples))
		for i, s := range samples {
			out[i] = chart.Point{T: s.Time(), V: float64(f(s))}
		}
		return out
	}
	note := func(known bool) string {
		switch {
		case d.Asleep:
			return "asleep"
		case !known:
			return "not reported"
		}
		return ""
	}
	p.mem.Limit = float64(d.MemoryTotalBytes)
	p.power.Limit = 0
	if d.PowerLimitWatts != nil {
		p.power.Limit = *d.PowerLimitWatts
	}
	for _, c := range []struct {
		c     *chart.Chart
		f     func(present.GPUSample) float32
		known bool
	}{
		{p.util, func(s present.GPUSample) float32 { return s.Util }, d.UtilizationGPU != nil},
		{p.mem, func(s present.GPUSample) float32 { return s.Mem }, d.MemoryTotalBytes > 0},
		{p.temp, func(s present.GPUSample) float32 { return s.Temp }, d.TemperatureC != nil},
		{p.power, func(s present.GPUSample) float32 { return s.Power }, d.PowerWatts != nil},
	} {
		c.c.From, c.c.To, c.c.Points, c.c.Note = from, now, series(c.f), note(c.known)
		c.c.Marks = chartMarks(marks)
		c.c.Refresh()
	}
	words := present.MarkWords(marks, from, now, maxMarkWords)
	p.jobs.SetText(words)
	if words == "" {
		p.jobs.Hide()
	} else {
		p.jobs.Show()
	}
}

// maxMarkWords bounds the list of marks under the charts: the newest.
const maxMarkWords = 6

// markColor is a job mark's colour on the charts: started green, ended
// as it ended (crashed red, otherwise the text's colour), stalled amber.
func markColor(m monitor.JobMark) color.Color {
	switch {
	case m.Kind == monitor.MarkStarted:
		return theme.Color(theme.ColorNameSuccess)
	case m.Kind == monitor.MarkStalled:
		return theme.Color(theme.ColorNameWarning)
	case m.Detail == "crashed":
		return theme.Color(theme.ColorNameError)
	}
	return theme.Color(theme.ColorNameForeground)
}

func chartMarks(marks []monitor.JobMark) []chart.Mark {
	out := make([]chart.Mark, len(marks))
	for i, m := range marks {
		out[i] = chart.Mark{T: m.Time, Color: markColor(m)}
	}
	return out
}
