package app

import (
	"cmp"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/gpucanary/gpucanary/app/present"
	"github.com/gpucanary/gpucanary/monitor"
	"github.com/gpucanary/gpucanary/monitor/human"
	"github.com/gpucanary/gpucanary/output/words"
)

// procColumns are the columns of `gpucanary ps`.
var procColumns = []string{"GPU", "PID", "User", "Environment", "GPU memory", "SM %", "CPU %", "RSS", "Runtime", "Verdict", "Command"}

// procCells are what procColumns say of a process (words.Cell).
var procCells = []words.Col{words.ColGPU, words.ColPID, words.ColUser, words.ColEnv, words.ColGPUMemory, words.ColSM,
	words.ColCPU, words.ColRSS, words.ColRuntime, words.ColVerdict, words.ColCommand}

// procsWindow is a live, sortable table of GPU workloads, with a memory
// bar per GPU.
type procsWindow struct {
	w      *windows
	win    fyne.Window
	table  *widget.Table
	keyed  *procTable // the table, with its arrow keys
	bars   *fyne.Container
	rows   []monitor.Process
	sortBy int
	desc   bool
	chosen int // selected row, -1 for none
	// chosenPID is the selected process: the selection follows it when a
	// refresh or a sort moves its row, and ends when it exits, so that
	// "Terminate…" never falls on the process that took its place.
	chosenPID   int
	chosenStart time.Time
	term        *widget.Button
	// end is "Tell me when it ends" (JOB_ENDED whatever the run time);
	// asked are the processes it was pressed for, by PID and start.
	end   *widget.Button
	asked map[int]time.Time
	// quiet is "Not this job" (nothing more told of a GPU job until it
	// ends); quieted are the processes it was pressed for.
	quiet   *widget.Button
	quieted map[int]time.Time
	why     *widget.Label // the selected process's verdict and reason
	// memTotal is the largest GPU's memory: the top of the memory
	// sparklines.
	memTotal uint64
	// cells are the table's cell templates' parts (procs_cells.go).
	cells map[*fyne.Container]*procCell
	// widths are the columns' widths but the last's.
	widths []float32
}

// Preference keys of UI state (Fyne Preferences hold only UI state; the
// settings live in monitor/config's file).
const (
	prefProcsSort = "procs.sort_column"
	prefProcsDesc = "procs.sort_descending"
)

// procWidths are the columns' widths for their content; a column is never
// narrower than its header with a sort arrow, and the last (the command)
// takes the width the window has left.
var procWidths = []float32{40, 64, 72, 170, 150, 50, 130, 72, 72, 96, 200}

// procsSize is the size the window opens at.
var procsSize = fyne.NewSize(1200, 520)

func newProcsWindow(w *windows) *procsWindow {
	prefs := w.u.app.Preferences()
	p := &procsWindow{w: w, win: w.newWindow("GPU Canary — GPU processes", procsSize), cells: map[*fyne.Container]*procCell{},
		sortBy: prefs.IntWithFallback(prefProcsSort, 4), desc: prefs.BoolWithFallback(prefProcsDesc, true), chosen: -1}
	if p.sortBy < 0 || p.sortBy >= len(procColumns) {
		p.sortBy = 4
	}
	keyed := &procTable{p: p}
	keyed.Length = func() (int, int) { return len(p.rows), len(procColumns) }
	keyed.CreateCell, keyed.UpdateCell = p.newProcCell, p.updateProcCell
	keyed.ShowHeaderRow = true
	keyed.ExtendBaseWidget(keyed)
	p.table, p.keyed = &keyed.Table, keyed
	p.table.ShowHeaderColumn = false // rows are told apart by their PID
	p.table.CreateHeader = func() fyne.CanvasObject {
		b := widget.NewButton("header", nil)
		b.Alignment = widget.ButtonAlignLeading
		return b
	}
	p.table.UpdateHeader = func(id widget.TableCellID, o fyne.CanvasObject) {
		b := o.(*widget.Button)
		if id.Col < 0 {
			return
		}
		b.SetText(p.header(id.Col))
		col := id.Col
		b.OnTapped = func() { p.sortOn(col) }
	}
	widths := slices.Clone(procWidths)
	for i, name := range procColumns {
		widths[i] = max(widths[i], widget.NewButton(name+sortMark[true], nil).MinSize().Width)
		if name == "PID" {
			// The largest PID Linux gives (pid_max 4194304) is never cut:
			// the table's divider takes a padding's width from the cell.
			widths[i] = max(widths[i], widget.NewLabel("4194304").MinSize().Width+theme.Padding())
		}
		p.table.SetColumnWidth(i, widths[i])
	}
	p.widths = widths
	p.table.OnSelected = func(id widget.TableCellID) {
		p.table.UnselectAll() // the row is marked by the cells, not Fyne's one-cell marker
		if id.Row < 0 || id.Row >= len(p.rows) {
			return
		}
		p.chosen = id.Row
		p.chosenPID, p.chosenStart = p.rows[id.Row].PID, p.rows[id.Row].StartTime
		p.updateTerminate()
		p.table.Refresh()
	}
	p.term = widget.NewButton("Terminate…", p.terminate)
	p.term.Disable()
	p.end = widget.NewButton(tellWhenEnds, p.watchEnd)
	p.end.Disable()
	p.asked = map[int]time.Time{}
	p.quiet = widget.NewButton(notThisJob, p.quietJob)
	p.quiet.Disable()
	p.quieted = map[int]time.Time{}
	// The selected process's story (verdict, why, the fix) is read
	// first, above the table, not in a status line.
	p.why = widget.NewLabel(chooseHint)
	p.why.Wrapping = fyne.TextWrapWord
	p.bars = container.NewVBox()
	table := container.New(&fillLastColumn{table: p.table, widths: widths}, keyed)
	top := container.NewVBox(p.bars, container.NewBorder(nil, nil, nil, container.NewVBox(p.term, p.end, p.quiet), p.why))
	p.win.SetContent(container.NewBorder(top, nil, nil, nil, table))
	return p
}

// chooseHint is the story line before a process is selected.
const chooseHint = "Select a process to see why it is where it is."

// procTable is the processes table whose Up and Down keys move the
// selection, the whole row and its story, rather than Fyne's focus band
// that selected nothing until Space.
type procTable struct {
	widget.Table
	p *procsWindow
}

// TypedKey moves the selection a row up or down; other keys are the
// table's.
func (t *procTable) TypedKey(e *fyne.KeyEvent) {
	step := 0
	switch e.Name {
	case fyne.KeyUp:
		step = -1
	case fyne.KeyDown:
		step = 1
	default:
		t.Table.TypedKey(e)
		return
	}
	if len(t.p.rows) == 0 {
		return
	}
	row := max(0, min(len(t.p.rows)-1, t.p.chosen+step))
	if t.p.chosen < 0 {
		row = 0
	}
	t.Select(widget.TableCellID{Row: row, Col: 0})
}

// sortMark is the arrow of the column the rows are sorted on, by
// whether the order is descending.
var sortMark = map[bool]string{true: " ▼", false: " ▲"}

// header is column col's header: its name, and the sort arrow on the
// column the rows are sorted on.
func (p *procsWindow) header(col int) string {
	if col == p.sortBy {
		return procColumns[col] + sortMark[p.desc]
	}
	return procColumns[col]
}

// fillLastColumn lays the table out over all its space and widens its
// last column (the command line) to the width the others leave, so a
// wide window shows more of each command rather than empty space.
type fillLastColumn struct {
	table  *widget.Table
	keyed  *procTable // the table, with its arrow keys
	widths []float32  // every column's own width
	shown  float32    // the last column's width now
}

func (l *fillLastColumn) MinSize(objects []fyne.CanvasObject) fyne.Size { return objects[0].MinSize() }

func (l *fillLastColumn) Layout(objects []fyne.CanvasObject, size fyne.Size) {
	last := len(l.widths) - 1
	rest := size.Width - theme.Padding()*float32(last)
	for _, w := range l.widths[:last] {
		rest -= w
	}
	if w := max(l.widths[last], rest); w != l.shown {
		l.shown = w
		l.table.SetColumnWidth(last, w)
	}
	objects[0].Move(fyne.NewPos(0, 0))
	objects[0].Resize(size)
}

func (p *procsWindow) refresh(s monitor.State) {
	p.rows = append(p.rows[:0], s.Processes...)
	p.sortRows()
	var bars []fyne.CanvasObject
	p.memTotal = 0
	for _, d := range s.GPU.Devices {
		p.memTotal = max(p.memTotal, d.MemoryTotalBytes)
		bar := widget.NewProgressBar()
		if d.MemoryTotalBytes > 0 {
			bar.SetValue(float64(d.MemoryUsedBytes) / float64(d.MemoryTotalBytes))
		}
		name := d.Name
		if s.GPU.Simulated {
			name += " (simulated)" // everything says when it is simulated
		}
		bar.TextFormatter = func() string {
			return fmt.Sprintf("GPU %d %s: %s of %s", d.Index, name, human.Bytes(d.MemoryUsedBytes), human.Bytes(d.MemoryTotalBytes))
		}
		bars = append(bars, bar)
	}
	if len(s.Processes) == 0 {
		bars = append(bars, widget.NewLabel(words.NoWorkloads))
	}
	p.bars.Objects = bars
	p.bars.Refresh()
	p.follow()
	p.table.Refresh()
}

func (p *procsWindow) sortOn(col int) {
	if p.sortBy == col {
		p.desc = !p.desc
	} else {
		p.sortBy, p.desc = col, col == 4 || col == 5 || col == 6 || col == 7
	}
	p.w.u.app.Preferences().SetInt(prefProcsSort, p.sortBy)
	p.w.u.app.Preferences().SetBool(prefProcsDesc, p.desc)
	p.sortRows()
	p.follow()
	p.table.Refresh()
}

// follow moves the selection to the chosen process's row after the rows
// changed order or content, or clears it when the process is gone.
func (p *procsWindow) follow() {
	if p.chosen < 0 {
		return
	}
	i := slices.IndexFunc(p.rows, func(r monitor.Process) bool {
		return r.PID == p.chosenPID && r.StartTime.Equal(p.chosenStart)
	})
	if i < 0 {
		p.chosen, p.chosenPID = -1, 0
	} else {
		p.chosen = i
	}
	p.updateTerminate()
}

// sortRows orders the rows by the chosen column: numbers as numbers,
// "n/a" below every value, text as text.
func (p *procsWindow) sortRows() {
	cmp := procCompare(procColumns[p.sortBy])
	sort.SliceStable(p.rows, func(i, j int) bool {
		if p.desc {
			return cmp(p.rows[j], p.rows[i]) < 0
		}
		return cmp(p.rows[i], p.rows[j]) < 0
	})
}

// procCompare is the order of one column.
func procCompare(col string) func(a, b monitor.Process) int {
	opt := func(v *uint64) int64 {
		if v == nil {
			return -1
		}
		return int64(*v)
	}
	switch col {
	case "GPU memory":
		return func(a, b monitor.Process) int { return cmp.Compare(opt(a.GPUMemoryBytes), opt(b.GPUMemoryBytes)) }
	case "SM %":
		sm := func(v *uint32) int64 {
			if v == nil {
				return -1
			}
			return int64(*v)
		}
		return func(a, b monitor.Process) int { return cmp.Compare(sm(a.SMPercent), sm(b.SMPercent)) }
	case "PID":
		return func(a, b monitor.Process) int { return cmp.Compare(a.PID, b.PID) }
	case "CPU %":
		return func(a, b monitor.Process) int { return cmp.Compare(a.CPUPercent, b.CPUPercent) }
	case "RSS":
		return func(a, b monitor.Process) int { return cmp.Compare(a.RSSBytes, b.RSSBytes) }
	case "Runtime": // longest running is the largest
		return func(a, b monitor.Process) int { return b.StartTime.Compare(a.StartTime) }
	case "GPU":
		first := func(g []int) int {
			if len(g) == 0 {
				return -1
			}
			return g[0]
		}
		return func(a, b monitor.Process) int { return cmp.Compare(first(a.GPUs), first(b.GPUs)) }
	}
	i := slices.Index(procColumns, col)
	now := time.Now()
	return func(a, b monitor.Process) int { return strings.Compare(cell(a, i, now), cell(b, i, now)) }
}

// cell is the text of one table cell at now (the window's clock: the
// runtime column counts to it): words' process cell, as ps says it.
func cell(r monitor.Process, col int, now time.Time) string {
	return words.Cell(r, procCells[col], now, present.HomeDir())
}

// updateTerminate offers "Terminate…" only for a job the engine says is
// stuck on the CPU (JOB_ON_CPU), and only for a process of this machine.
// It also says, beside it, why the selected process is where it is.
func (p *procsWindow) updateTerminate() {
	if p.chosen < 0 || p.chosen >= len(p.rows) {
		p.why.SetText(chooseHint)
		p.term.Disable()
		p.end.Disable()
		p.end.SetText(tellWhenEnds)
		p.quiet.Disable()
		p.quiet.SetText(notThisJob)
		return
	}
	r := p.rows[p.chosen]
	switch {
	case !r.Job() || !r.Measured() || r.StartTime.IsZero():
		p.quiet.Disable() // no GPU job of this machine
		p.quiet.SetText(notThisJob)
	case p.quieted[r.PID].Equal(r.StartTime):
		p.quiet.Disable()
		p.quiet.SetText(quietedJob)
	default:
		p.quiet.Enable()
		p.quiet.SetText(notThisJob)
	}
	switch {
	case !r.Measured() || r.StartTime.IsZero():
		p.end.Disable() // not a process of this machine, or one not named by its start
		p.end.SetText(tellWhenEnds)
	case p.asked[r.PID].Equal(r.StartTime):
		p.end.Disable()
		p.end.SetText(willTell)
	default:
		p.end.Enable()
		p.end.SetText(tellWhenEnds)
	}
	story := processStory(r, time.Now())
	if r.JobOnCPU && !r.OutsideContainer {
		p.term.Enable()
	} else {
		// Said, not left as a grey button with no reason.
		p.term.Disable()
		story += "\n" + terminateOnlyFor
	}
	p.why.SetText(story)
}

// terminateOnlyFor says why "Terminate…" is greyed out.
const terminateOnlyFor = "Terminate… is offered only for a job of this machine that computes on the CPU beside a GPU (JOB_ON_CPU)."

// processStory is what the window says of the selected process: who it
// is, its verdict, why, and each finding with its fix.
func processStory(r monitor.Process, now time.Time) string {
	where := ""
	if c := present.Container(r.Container); c != "" {
		where = " in " + c
	}
	story := fmt.Sprintf("PID %d%s · %s · %s", r.PID, where, cell(r, len(procColumns)-1, now), r.Verdict)
	if r.Reason != "" {
		story += ": " + r.Reason
	}
	for _, f := range r.Findings {
		story += "\n" + f.Message
		if f.Fix != "" {
			story += " Fix: " + f.Fix
		}
	}
	return story
}

// The end button's words, before and after it was pressed.
const (
	tellWhenEnds = "Tell me when it ends"
	willTell     = "Will tell when it ends"
)

// watchEnd asks the engine to tell of the selected process's end
// (JOB_ENDED, a notification) whatever its run time.
func (p *procsWindow) watchEnd() {
	if p.chosen < 0 || p.chosen >= len(p.rows) {
		return
	}
	r := p.rows[p.chosen]
	if err := p.w.u.d.Engine.WatchEnd(r.PID, r.StartTime); err != nil {
		dialog.ShowError(fmt.Errorf("watching PID %d: %w", r.PID, err), p.win)
		return
	}
	p.asked[r.PID] = r.StartTime
	p.updateTerminate()
}

// The quiet button's words, before and after it was pressed.
const (
	notThisJob = "Not this job"
	quietedJob = "Quiet until it ends"
)

// quietJob asks the engine to tell nothing more of the selected GPU
// job (a stall expected: it waits on a queue, a debugger holds it)
// until it ends.
func (p *procsWindow) quietJob() {
	if p.chosen < 0 || p.chosen >= len(p.rows) {
		return
	}
	r := p.rows[p.chosen]
	if err := p.w.u.d.Engine.QuietJob(r.PID, r.StartTime); err != nil {
		dialog.ShowError(fmt.Errorf("quieting PID %d: %w", r.PID, err), p.win)
		return
	}
	p.quieted[r.PID] = r.StartTime
	p.updateTerminate()
}

func (p *procsWindow) terminate() {
	if p.chosen < 0 || p.chosen >= len(p.rows) {
		return
	}
	r := p.rows[p.chosen]
	msg := fmt.Sprintf("Send SIGTERM to PID %d?\n\n%s\n\n%s", r.PID, human.Truncate(cell(r, len(procColumns)-1, time.Now()), 120), r.Reason)
	dialog.ShowConfirm("Terminate process", msg, func(ok bool) {
		if !ok {
			return
		}
		if err := p.w.u.d.Terminate(r.PID, r.StartTime); err != nil {
			dialog.ShowError(fmt.Errorf("terminating PID %d: %w", r.PID, err), p.win)
		}
	}, p.win)
}
