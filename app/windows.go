package app

import (
	"fmt"
	"slices"
	"sort"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/widget"

	"github.com/gpucanary/gpucanary/monitor"
	"github.com/gpucanary/gpucanary/monitor/config"
	"github.com/gpucanary/gpucanary/monitor/procs"
)

// windows holds the app's windows. Each is made on first use; closing it
// hides it, and the app lives on in the tray.
type windows struct {
	u     *ui
	state monitor.State

	envs     *envsWindow
	procs    *procsWindow
	gpus     *gpusWindow
	history  *historyWindow
	settings fyne.Window
}

func newWindows(u *ui) *windows { return &windows{u: u} }

// newWindow makes a window that hides when closed.
func (w *windows) newWindow(title string, size fyne.Size) fyne.Window {
	win := w.u.app.NewWindow(title)
	win.SetCloseIntercept(win.Hide)
	win.Resize(size)
	return win
}

// host is a window to hang dialogs on.
func (w *windows) host() fyne.Window {
	if w.envs == nil {
		w.envs = newEnvsWindow(w)
	}
	return w.envs.win
}

// refresh gives every window that exists the new state.
func (w *windows) refresh(s monitor.State) {
	w.state = s
	if w.envs != nil {
		w.envs.refresh(s)
	}
	if w.procs != nil {
		w.procs.refresh(s)
	}
	if w.gpus != nil {
		w.gpus.refresh(s)
	}
}

func (w *windows) showEnvs() {
	if w.envs == nil {
		w.envs = newEnvsWindow(w)
	}
	w.envs.refresh(w.u.d.Monitor.State())
	w.envs.win.Show()
}

func (w *windows) showProcesses() {
	if w.procs == nil {
		w.procs = newProcsWindow(w)
	}
	w.procs.refresh(w.u.d.Monitor.State())
	w.procs.win.Show()
}

func (w *windows) showGPUs() {
	if w.gpus == nil {
		w.gpus = newGPUsWindow(w)
	}
	w.gpus.refresh(w.u.d.Monitor.State())
	w.gpus.win.Show()
}

func (w *windows) showHistory() {
	if w.history == nil {
		w.history = newHistoryWindow(w)
	}
	w.history.reload()
	w.history.win.Show()
}

// addEnvironment asks for a folder, adds it to the settings and watches it.
func (w *windows) addEnvironment() {
	win := w.host()
	win.Show()
	dialog.ShowFolderOpen(func(dir fyne.ListableURI, err error) {
		if err != nil || dir == nil {
			return
		}
		path := dir.Path()
		cfg := w.u.d.Config
		if !slices.Contains(cfg.Envs, path) {
			cfg.Envs = append(cfg.Envs, path)
			w.saveConfig(cfg)
		}
		w.u.d.Monitor.Add(path)
	}, win)
}

// removeEnvironment forgets path and drops it from the settings.
func (w *windows) removeEnvironment(path string) {
	cfg := w.u.d.Config
	cfg.Envs = slices.DeleteFunc(slices.Clone(cfg.Envs), func(p string) bool { return p == path })
	w.saveConfig(cfg)
	w.u.d.Monitor.Forget(path)
}

func (w *windows) saveConfig(cfg config.Config) {
	if w.u.d.ConfigPath != "" {
		if err := config.Save(w.u.d.ConfigPath, cfg); err != nil {
			dialog.ShowError(err, w.host())
			return
		}
	}
	w.u.d.Config = cfg
}

// historyWindow lists the engine's remembered events, newest first.
type historyWindow struct {
	w      *windows
	win    fyne.Window
	filter *widget.Select
	list   *widget.List
	all    []monitor.Event
	shown  []monitor.Event
}

const allEnvs = "All environments"

func newHistoryWindow(w *windows) *historyWindow {
	h := &historyWindow{w: w, win: w.newWindow("GPU Canary — Event history", fyne.NewSize(820, 480))}
	h.filter = widget.NewSelect([]string{allEnvs}, func(string) { h.apply() })
	h.filter.SetSelected(allEnvs)
	h.list = widget.NewList(func() int { return len(h.shown) },
		func() fyne.CanvasObject {
			l := widget.NewLabel("")
			l.Wrapping = fyne.TextWrapWord
			return l
		},
		func(i widget.ListItemID, o fyne.CanvasObject) {
			e := h.shown[i]
			o.(*widget.Label).SetText(fmt.Sprintf("%s  %s\n%s", e.Time.Local().Format("2006-01-02 15:04:05"), e.Kind, e.Message))
			h.list.SetItemHeight(i, o.MinSize().Height)
		})
	h.win.SetContent(container.NewBorder(container.NewHBox(widget.NewLabel("Show:"), h.filter), nil, nil, nil, h.list))
	return h
}

func (h *historyWindow) reload() {
	h.all = h.w.u.d.Monitor.History()
	envs := []string{allEnvs}
	for _, e := range h.all {
		if e.Env != "" && !slices.Contains(envs, e.Env) {
			envs = append(envs, e.Env)
		}
	}
	sort.Strings(envs[1:])
	h.filter.Options = envs
	h.apply()
}

func (h *historyWindow) apply() {
	h.shown = h.shown[:0]
	for _, e := range h.all {
		if h.filter.Selected == allEnvs || h.filter.Selected == "" || e.Env == h.filter.Selected {
			h.shown = append(h.shown, e)
		}
	}
	if h.list != nil {
		h.list.Refresh()
	}
}

// verdictImportance colours a verdict.
func verdictImportance(v string) widget.Importance {
	switch v {
	case monitor.VerdictError, string(procs.VerdictCPU):
		return widget.DangerImportance
	case monitor.VerdictWarning, string(procs.VerdictCUDAIdle):
		return widget.WarningImportance
	case monitor.VerdictOK, string(procs.VerdictGPU):
		return widget.SuccessImportance
	}
	return widget.MediumImportance
}
