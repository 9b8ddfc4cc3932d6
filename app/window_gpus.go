package app

import (
	"fmt"
	"image/color"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/gpucanary/gpucanary/app/present"
	"github.com/gpucanary/gpucanary/monitor"
	"github.com/gpucanary/gpucanary/monitor/gpu"
	"github.com/gpucanary/gpucanary/monitor/human"
)

// gpusWindow shows the driver and each GPU, with a small graph of
// utilization and memory over the last minutes.
type gpusWindow struct {
	w   *windows
	win fyne.Window
	box *fyne.Container
}

// gpusSize is the size the window opens at.
var gpusSize = fyne.NewSize(720, 460)

// minSampleGap keeps the graphs at one point per refresh tick, however
// often events make the windows re-render.
const minSampleGap = refreshEvery / 2

func newGPUsWindow(w *windows) *gpusWindow {
	g := &gpusWindow{w: w, win: w.newWindow("GPU Canary — GPUs", gpusSize)}
	g.box = container.NewVBox()
	g.win.SetContent(container.NewVScroll(g.box))
	return g
}

func (g *gpusWindow) refresh(s monitor.State) {
	st := s.GPU
	var objs []fyne.CanvasObject
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
	title := widget.NewLabelWithStyle(head, fyne.TextAlignLeading, fyne.TextStyle{Bold: true})
	title.Wrapping = fyne.TextWrapWord
	objs = append(objs, title)
	for _, d := range st.Devices {
		objs = append(objs, g.card(d))
	}
	g.box.Objects = objs
	g.box.Refresh()
}

func (g *gpusWindow) card(d gpu.Device) fyne.CanvasObject {
	arch := d.Architecture
	if arch == "" {
		arch = "unknown architecture"
	}
	lines := []string{
		fmt.Sprintf("%s, compute capability %s", arch, orDash(d.ComputeCapability)),
		fmt.Sprintf("Memory: %s of %s", human.Bytes(d.MemoryUsedBytes), human.Bytes(d.MemoryTotalBytes)),
	}
	if d.Asleep {
		lines = append(lines, "Asleep (PCI runtime suspended): not queried, so as not to wake it")
	} else {
		lines = append(lines, fmt.Sprintf("Utilization: %s · temperature: %s · power: %s", pct(d.UtilizationGPU), temp(d.TemperatureC), watts(d.PowerWatts, d.PowerLimitWatts)))
	}
	if d.MIGEnabled {
		lines = append(lines, "MIG mode is on")
	}
	if d.Error != "" {
		lines = append(lines, "Not read: "+d.Error)
	}
	id := present.DeviceKey(d)
	body := container.NewVBox()
	for _, l := range lines {
		body.Add(widget.NewLabel(l))
	}
	body.Add(widget.NewLabel("Utilization (blue) and memory (orange), last minutes:"))
	body.Add(graph(g.w.samples.Util[id], g.w.samples.Mem[id]))
	return widget.NewCard(fmt.Sprintf("GPU %d: %s", d.Index, d.Name), d.PCIBusID, body)
}

// graph draws two series (0..1) as lines in a small box.
func graph(a, b []float64) fyne.CanvasObject {
	const w, h = 600, 80
	objs := []fyne.CanvasObject{}
	bg := canvas.NewRectangle(theme.Color(theme.ColorNameInputBackground))
	bg.Resize(fyne.NewSize(w, h))
	objs = append(objs, bg)
	for _, s := range []struct {
		v []float64
		c color.Color
	}{{a, color.NRGBA{0x30, 0x7f, 0xe0, 0xff}}, {b, color.NRGBA{0xe0, 0x8a, 0x30, 0xff}}} {
		for i := 1; i < len(s.v); i++ {
			x0 := float32(i-1) / present.SampleHistory * w
			x1 := float32(i) / present.SampleHistory * w
			l := canvas.NewLine(s.c)
			l.StrokeWidth = 2
			l.Position1 = fyne.NewPos(x0, h-float32(s.v[i-1])*h)
			l.Position2 = fyne.NewPos(x1, h-float32(s.v[i])*h)
			objs = append(objs, l)
		}
	}
	c := container.NewWithoutLayout(objs...)
	box := container.NewGridWrap(fyne.NewSize(w, h), c)
	return box
}

func pct(v *uint32) string {
	if v == nil {
		return "n/a"
	}
	return fmt.Sprintf("%d %%", *v)
}

func temp(v *uint32) string {
	if v == nil {
		return "n/a"
	}
	return fmt.Sprintf("%d °C", *v)
}

func watts(v, limit *float64) string {
	switch {
	case v == nil:
		return "n/a"
	case limit == nil:
		return fmt.Sprintf("%.0f W", *v)
	}
	return fmt.Sprintf("%.0f of %.0f W", *v, *limit)
}
