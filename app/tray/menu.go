package tray

import (
	"time"

	"github.com/gpucanary/gpucanary/app/link"
	"github.com/gpucanary/gpucanary/app/present"
)

// menu turns the tray model into menu entries. Every action runs on the
// loop goroutine (through do).
func (t *tray) menu(m present.TrayModel) []Item {
	on := func(f func()) func() { return func() { t.do(f) } }
	show := func(what string) func() { return on(func() { t.open(link.Request{Show: what}) }) }
	items := []Item{{Label: m.Status, Disabled: true}}
	if m.SettingsError != "" {
		items = append(items, Item{Label: LabelSettingsError, Action: show(link.ShowSettings)})
	}
	items = append(items, Separator)
	if m.Started && len(m.Envs) == 0 {
		items = append(items, Item{Label: LabelAddFirst, Action: show(link.ShowAdd)})
	}
	for _, e := range m.Envs {
		label := e.Label
		if e.Snoozed {
			label += " (snoozed)"
		}
		var sub []Item
		if e.Reinstall && t.d.CanRepair && t.d.Windows != nil {
			sub = append(sub, Item{Label: e.RepairLabel, Action: on(func() { t.open(link.Request{Repair: e.Path}) })})
		}
		switch {
		case e.Keep && t.d.Windows != nil:
			sub = append(sub, Item{Label: LabelKeep, Action: on(func() { t.open(link.Request{Keep: e.Path}) })})
		case e.Guarded:
			sub = append(sub, Item{Label: LabelKept, Disabled: true})
		}
		if e.Fix != "" {
			sub = append(sub, Item{Label: "Copy fix command", Action: on(func() { t.copy(e.Fix) })})
		}
		sub = append(sub,
			Item{Label: "Copy activate command", Action: on(func() { t.copy(e.Activate) })},
			Item{Label: "Open folder", Action: on(func() { t.openFolder(e.Path) })},
		)
		if e.Snoozed {
			sub = append(sub, Item{Label: "Unsnooze", Action: on(func() {
				t.d.Monitor.Snooze(e.Path, time.Time{})
				t.render()
			})})
		} else {
			sub = append(sub, Item{Label: "Snooze for 1 hour", Action: on(func() {
				t.d.Monitor.Snooze(e.Path, t.now().Add(time.Hour))
				t.render()
			})})
		}
		items = append(items, Item{Label: label, Children: sub})
	}
	if len(m.Jobs) > 0 {
		items = append(items, Separator, Item{Label: LabelJobs, Disabled: true})
	}
	for _, j := range m.Jobs {
		var sub []Item
		if j.Asked {
			sub = append(sub, Item{Label: LabelTellWhenEndsAsked, Disabled: true})
		} else {
			sub = append(sub, Item{Label: LabelTellWhenEnds, Action: on(func() {
				if err := t.d.Monitor.WatchEnd(j.PID, j.Started); err != nil {
					t.d.Log.Warn("asking to be told when a job ends", "pid", j.PID, "err", err)
				}
				t.render()
			})})
		}
		if j.Quiet {
			sub = append(sub, Item{Label: LabelJobQuiet, Disabled: true})
		} else {
			sub = append(sub, Item{Label: LabelQuietJob, Action: on(func() {
				if err := t.d.Monitor.QuietJob(j.PID, j.Started); err != nil {
					t.d.Log.Warn("quieting a job", "pid", j.PID, "err", err)
				}
				t.render()
			})})
		}
		sub = append(sub, Item{Label: LabelProcesses, Action: show(link.ShowProcesses)})
		items = append(items, Item{Label: j.Label, Children: sub})
	}
	pause := Item{Label: LabelPause, Action: on(func() {
		t.d.Monitor.Pause(t.now().Add(time.Hour))
		t.render()
	})}
	if m.Paused {
		pause = Item{Label: LabelResume, Action: on(func() {
			t.d.Monitor.Pause(time.Time{})
			t.render()
		})}
	}
	items = append(items, Separator,
		Item{Label: LabelProcesses, Action: show(link.ShowProcesses)},
		Item{Label: LabelEnvs, Action: show(link.ShowEnvs)},
		Item{Label: LabelGPUs, Action: show(link.ShowGPUs)},
		Item{Label: LabelHistory, Action: show(link.ShowHistory)},
	)
	if t.d.Export != nil {
		items = append(items, Item{Label: LabelReport, Action: on(t.exportReport)})
	}
	return append(items, Separator,
		pause,
		Item{Label: LabelSettings, Action: show(link.ShowSettings)},
		Separator,
		Item{Label: LabelQuit, Action: func() { t.stop() }},
	)
}

// stop ends the loop (Quit); a second click does nothing more.
func (t *tray) stop() { t.quitOnce.Do(func() { close(t.quit) }) }
