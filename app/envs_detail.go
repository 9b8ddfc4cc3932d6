package app

import (
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/layout"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/gpucanary/gpucanary/app/present"
	"github.com/gpucanary/gpucanary/monitor"
	"github.com/gpucanary/gpucanary/monitor/gpu"
	"github.com/gpucanary/gpucanary/monitor/pyenv"
)

// Unguarder lifts the guard, as `gpucanary unguard` does; a Guarder that
// is one lets the environments window's toggle turn the guard off.
type Unguarder interface {
	// Unguard gives back every file the guard wrote and says what it did,
	// one line a file.
	Unguard(env string) (lines []string, err error)
}

// chipImportance colours a kernel chip: green where a GPU here runs it,
// amber where one compiles its PTX, red for a GPU nothing serves, grey
// for what no GPU here loads.
var chipImportance = map[present.ChipState]widget.Importance{
	present.ChipRuns: widget.SuccessImportance, present.ChipJIT: widget.WarningImportance,
	present.ChipMissing: widget.DangerImportance, present.ChipUnused: widget.MediumImportance,
}

// kernelChips is the "CUDA kernels" section: each library's archs as
// chips, judged on this machine's GPUs (present.KernelRows).
func kernelChips(libs []pyenv.CUDALib, g gpu.State) []fyne.CanvasObject {
	rows := present.KernelRows(libs, g)
	if len(rows) == 0 {
		return nil
	}
	objs := []fyne.CanvasObject{widget.NewLabelWithStyle("CUDA kernels (green: runs on a GPU here)", fyne.TextAlignLeading, fyne.TextStyle{Bold: true})}
	for _, r := range rows {
		name := widget.NewLabel(r.Label)
		name.Wrapping = fyne.TextWrapBreak
		var chips fyne.CanvasObject
		if r.Error != "" {
			l := widget.NewLabel("could not be read: " + r.Error)
			l.Importance, l.Wrapping = widget.WarningImportance, fyne.TextWrapWord
			chips = l
		} else {
			row := container.New(layout.NewRowWrapLayoutWithCustomPadding(theme.Padding(), theme.Padding()))
			for _, c := range r.Chips {
				row.Add(newBadge(c.Text, chipImportance[c.State], c.Tip))
			}
			// In line with the labels' text, which is inset.
			chips = container.New(layout.NewCustomPaddedLayout(0, theme.Padding(), theme.InnerPadding(), theme.Padding()), row)
		}
		objs = append(objs, container.New(layout.NewCustomPaddedVBoxLayout(-2*theme.Padding()), name, chips))
	}
	return objs
}

// guarded is whether env's guard is set: what the disk says now when a
// Guarder can tell, else what the last check said.
func (e *envsWindow) guarded(env *monitor.EnvReport) bool {
	if g := e.w.u.d.Guard; g != nil {
		return g.Guarded(env.Path)
	}
	return env.Guarded
}

// guardToggle is the guard as a toggle: on asks and sets it through the
// tray's "Keep this CUDA build" flow; off asks and lifts it. Whatever is
// answered, the toggle then shows what the disk says.
func (e *envsWindow) guardToggle(env *monitor.EnvReport) fyne.CanvasObject {
	u, path := e.w.u, env.Path
	on := e.guarded(env)
	unguarder, canLift := u.d.Guard.(Unguarder)
	t := env.Torch()
	cuda := t != nil && t.Build == pyenv.BuildCUDA
	check := widget.NewCheck("Keep this CUDA build", nil)
	check.Checked = on
	var note string
	switch {
	case len(env.GuardChanged) > 0:
		// monitor/guard counts such a guard as not set.
		note = "The guard's files were changed by hand since it was set: " + strings.Join(env.GuardChanged, "; ") + "."
	case on:
		note = "Guard on: an install that would replace torch fails instead."
	case !cuda:
		note = "torch here is not a CUDA build: there is nothing to keep."
	default:
		note = "Guard off: a later install may replace this CUDA torch."
	}
	if u.d.Guard == nil || (on && !canLift) || (!on && !cuda) {
		check.Disable()
	}
	again := func() { e.showDetail() }
	check.OnChanged = func(v bool) {
		if v {
			u.askKeep(path, "", e.win, again)
			return
		}
		d := dialog.NewConfirm("Lift the guard", "Lift the guard on "+present.ShortPath(path)+"?\n\n"+
			wrap("GPU Canary gives back every file it wrote as it was, and installs may replace its CUDA torch again."), func(ok bool) {
			if ok {
				lines, err := unguarder.Unguard(path)
				if err != nil {
					dialog.ShowInformation("Not lifted", wrap(err.Error()+"."), e.win)
				} else {
					msg := "Installs in " + present.ShortPath(path) + " may replace torch again.\n"
					for _, l := range lines {
						msg += "\n" + wrap("• "+l)
					}
					dialog.ShowInformation("Guard lifted", msg, e.win)
				}
			}
			again()
		}, e.win)
		d.SetConfirmText("Lift it")
		d.SetDismissText("Keep it")
		d.Show()
	}
	sub := widget.NewLabel(note)
	sub.SizeName, sub.Wrapping = theme.SizeNameCaptionText, fyne.TextWrapWord
	return container.New(layout.NewCustomPaddedVBoxLayout(-2*theme.Padding()), check, sub)
}
