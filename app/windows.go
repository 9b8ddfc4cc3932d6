package app

import (
	"fmt"
	"slices"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/driver/desktop"

	"github.com/gpucanary/gpucanary/app/link"
	"github.com/gpucanary/gpucanary/app/present"
	"github.com/gpucanary/gpucanary/monitor"
	"github.com/gpucanary/gpucanary/monitor/config"
	"github.com/gpucanary/gpucanary/monitor/pyenv/envsearch"
	"github.com/gpucanary/gpucanary/monitor/pyenv/managers"
	"github.com/gpucanary/gpucanary/output/words"
)

// windows holds the app's windows. Each is made on first use; closing it
// hides it; when the last one is closed this process ends, and the tray
// process lives on.
type windows struct {
	u     *ui
	state monitor.State
	// changed is when each environment's packages last changed, from the
	// engine's history and the events since.
	changed map[string]time.Time
	// samples feed the GPUs window's graphs.
	samples present.GPUSamples

	envs     *envsWindow
	procs    *procsWindow
	gpus     *gpusWindow
	history  *historyWindow
	settings fyne.Window
	// settingsForm is the form the Settings window shows now.
	settingsForm *settingsForm
	// visible are the windows shown and not closed since: when none is
	// left, this process is idle.
	visible map[fyne.Window]bool
	// last is the window shown last, where a message for the user goes.
	last fyne.Window
	// sizes are the sizes the windows open at, which their content must
	// fit (the golden-image test checks it).
	sizes map[fyne.Window]fyne.Size
}

func newWindows(u *ui) *windows {
	return &windows{u: u, visible: map[fyne.Window]bool{}, sizes: map[fyne.Window]fyne.Size{}}
}

// changeKinds are the events that change what is installed in an
// environment: its "last change" in the Environments window.
var changeKinds = map[monitor.Kind]bool{
	monitor.KindCUDAWheelReplaced: true, monitor.KindTorchChanged: true, monitor.KindTorchRemoved: true,
	monitor.KindTorchInstalled: true, monitor.KindEnvAdded: true,
}

// lastChanges reads when each environment last changed from events.
func lastChanges(events []monitor.Event) map[string]time.Time {
	out := map[string]time.Time{}
	for _, e := range events {
		if changeKinds[e.Kind] && e.Env != "" && e.Time.After(out[e.Env]) {
			out[e.Env] = e.Time
		}
	}
	return out
}

// lastChanged is when each environment last changed; the engine's
// history is read the first time it is asked for.
func (w *windows) lastChanged() map[string]time.Time {
	if w.changed == nil {
		var h []monitor.Event
		if w.u.d.Engine != nil {
			h = w.u.d.Engine.History(link.HistoryKeep)
		}
		w.changed = lastChanges(h)
	}
	return w.changed
}

// event records an event that just happened in the windows that show it.
func (w *windows) event(e monitor.Event) {
	if changeKinds[e.Kind] && e.Env != "" {
		w.lastChanged()[e.Env] = e.Time
	}
	if w.history != nil {
		w.history.add(e)
	}
}

// newWindow makes a window that hides when closed, and is made again
// only when this process has ended. It opens at the size it had when last
// closed, or at size; every window's menu reaches every other window,
// and Escape or Ctrl+W closes it.
func (w *windows) newWindow(title string, size fyne.Size) fyne.Window {
	win := w.u.app.NewWindow(title)
	win.SetCloseIntercept(func() { w.hide(win) })
	w.sizes[win] = size
	if kept, ok := w.keptSize(title); ok {
		size = kept
	}
	win.Resize(size)
	win.SetMainMenu(w.menu())
	win.Canvas().SetOnTypedKey(func(k *fyne.KeyEvent) {
		if k.Name == fyne.KeyEscape {
			w.hide(win)
		}
	})
	win.Canvas().AddShortcut(&desktop.CustomShortcut{KeyName: fyne.KeyW, Modifier: fyne.KeyModifierShortcutDefault},
		func(fyne.Shortcut) { w.hide(win) })
	return win
}

// menu is every window's menu: each window is reachable from every other,
// so a desktop with no tray host (GNOME without the AppIndicator
// extension) loses nothing.
func (w *windows) menu() *fyne.MainMenu {
	return fyne.NewMainMenu(fyne.NewMenu("Go",
		fyne.NewMenuItem("Environments", w.showEnvs),
		fyne.NewMenuItem("GPU processes", w.showProcesses),
		fyne.NewMenuItem("GPUs", w.showGPUs),
		fyne.NewMenuItem("History", w.showHistory),
		fyne.NewMenuItemSeparator(),
		fyne.NewMenuItem("Settings", w.showSettings),
	))
}

// Preference keys of a window's size when it was last closed.
func sizeKeys(title string) (width, height string) {
	return "window." + title + ".width", "window." + title + ".height"
}

// keptSize is the size the window called title had when last closed.
func (w *windows) keptSize(title string) (fyne.Size, bool) {
	kw, kh := sizeKeys(title)
	prefs := w.u.app.Preferences()
	width, height := prefs.FloatWithFallback(kw, 0), prefs.FloatWithFallback(kh, 0)
	if width < 200 || height < 150 {
		return fyne.Size{}, false
	}
	return fyne.NewSize(float32(width), float32(height)), true
}

// show shows win and counts it as open, within the screen's work area.
func (w *windows) show(win fyne.Window) {
	w.visible[win] = true
	w.last = win
	win.Show()
	if area, ok := workArea(win); ok {
		if size := fitIn(win.Canvas().Size(), area); size != win.Canvas().Size() {
			win.Resize(size)
		}
	}
}

// fitIn is size made to fit the work area area, with a margin for the
// window's frame: at FYNE_SCALE=2 on 1920×1080 the processes window
// (1200×520, so 2400×1040 pixels) had its buttons off the screen.
func fitIn(size, area fyne.Size) fyne.Size {
	return fyne.NewSize(min(size.Width, area.Width*0.95), min(size.Height, area.Height*0.9))
}

// hide hides win, keeping its size for the next time; with no window
// left open the process may end.
func (w *windows) hide(win fyne.Window) {
	if size := win.Canvas().Size(); size.Width > 0 && size.Height > 0 {
		kw, kh := sizeKeys(win.Title())
		w.u.app.Preferences().SetFloat(kw, float64(size.Width))
		w.u.app.Preferences().SetFloat(kh, float64(size.Height))
	}
	win.Hide()
	delete(w.visible, win)
	w.u.checkIdle()
}

// open reports how many windows are open.
func (w *windows) open() int { return len(w.visible) }

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
	w.samples.Add(s, w.u.now(), minSampleGap)
	if w.envs != nil {
		w.envs.refresh(s)
	}
	// The charts are drawn only in a window on the screen; a closed one
	// is drawn again when it is shown.
	if w.procs != nil && w.visible[w.procs.win] {
		w.procs.refresh(s)
	}
	if w.gpus != nil && w.visible[w.gpus.win] {
		w.gpus.refresh(s)
	}
}

func (w *windows) showEnvs() {
	if w.envs == nil {
		w.envs = newEnvsWindow(w)
	}
	w.envs.refresh(w.u.d.Engine.State())
	w.show(w.envs.win)
}

func (w *windows) showProcesses() {
	if w.procs == nil {
		w.procs = newProcsWindow(w)
	}
	w.procs.refresh(w.u.d.Engine.State())
	w.show(w.procs.win)
}

func (w *windows) showGPUs() {
	if w.gpus == nil {
		w.gpus = newGPUsWindow(w)
	}
	w.gpus.refresh(w.u.d.Engine.State())
	w.show(w.gpus.win)
}

func (w *windows) showHistory() {
	if w.history == nil {
		w.history = newHistoryWindow(w)
	}
	w.history.reload()
	w.show(w.history.win)
}

// addEnvironment asks for a folder, adds it to the settings and watches it.
func (w *windows) addEnvironment() {
	win := w.host()
	w.show(win)
	dialog.ShowFolderOpen(func(dir fyne.ListableURI, err error) {
		if err != nil || dir == nil {
			return
		}
		w.addPath(dir.Path())
	}, win)
}

// addPath adds the environment at path to the settings and watches it.
// A folder that is not an environment is refused with a dialog that says
// so, and nothing is saved.
func (w *windows) addPath(path string) {
	win := w.host()
	// What the command line accepts, the windows accept: an environment, a
	// project folder (its manager's environment) or an interpreter.
	r, err := envsearch.ResolveArg(path, managers.Where{})
	if nc, ok := envsearch.IsNotCreated(err); ok {
		dialog.ShowInformation("No environment yet",
			wrap(nc.NotCreated(path)+", then add it again.")+"\n\nNothing was added.", win)
		return
	}
	if err != nil {
		dialog.ShowInformation("Not a Python environment",
			wrap(path+" is "+words.NotAnEnv+". Choose the environment's folder or the project's.")+"\n\nNothing was added.", win)
		return
	}
	path = r.Env
	cfg := w.u.d.Config
	if !slices.Contains(cfg.Envs, path) {
		cfg.Envs = append(cfg.Envs, path)
		if !w.saveConfig(cfg) {
			return
		}
	}
	if err := w.u.d.Engine.Add(path); err != nil {
		dialog.ShowError(fmt.Errorf("%s is saved in the settings but not watched now: %w", path, err), win)
	}
}

// removeEnvironment forgets path and drops it from the settings.
func (w *windows) removeEnvironment(path string) {
	cfg := w.u.d.Config
	cfg.Envs = slices.DeleteFunc(slices.Clone(cfg.Envs), func(p string) bool { return p == path })
	w.saveConfig(cfg)
	if err := w.u.d.Engine.Forget(path); err != nil {
		dialog.ShowError(fmt.Errorf("%s is removed from the settings, but the engine did not hear it: %w", path, err), w.host())
	}
}

// saveConfig writes cfg to the settings file and reports whether it did.
func (w *windows) saveConfig(cfg config.Config) bool {
	if w.u.d.ConfigPath != "" {
		if err := config.Save(w.u.d.ConfigPath, cfg); err != nil {
			dialog.ShowError(err, w.host())
			return false
		}
	}
	w.u.d.Config = cfg
	return true
}
