package app

import (
	"cmp"
	"image/color"
	"slices"
	"sort"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/gpucanary/gpucanary/app/chart"
	"github.com/gpucanary/gpucanary/app/link"
	"github.com/gpucanary/gpucanary/app/present"
	"github.com/gpucanary/gpucanary/monitor"
	"github.com/gpucanary/gpucanary/monitor/human"
	"github.com/gpucanary/gpucanary/output/words"
)

// historyWindow shows the engine's remembered events on a timeline, one
// lane per environment, over the list of them, newest first; both show
// the environment and the kind chosen.
type historyWindow struct {
	w        *windows
	win      fyne.Window
	filter   *widget.Select
	kinds    *widget.Select
	timeline *chart.Timeline
	list     *widget.List
	all      []monitor.Event
	shown    []monitor.Event
}

const (
	allEnvs  = "All environments"
	allKinds = "All events"
	// machineLane is the lane of events about no environment (the GPU,
	// a job outside every environment).
	machineLane = "this machine"
)

// historySize is the size the window opens at.
var historySize = fyne.NewSize(900, 600)

func newHistoryWindow(w *windows) *historyWindow {
	h := &historyWindow{w: w, win: w.newWindow("GPU Canary — Event history", historySize)}
	h.filter = widget.NewSelect([]string{allEnvs}, func(string) { h.apply() })
	h.filter.SetSelected(allEnvs)
	h.kinds = widget.NewSelect([]string{allKinds}, func(string) { h.apply() })
	h.kinds.SetSelected(allKinds)
	h.timeline = chart.NewTimeline()
	h.list = widget.NewList(func() int { return len(h.shown) },
		func() fyne.CanvasObject {
			l := widget.NewLabel("")
			l.Wrapping = fyne.TextWrapWord
			b := widget.NewButton(present.ActionReport, nil)
			b.Hide()
			return container.NewBorder(nil, nil, nil, container.NewCenter(b), l)
		},
		func(i widget.ListItemID, o fyne.CanvasObject) {
			row := o.(*fyne.Container)
			e := h.shown[i]
			row.Objects[0].(*widget.Label).SetText(historyText(e))
			b := row.Objects[1].(*fyne.Container).Objects[0].(*widget.Button)
			if pid := reportable(e); pid != 0 && h.w.u.d.ReportJob != nil {
				b.OnTapped = func() { h.reportJob(pid) }
				b.Show()
			} else {
				b.OnTapped = nil
				b.Hide()
			}
			h.list.SetItemHeight(i, o.MinSize().Height)
		})
	filters := container.NewBorder(nil, nil, widget.NewLabel("Show:"), h.kinds, h.filter)
	h.win.SetContent(container.NewBorder(container.NewVBox(filters, h.timeline, widget.NewSeparator()), nil, nil, nil, h.list))
	return h
}

// historyText is one event: when, what and where, then the engine's words.
// What the history holds was read back from a file: a control character
// in it (a path, a command line, an edited line whose checksum was made
// to fit) is shown as an escape, never handed to the label as it is.
func historyText(e monitor.Event) string {
	head := e.Time.Local().Format("2006-01-02 15:04:05") + " · " + present.KindName(e.Kind)
	if e.Finding != nil && (e.Kind == monitor.KindFindingRaised || e.Kind == monitor.KindFindingCleared) {
		head += ": " + words.CodeTitle(e.Finding.Code)
	}
	if e.Env != "" {
		head += " · " + present.ShortPath(e.Env)
	}
	return human.Visible(head) + "\n" + human.Visible(words.Unmark(present.TildeHome(e.Message)))
}

// reportable is the PID of the job a JOB_ENDED event is about, whose
// report its row offers; 0 for any other event.
func reportable(e monitor.Event) int {
	if e.Kind != monitor.KindJobEnded || e.Job == nil {
		return 0
	}
	return e.Job.PID
}

// reportJob asks for the job's report (the tray writes it and opens its
// folder, or says why it could not).
func (h *historyWindow) reportJob(pid int) {
	if err := h.w.u.d.ReportJob(pid); err != nil {
		h.w.u.d.Log.Error("asking for a job's report", "pid", pid, "err", err)
	}
}

// reload reads the engine's newest remembered events (newest first, as
// many as the window holds: link.HistoryKeep).
func (h *historyWindow) reload() {
	h.all = h.w.u.d.Engine.History(link.HistoryKeep)
	h.options()
}

// add puts an event that just happened on top, so an open window is live.
func (h *historyWindow) add(e monitor.Event) {
	if len(h.all) > 0 && h.all[0].Time.Equal(e.Time) && h.all[0].Kind == e.Kind && h.all[0].Env == e.Env {
		return // already read from the engine's history
	}
	h.all = append([]monitor.Event{e}, h.all[:min(len(h.all), link.HistoryKeep-1)]...)
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
	kinds := []string{allKinds}
	for _, e := range h.all {
		if k := present.KindName(e.Kind); !slices.Contains(kinds, k) {
			kinds = append(kinds, k)
		}
	}
	sort.Strings(kinds[1:])
	h.kinds.Options = kinds
	h.kinds.Refresh()
	h.apply()
}

// apply shows the events of the chosen environment and kind.
func (h *historyWindow) apply() {
	h.shown = h.shown[:0]
	for _, e := range h.all {
		envOK := h.filter.Selected == allEnvs || h.filter.Selected == "" || e.Env == h.filter.Selected
		kindOK := h.kinds == nil || h.kinds.Selected == allKinds || h.kinds.Selected == "" || present.KindName(e.Kind) == h.kinds.Selected
		if envOK && kindOK {
			h.shown = append(h.shown, e)
		}
	}
	if h.list != nil {
		h.list.Refresh()
	}
	if h.timeline != nil {
		h.timeline.From, h.timeline.To, h.timeline.Lanes = timelineOf(h.shown, h.w.u.now())
		h.timeline.Refresh()
	}
}

// timelineOf lays events (newest first) out in lanes, one per
// environment in the order of their names, the machine's own last; the
// span runs from the oldest event to now, and is at least minSpan: events
// of the last three minutes spread over the width rather than overlap at
// its right edge of an hour.
func timelineOf(events []monitor.Event, now time.Time) (from, to time.Time, lanes []chart.Lane) {
	from = now.Add(-minSpan)
	byLane := map[string]int{}
	for _, e := range slices.Backward(events) {
		name := machineLane
		if e.Env != "" {
			name = present.ShortPath(e.Env)
		}
		i, ok := byLane[name]
		if !ok {
			i = len(lanes)
			byLane[name] = i
			lanes = append(lanes, chart.Lane{Name: name})
		}
		lanes[i].Marks = append(lanes[i].Marks, chart.Mark{T: e.Time, Color: levelColor(present.Notification(e, false).Level)})
		if e.Time.Before(from) {
			from = e.Time
		}
	}
	machineLast := func(l chart.Lane) int {
		if l.Name == machineLane {
			return 1
		}
		return 0
	}
	slices.SortStableFunc(lanes, func(a, b chart.Lane) int {
		return cmp.Or(cmp.Compare(machineLast(a), machineLast(b)), cmp.Compare(a.Name, b.Name))
	})
	// A little room on both sides, so the first and the last dots are
	// whole.
	margin := now.Sub(from) / 40
	return from.Add(-margin), now.Add(margin), lanes
}

// minSpan is the shortest time the timeline shows.
const minSpan = 5 * time.Minute

// levelColor is a marker's colour: that of the notification the event
// gives (red broken, orange may be, blue happened, green mended).
func levelColor(l present.Level) color.Color {
	switch l {
	case present.LevelError:
		return theme.Color(theme.ColorNameError)
	case present.LevelWarning:
		return theme.Color(theme.ColorNameWarning)
	case present.LevelSuccess:
		return theme.Color(theme.ColorNameSuccess)
	}
	return colorUtil // blue: the theme's primary is orange, too near a warning
}
