package app

import (
	"fmt"
	"path/filepath"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/driver/desktop"

	"github.com/gpucanary/gpucanary/assets"
	"github.com/gpucanary/gpucanary/monitor"
)

// tray owns the system tray icon and menu.
type tray struct {
	desk desktop.App
	quit func()
	menu *fyne.Menu
	// shown is the icon state on screen, so an unchanged state is not re-sent.
	shown string
}

func newTray(desk desktop.App, quit func()) *tray {
	return &tray{desk: desk, quit: quit, menu: fyne.NewMenu("GPU Canary")}
}

// trayIcons maps monitor's overall states to their icons.
var trayIcons = map[string]fyne.Resource{
	monitor.OverallHealthy:   fyne.NewStaticResource("tray-healthy.png", assets.TrayHealthy),
	monitor.OverallWarning:   fyne.NewStaticResource("tray-warning.png", assets.TrayWarning),
	monitor.OverallError:     fyne.NewStaticResource("tray-error.png", assets.TrayError),
	monitor.OverallNoDriver:  fyne.NewStaticResource("tray-nodriver.png", assets.TrayNoDriver),
	monitor.OverallSimulated: fyne.NewStaticResource("tray-simulated.png", assets.TraySimulated),
}

// render shows r: the icon for its overall state and a menu with a status
// line, one entry per environment, and Quit. Call it on the UI goroutine.
func (t *tray) render(r monitor.CheckResult) {
	state := r.Overall()
	if state != t.shown {
		t.desk.SetSystemTrayIcon(trayIcons[state])
		t.shown = state
	}
	t.menu.Items = menuItems(r, t.quit)
	t.desk.SetSystemTrayMenu(t.menu)
}

// menuItems is the tray menu for r.
func menuItems(r monitor.CheckResult, quit func()) []*fyne.MenuItem {
	status := fyne.NewMenuItem(r.Summary(), nil)
	status.Disabled = true
	items := []*fyne.MenuItem{status, fyne.NewMenuItemSeparator()}
	if len(r.Envs) == 0 {
		none := fyne.NewMenuItem("No Python environments found", nil)
		none.Disabled = true
		items = append(items, none)
	}
	for _, e := range r.Envs {
		it := fyne.NewMenuItem(envLabel(e), nil)
		it.Disabled = true
		items = append(items, it)
	}
	items = append(items, fyne.NewMenuItemSeparator())
	q := fyne.NewMenuItem("Quit", quit)
	q.IsQuit = true
	return append(items, q)
}

// envLabel is "✗ llm/.venv — torch 2.10.0 CPU only".
func envLabel(e monitor.EnvReport) string {
	mark := map[string]string{monitor.VerdictError: "✗", monitor.VerdictWarning: "!", monitor.VerdictOK: "✓"}[e.Verdict]
	if mark == "" {
		mark = "·"
	}
	name := filepath.Join(filepath.Base(filepath.Dir(e.Path)), filepath.Base(e.Path))
	t := e.Torch()
	if t == nil {
		return fmt.Sprintf("%s %s — no torch", mark, name)
	}
	build := string(t.Build)
	switch {
	case t.Build == "cuda" && t.CUDA != "":
		build = "CUDA " + t.CUDA
	case t.Build == "cpu":
		build = "CPU only"
	}
	return fmt.Sprintf("%s %s — torch %s %s", mark, name, t.Version, build)
}
