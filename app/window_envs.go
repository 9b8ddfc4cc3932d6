package app

import (
	"fmt"
	"sort"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/widget"

	"github.com/gpucanary/gpucanary/monitor"
	"github.com/gpucanary/gpucanary/monitor/pyenv"
)

// envsWindow lists environments with their verdicts; the detail pane shows
// packages, evidence and findings with their fix commands.
type envsWindow struct {
	w        *windows
	win      fyne.Window
	list     *widget.List
	detail   *fyne.Container
	envs     []monitor.EnvReport
	selected string
	noGPU    *widget.Label
}

func newEnvsWindow(w *windows) *envsWindow {
	e := &envsWindow{w: w, win: w.newWindow("GPU Canary — Environments", fyne.NewSize(980, 600))}
	e.list = widget.NewList(func() int { return len(e.envs) },
		func() fyne.CanvasObject { return widget.NewLabel("environment") },
		func(i widget.ListItemID, o fyne.CanvasObject) {
			l := o.(*widget.Label)
			l.SetText(envLabel(e.envs[i]))
			l.Importance = verdictImportance(e.envs[i].Verdict)
			l.Refresh()
		})
	e.list.OnSelected = func(i widget.ListItemID) {
		if i < len(e.envs) {
			e.selected = e.envs[i].Path
			e.showDetail()
		}
	}
	e.detail = container.NewVBox(widget.NewLabel("Select an environment."))
	e.noGPU = widget.NewLabel("")
	e.noGPU.Wrapping = fyne.TextWrapWord
	add := widget.NewButton("Add environment…", w.addEnvironment)
	remove := widget.NewButton("Remove from list", func() {
		if e.selected == "" {
			return
		}
		path := e.selected
		dialog.ShowConfirm("Remove from list", "Stop watching "+path+"?\nNothing on disk is changed.", func(ok bool) {
			if ok {
				w.removeEnvironment(path)
				e.selected = ""
			}
		}, e.win)
	})
	split := container.NewHSplit(e.list, container.NewVScroll(e.detail))
	split.Offset = 0.38
	e.win.SetContent(container.NewBorder(e.noGPU, container.NewHBox(add, remove), nil, nil, split))
	return e
}

func (e *envsWindow) refresh(s monitor.State) {
	e.envs = s.Envs
	switch {
	case !s.Started:
		e.noGPU.SetText("Reading environments…")
	case !s.GPU.HasDriver():
		e.noGPU.SetText("No NVIDIA driver answers on this machine. GPU Canary still watches your environments; CUDA builds cannot be checked against a GPU.")
	case len(s.Envs) == 0:
		e.noGPU.SetText("No Python environments were found. Use “Add environment…” to pick one.")
	default:
		e.noGPU.SetText(s.Summary())
	}
	e.list.Refresh()
	if e.selected == "" && len(e.envs) > 0 {
		e.list.Select(0) // shows its detail through OnSelected
		return
	}
	e.showDetail()
}

func (e *envsWindow) showDetail() {
	var env *monitor.EnvReport
	for i := range e.envs {
		if e.envs[i].Path == e.selected {
			env = &e.envs[i]
		}
	}
	if env == nil {
		e.detail.Objects = []fyne.CanvasObject{widget.NewLabel("Select an environment.")}
		e.detail.Refresh()
		return
	}
	objs := []fyne.CanvasObject{
		widget.NewLabelWithStyle(env.Path, fyne.TextAlignLeading, fyne.TextStyle{Bold: true}),
		widget.NewLabel(fmt.Sprintf("Verdict: %s · manager: %s · Python %s · %s layout", env.Verdict, env.Installer, orDash(env.Python), env.Layout)),
		widget.NewLabelWithStyle("Packages", fyne.TextAlignLeading, fyne.TextStyle{Bold: true}),
	}
	names := make([]string, 0, len(env.Packages))
	for n := range env.Packages {
		if !strings.HasPrefix(n, "nvidia-") {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	for _, n := range names {
		p := env.Packages[n]
		objs = append(objs, widget.NewLabel(fmt.Sprintf("  %s %s — %s%s", n, p.Version, pyenv.Describe(n, p), installedBy(p))))
	}
	if len(names) == 0 {
		objs = append(objs, widget.NewLabel("  torch is not installed"))
	}
	if len(env.Findings) > 0 {
		objs = append(objs, widget.NewLabelWithStyle("Findings", fyne.TextAlignLeading, fyne.TextStyle{Bold: true}))
	}
	for _, f := range env.Findings {
		msg := widget.NewLabel(fmt.Sprintf("%s (%s): %s", f.Code, f.Severity, f.Message))
		msg.Wrapping = fyne.TextWrapWord
		msg.Importance = verdictImportance(map[string]string{"error": monitor.VerdictError, "warning": monitor.VerdictWarning}[string(f.Severity)])
		objs = append(objs, msg)
		if f.Fix != "" {
			cmd := f.Fix
			fixLabel := widget.NewLabelWithStyle(cmd, fyne.TextAlignLeading, fyne.TextStyle{Monospace: true})
			fixLabel.Wrapping = fyne.TextWrapBreak
			copyBtn := widget.NewButton("Copy fix command", func() { e.w.u.app.Clipboard().SetContent(cmd) })
			objs = append(objs, fixLabel, container.NewHBox(copyBtn))
		}
	}
	var ev []pyenv.Evidence
	ev = append(ev, env.Evidence...)
	if t := env.Torch(); t != nil {
		ev = append(ev, t.Evidence...)
	}
	if len(ev) > 0 {
		objs = append(objs, widget.NewLabelWithStyle("Evidence (which file said what)", fyne.TextAlignLeading, fyne.TextStyle{Bold: true}))
		for _, x := range ev {
			l := widget.NewLabel(fmt.Sprintf("%s: %s", shortPath(x.File), x.Says))
			l.Wrapping = fyne.TextWrapBreak
			objs = append(objs, l)
		}
	}
	e.detail.Objects = objs
	e.detail.Refresh()
}

func installedBy(p *pyenv.Package) string {
	if p.Installer == "" {
		return ""
	}
	return " (installed by " + p.Installer + ")"
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
