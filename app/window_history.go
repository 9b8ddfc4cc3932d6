package app

import (
	"slices"
	"sort"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/widget"

	"github.com/gpucanary/gpucanary/app/present"
	"github.com/gpucanary/gpucanary/monitor"
)

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

// historySize is the size the window opens at.
var historySize = fyne.NewSize(820, 480)

func newHistoryWindow(w *windows) *historyWindow {
	h := &historyWindow{w: w, win: w.newWindow("GPU Canary — Event history", historySize)}
	h.filter = widget.NewSelect([]string{allEnvs}, func(string) { h.apply() })
	h.filter.SetSelected(allEnvs)
	h.list = widget.NewList(func() int { return len(h.shown) },
		func() fyne.CanvasObject {
			l := widget.NewLabel("")
			l.Wrapping = fyne.TextWrapWord
			return l
		},
		func(i widget.ListItemID, o fyne.CanvasObject) {
			o.(*widget.Label).SetText(historyText(h.shown[i]))
			h.list.SetItemHeight(i, o.MinSize().Height)
		})
	h.win.SetContent(container.NewBorder(container.NewBorder(nil, nil, widget.NewLabel("Show:"), nil, h.filter), nil, nil, nil, h.list))
	return h
}

// historyText is one event: when, what and where, then the engine's words.
func historyText(e monitor.Event) string {
	head := e.Time.Local().Format("2006-01-02 15:04:05") + " · " + present.KindName(e.Kind)
	if e.Finding != nil && (e.Kind == monitor.KindFindingRaised || e.Kind == monitor.KindFindingCleared) {
		head += " (" + e.Finding.Code + ")"
	}
	if e.Env != "" {
		head += " · " + present.ShortPath(e.Env)
	}
	return head + "\n" + present.TildeHome(e.Message)
}

// historyKeep bounds the events the window holds, as the engine bounds
// its history.
const historyKeep = 1000

// reload reads the engine's remembered history (newest first).
func (h *historyWindow) reload() {
	h.all = h.w.u.d.Engine.History()
	h.options()
}

// add puts an event that just happened on top, so an open window is live.
func (h *historyWindow) add(e monitor.Event) {
	if len(h.all) > 0 && h.all[0].Time.Equal(e.Time) && h.all[0].Kind == e.Kind && h.all[0].Env == e.Env {
		return // already read from the engine's history
	}
	h.all = append([]monitor.Event{e}, h.all[:min(len(h.all), historyKeep-1)]...)
	h.options()
}

// options offers every environment the history mentions as a filter.
func (h *historyWindow) options() {
	envs := []string{allEnvs}
	for _, e := range h.all {
		if e.Env != "" && !slices.Contains(envs, e.Env) {
			envs = append(envs, e.Env)
		}
	}
	sort.Strings(envs[1:])
	h.filter.Options = envs
	h.filter.Refresh()
	h.apply()
}

// apply shows the events of the chosen environment.
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
