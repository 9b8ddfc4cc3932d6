package app

import (
	"fmt"
	"image/color"
	"sort"
	"strings"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/layout"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/gpucanary/gpucanary/app/present"
	"github.com/gpucanary/gpucanary/monitor"
	"github.com/gpucanary/gpucanary/monitor/finding"
	"github.com/gpucanary/gpucanary/monitor/gpu"
	"github.com/gpucanary/gpucanary/monitor/pyenv"
	"github.com/gpucanary/gpucanary/output/words"
)

// envsWindow lists environments with their verdicts; the detail pane shows
// packages, evidence and findings with their fix commands.
type envsWindow struct {
	w        *windows
	win      fyne.Window
	list     *widget.List
	detail   *fyne.Container
	envs     []monitor.EnvReport
	gpu      gpu.State // the GPUs the kernel chips are judged on
	selected string
	noGPU    *widget.Label
	// remove is "Remove from list", offered once an environment is selected.
	remove *widget.Button
}

// envsSize is the size the window opens at.
var envsSize = fyne.NewSize(980, 600)

func newEnvsWindow(w *windows) *envsWindow {
	e := &envsWindow{w: w, win: w.newWindow("GPU Canary — Environments", envsSize)}
	e.list = widget.NewList(func() int { return len(e.envs) },
		func() fyne.CanvasObject {
			sub := widget.NewLabel("manager")
			sub.SizeName = theme.SizeNameCaptionText
			// Labels pad themselves; the two lines of one row sit closer.
			name := widget.NewLabel("environment")
			name.Truncation = fyne.TextTruncateEllipsis // the detail has it whole
			lines := container.New(layout.NewCustomPaddedVBoxLayout(-2*theme.Padding()), name, sub)
			// The badges' column fits every word, whichever a row shows,
			// so that the names line up.
			b := newBadge(widestVerdict(), widget.MediumImportance, "")
			sizer := canvas.NewRectangle(color.Transparent)
			sizer.SetMinSize(b.MinSize())
			col := container.NewStack(sizer, b)
			return container.New(layout.NewBorderLayout(nil, nil, col, nil), lines, col)
		},
		func(i widget.ListItemID, o fyne.CanvasObject) {
			row := o.(*fyne.Container)
			box, b := row.Objects[0].(*fyne.Container), row.Objects[1].(*fyne.Container).Objects[1].(*badge)
			l, sub := box.Objects[0].(*widget.Label), box.Objects[1].(*widget.Label)
			b.set(envBadge(e.envs[i]))
			// The badge says the verdict; the tray's mark before the
			// name would say it twice.
			label := present.EnvLabel(e.envs[i])
			if _, rest, ok := strings.Cut(label, " "); ok {
				label = rest
			}
			l.Text = label
			l.Importance = verdictImportance(string(e.envs[i].Verdict))
			l.Refresh()
			sub.SetText(envDetailLine(e.envs[i], w.lastChanged()[e.envs[i].Path], w.u.now()))
		})
	e.list.OnSelected = func(i widget.ListItemID) {
		if i < len(e.envs) {
			e.selected = e.envs[i].Path
			e.remove.Enable()
			e.showDetail()
		}
	}
	e.list.OnUnselected = func(widget.ListItemID) { e.remove.Disable() }
	e.detail = container.NewVBox(widget.NewLabel("Select an environment."))
	e.noGPU = widget.NewLabel("")
	e.noGPU.Wrapping = fyne.TextWrapWord
	add := widget.NewButton("Add environment…", w.addEnvironment)
	e.remove = widget.NewButton("Remove from list", func() {
		if e.selected == "" {
			return
		}
		path := e.selected
		dialog.ShowConfirm("Remove from list", "Stop watching "+path+"?\nNothing on disk is changed.", func(ok bool) {
			if ok {
				w.removeEnvironment(path)
				e.selected = ""
				e.list.UnselectAll()
				e.remove.Disable()
			}
		}, e.win)
	})
	e.remove.Disable() // until an environment is selected
	split := container.NewHSplit(e.list, container.NewVScroll(e.detail))
	split.Offset = 0.45
	e.win.SetContent(container.NewBorder(e.noGPU, container.NewHBox(add, e.remove), nil, nil, split))
	return e
}

// selectEnv selects the environment at path, when it is listed.
func (e *envsWindow) selectEnv(path string) {
	for i, env := range e.envs {
		if env.Path == path {
			e.list.Select(i)
			return
		}
	}
}

func (e *envsWindow) refresh(s monitor.State) {
	e.envs, e.gpu = s.Envs, s.GPU
	e.noGPU.SetText(envsHeader(s))
	e.list.Refresh()
	if e.selected == "" && len(e.envs) > 0 {
		e.list.Select(0) // shows its detail through OnSelected
		return
	}
	e.showDetail()
}

// widestVerdict is the widest of the verdicts' words (words.VerdictWords),
// which sizes every badge alike.
func widestVerdict() string {
	w, word := float32(0), ""
	for _, s := range words.VerdictWords() {
		if m := fyne.MeasureText(s, theme.CaptionTextSize(), fyne.TextStyle{Bold: true}).Width; m > w || m == w && s < word {
			w, word = m, s
		}
	}
	return word
}

// envBadge is an environment's status at a glance: its verdict, coloured,
// with its first finding as the tip.
func envBadge(e monitor.EnvReport) (string, widget.Importance, string) {
	tip := "No problem found."
	if len(e.Findings) > 0 {
		tip = e.Findings[0].Message
		if n := len(e.Findings) - 1; n > 0 {
			tip += fmt.Sprintf(" (and %d more)", n)
		}
	}
	return words.VerdictWord(e.Verdict), verdictImportance(string(e.Verdict)), present.TildeHome(tip)
}

// envsHeader says plainly what a first run needs to know: that there is no
// GPU (and watching goes on), or that no environment was found.
func envsHeader(s monitor.State) string {
	if !s.Started {
		return "GPU Canary is starting… reading environments and the GPU."
	}
	var lines []string
	if !s.GPU.HasDriver() {
		lines = append(lines, "No NVIDIA driver answers on this machine. GPU Canary still watches your environments; CUDA builds cannot be checked against a GPU.")
	}
	if len(s.Envs) == 0 {
		lines = append(lines, "No Python environments were found. Use “Add environment…” to pick one.")
	}
	if len(lines) == 0 {
		return words.Summarize(s).String()
	}
	return strings.Join(lines, "\n")
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
		widget.NewLabelWithStyle(withApp(env.Path, env.App), fyne.TextAlignLeading, fyne.TextStyle{Bold: true}),
		widget.NewLabel(fmt.Sprintf("Verdict: %s · manager: %s · Python %s · %s layout", words.VerdictWord(env.Verdict), words.Manager(*env), orDash(env.Python), env.Layout)),
		widget.NewLabel("Last change: " + lastChangeText(e.w.lastChanged()[env.Path], e.w.u.now())),
		e.guardToggle(env),
		widget.NewLabelWithStyle("torch and its companions", fyne.TextAlignLeading, fyne.TextStyle{Bold: true}),
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
	objs = append(objs, kernelChips(env.CUDALibs, e.gpu)...)
	if len(env.Findings) > 0 {
		objs = append(objs, widget.NewLabelWithStyle("Findings", fyne.TextAlignLeading, fyne.TextStyle{Bold: true}))
	}
	for _, f := range env.Findings {
		msg := widget.NewLabel(fmt.Sprintf("%s (%s): %s", f.Code, f.Severity, f.Message))
		msg.Wrapping = fyne.TextWrapWord
		msg.Importance = verdictImportance(map[string]string{"error": string(monitor.VerdictError), "warning": string(monitor.VerdictWarning)}[string(f.Severity)])
		objs = append(objs, msg)
		row := container.NewHBox()
		if e.repairable(env, f) {
			path := env.Path
			repair := widget.NewButton(LabelRepairButton, func() { e.w.u.reinstall(path) })
			repair.Importance = widget.HighImportance
			row.Add(repair)
		}
		if f.Fix != "" {
			cmd := f.Fix
			row.Add(widget.NewButton("Copy fix command", func() { e.w.u.d.Clipboard(cmd) }))
			objs = append(objs, commandText(cmd))
		}
		if len(row.Objects) > 0 {
			objs = append(objs, row)
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
			objs = append(objs, evidenceItem(x, env.Path))
		}
	}
	e.detail.Objects = objs
	e.detail.Refresh()
}

// LabelRepairButton is the button beside a finding the repair fixes.
const LabelRepairButton = "Repair…"

// repairable reports whether the detail offers "Repair…" beside f: the
// repair can run here, f is an error a CUDA torch reinstall fixes, and
// nothing blocks it in env (the tray's menu offers it on the same terms).
func (e *envsWindow) repairable(env *monitor.EnvReport, f finding.Finding) bool {
	return e.w.u.d.Repair != nil && f.Severity == finding.SeverityError && finding.Repaired(f.Code) && present.NeedsReinstall(*env)
}

// envDetailLine is the second line of an environment in the list, under
// its tray label: its manager and when its packages last changed.
func envDetailLine(e monitor.EnvReport, changed, now time.Time) string {
	s := "manager: " + words.Manager(e)
	if e.Guarded {
		s += " · guarded"
	}
	if !changed.IsZero() {
		s += " · changed " + when(changed, now)
	}
	return s
}

func lastChangeText(t, now time.Time) string {
	if t.IsZero() {
		return "none seen since GPU Canary started watching"
	}
	return when(t, now) + " (see Event history…)"
}

// when is "14:05" for today, "Mon 2 Jan" otherwise.
func when(t, now time.Time) string {
	t, now = t.Local(), now.Local()
	if y, m, d := t.Date(); now.Year() == y && now.Month() == m && now.Day() == d {
		return t.Format("15:04")
	}
	return t.Format("Mon 2 Jan")
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

// evidenceItem is one piece of evidence: what the file says, readably
// (present.EvidenceSays), over the file it was read from, relative to
// the environment. A path has no spaces to wrap at, so it alone may
// break anywhere.
func evidenceItem(x pyenv.Evidence, env string) fyne.CanvasObject {
	says := widget.NewLabel(present.EvidenceSays(x.Says))
	says.Wrapping = fyne.TextWrapWord
	file := widget.NewLabel(present.EvidenceFile(x.File, env))
	file.SizeName = theme.SizeNameCaptionText
	file.Wrapping = fyne.TextWrapBreak
	return container.New(layout.NewCustomPaddedVBoxLayout(-2*theme.Padding()), says, file)
}

// withApp is an environment's path with the app whose environment it is
// beside it ("… — ComfyUI portable").
func withApp(path, app string) string {
	if app == "" {
		return path
	}
	return path + " — " + app
}
