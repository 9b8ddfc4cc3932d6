package app

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/driver/desktop"

	"github.com/gpucanary/gpucanary/assets"
	"github.com/gpucanary/gpucanary/monitor"
)

// trayIcons maps monitor's overall states to their icons.
var trayIcons = map[string]fyne.Resource{
	monitor.OverallHealthy:   fyne.NewStaticResource("tray-healthy.png", assets.TrayHealthy),
	monitor.OverallWarning:   fyne.NewStaticResource("tray-warning.png", assets.TrayWarning),
	monitor.OverallError:     fyne.NewStaticResource("tray-error.png", assets.TrayError),
	monitor.OverallNoDriver:  fyne.NewStaticResource("tray-nodriver.png", assets.TrayNoDriver),
	monitor.OverallSimulated: fyne.NewStaticResource("tray-simulated.png", assets.TraySimulated),
}

// ui owns the tray, the notifications and the windows. Every method runs
// on Fyne's goroutine.
type ui struct {
	app  fyne.App
	desk desktop.App
	d    Deps
	menu *fyne.Menu
	wins *windows
	now  func() time.Time

	shownIcon, shownTip string
	shownMenu           *trayModel // the model the menu was last built from
	pausedUntil         time.Time
}

// newUI fills the desktop side effects Deps leaves nil with the platform's.
func newUI(a fyne.App, desk desktop.App, d Deps) *ui {
	if d.Log == nil {
		d.Log = slog.New(slog.DiscardHandler)
	}
	if d.OpenFolder == nil {
		d.OpenFolder = openFolder
	}
	if d.Terminate == nil {
		d.Terminate = terminate
	}
	if d.Clipboard == nil {
		d.Clipboard = func(s string) { a.Clipboard().SetContent(s) }
	}
	u := &ui{app: a, desk: desk, d: d, menu: fyne.NewMenu("GPU Canary"), now: time.Now}
	u.wins = newWindows(u)
	return u
}

// render shows the current state in the tray and open windows.
func (u *ui) render() {
	s := u.d.Monitor.State()
	now := u.now()
	m := model(s, now.Before(u.pausedUntil), func(env string) bool {
		return !u.d.Monitor.Policy().Snoozed(env, now).IsZero()
	})
	if m.Icon != u.shownIcon {
		u.desk.SetSystemTrayIcon(trayIcons[m.Icon])
		u.shownIcon = m.Icon
	}
	if m.Tooltip != u.shownTip && u.d.Tooltip != nil {
		u.d.Tooltip(m.Tooltip)
		u.shownTip = m.Tooltip
	}
	// Rebuild the menu only when it changed: a rebuild gives every item a
	// new id, which would break a menu the user has open.
	if u.shownMenu == nil || !reflect.DeepEqual(*u.shownMenu, m) {
		u.menu.Items = u.menuItems(m)
		u.desk.SetSystemTrayMenu(u.menu)
		u.shownMenu = &m
	}
	u.wins.refresh(s)
}

// onEvent notifies what the engine says to notify, records the event in
// the windows, then re-renders.
func (u *ui) onEvent(e monitor.Event) {
	u.notifyEvent(e)
	u.wins.event(e)
	u.render()
}

// menuItems builds the tray menu from the model.
func (u *ui) menuItems(m trayModel) []*fyne.MenuItem {
	status := fyne.NewMenuItem(m.Status, nil)
	status.Disabled = true
	items := []*fyne.MenuItem{status, fyne.NewMenuItemSeparator()}
	if m.Started && len(m.Envs) == 0 {
		add := fyne.NewMenuItem("No environments found: Add environment…", func() { u.wins.addEnvironment() })
		items = append(items, add)
	}
	for _, e := range m.Envs {
		label := e.Label
		if e.Snoozed {
			label += " (snoozed)"
		}
		it := fyne.NewMenuItem(label, nil)
		var sub []*fyne.MenuItem
		if e.Reinstall && u.d.Repair != nil {
			sub = append(sub, fyne.NewMenuItem("Reinstall CUDA torch…", func() { u.reinstall(e.Path) }))
		}
		if e.Fix != "" {
			sub = append(sub, fyne.NewMenuItem("Copy fix command", func() { u.d.Clipboard(e.Fix) }))
		}
		sub = append(sub,
			fyne.NewMenuItem("Copy activate command", func() { u.d.Clipboard(e.Activate) }),
			fyne.NewMenuItem("Open folder", func() { u.openFolder(e.Path) }),
		)
		if e.Snoozed {
			sub = append(sub, fyne.NewMenuItem("Unsnooze", func() {
				u.d.Monitor.Policy().Snooze(e.Path, time.Time{})
				u.render()
			}))
		} else {
			sub = append(sub, fyne.NewMenuItem("Snooze for 1 hour", func() {
				u.d.Monitor.Policy().Snooze(e.Path, u.now().Add(time.Hour))
				u.render()
			}))
		}
		it.ChildMenu = fyne.NewMenu("", sub...)
		items = append(items, it)
	}
	pause := fyne.NewMenuItem(LabelPause, func() {
		u.pausedUntil = u.now().Add(time.Hour)
		u.d.Monitor.Policy().Pause(u.pausedUntil)
		u.render()
	})
	if m.Paused {
		pause = fyne.NewMenuItem(LabelResume, func() {
			u.pausedUntil = time.Time{}
			u.d.Monitor.Policy().Pause(time.Time{})
			u.render()
		})
	}
	quit := fyne.NewMenuItem(LabelQuit, u.app.Quit)
	quit.IsQuit = true
	return append(items,
		fyne.NewMenuItemSeparator(),
		fyne.NewMenuItem(LabelProcesses, u.wins.showProcesses),
		fyne.NewMenuItem(LabelEnvs, u.wins.showEnvs),
		fyne.NewMenuItem(LabelGPUs, u.wins.showGPUs),
		fyne.NewMenuItem(LabelHistory, u.wins.showHistory),
		fyne.NewMenuItem(LabelReport, u.exportReport),
		fyne.NewMenuItemSeparator(),
		pause,
		fyne.NewMenuItem(LabelSettings, u.wins.showSettings),
		fyne.NewMenuItemSeparator(),
		quit,
	)
}

func (u *ui) openFolder(path string) {
	if err := u.d.OpenFolder(path); err != nil {
		u.d.Log.Warn("opening folder", "path", path, "err", err)
	}
}

// exportReport writes the evidence bundle into a new folder in the home
// directory and says where.
func (u *ui) exportReport() {
	if u.d.Export == nil {
		return
	}
	home, _ := os.UserHomeDir()
	dir := filepath.Join(home, "gpucanary-report-"+time.Now().Format("20060102-150405"))
	w := u.wins.host()
	go func() {
		err := u.d.Export(context.Background(), dir)
		fyne.Do(func() {
			if err != nil {
				dialog.ShowError(err, w)
			} else {
				dialog.ShowInformation("Report exported", "The evidence bundle was written to\n"+dir, w)
			}
			w.Show()
		})
	}()
}
