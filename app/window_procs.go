package app

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/widget"

	"github.com/gpucanary/gpucanary/monitor"
	"github.com/gpucanary/gpucanary/monitor/human"
	"github.com/gpucanary/gpucanary/monitor/procs"
)

// procColumns are the columns of `gpucanary ps`.
var procColumns = []string{"GPU", "PID", "User", "Environment", "GPU memory", "SM %", "CPU %", "RSS", "Runtime", "Verdict", "Command"}

// procsWindow is a live, sortable table of GPU workloads, with a memory
// bar per GPU.
type procsWindow struct {
	w      *windows
	win    fyne.Window
	table  *widget.Table
	bars   *fyne.Container
	rows   []monitor.Process
	sortBy int
	desc   bool
	chosen int // selected row, -1 for none
	term   *widget.Button
}

func newProcsWindow(w *windows) *procsWindow {
	p := &procsWindow{w: w, win: w.newWindow("GPU Canary — GPU processes", fyne.NewSize(1200, 520)), sortBy: 4, desc: true, chosen: -1}
	p.table = widget.NewTableWithHeaders(
		func() (int, int) { return len(p.rows), len(procColumns) },
		func() fyne.CanvasObject { return widget.NewLabel("cell") },
		func(id widget.TableCellID, o fyne.CanvasObject) {
			l := o.(*widget.Label)
			if id.Row >= len(p.rows) {
				return
			}
			r := p.rows[id.Row]
			l.SetText(cell(r, id.Col))
			l.Importance = widget.MediumImportance
			if procColumns[id.Col] == "Verdict" {
				l.Importance = verdictImportance(string(r.Verdict))
			}
			l.Refresh()
		})
	p.table.CreateHeader = func() fyne.CanvasObject { return widget.NewButton("header", nil) }
	p.table.UpdateHeader = func(id widget.TableCellID, o fyne.CanvasObject) {
		b := o.(*widget.Button)
		if id.Row >= 0 {
			b.SetText(fmt.Sprint(id.Row + 1))
			b.OnTapped = nil
			return
		}
		label := procColumns[id.Col]
		if id.Col == p.sortBy {
			label += map[bool]string{true: " ▼", false: " ▲"}[p.desc]
		}
		b.SetText(label)
		col := id.Col
		b.OnTapped = func() { p.sortOn(col) }
	}
	for i, wdt := range []float32{50, 80, 90, 220, 100, 60, 70, 90, 80, 90, 420} {
		p.table.SetColumnWidth(i, wdt)
	}
	p.table.OnSelected = func(id widget.TableCellID) {
		p.chosen = id.Row
		p.updateTerminate()
	}
	p.term = widget.NewButton("Terminate…", p.terminate)
	p.term.Disable()
	p.bars = container.NewVBox()
	p.win.SetContent(container.NewBorder(p.bars, container.NewHBox(p.term), nil, nil, p.table))
	return p
}

func (p *procsWindow) refresh(s monitor.State) {
	p.rows = append(p.rows[:0], s.Processes...)
	p.sortRows()
	var bars []fyne.CanvasObject
	for _, d := range s.GPU.Devices {
		bar := widget.NewProgressBar()
		if d.MemoryTotalBytes > 0 {
			bar.SetValue(float64(d.MemoryUsedBytes) / float64(d.MemoryTotalBytes))
		}
		bar.TextFormatter = func() string {
			return fmt.Sprintf("GPU %d %s: %s of %s", d.Index, d.Name, human.Bytes(d.MemoryUsedBytes), human.Bytes(d.MemoryTotalBytes))
		}
		bars = append(bars, bar)
	}
	if len(s.Processes) == 0 {
		bars = append(bars, widget.NewLabel("No GPU workloads: no process holds GPU memory or has an ML runtime loaded."))
	}
	p.bars.Objects = bars
	p.bars.Refresh()
	p.table.Refresh()
	p.updateTerminate()
}

func (p *procsWindow) sortOn(col int) {
	if p.sortBy == col {
		p.desc = !p.desc
	} else {
		p.sortBy, p.desc = col, col == 4 || col == 5 || col == 6 || col == 7
	}
	p.sortRows()
	p.table.Refresh()
}

func (p *procsWindow) sortRows() {
	key := func(r monitor.Process) string {
		switch procColumns[p.sortBy] {
		case "GPU memory":
			if r.GPUMemoryBytes == nil {
				return fmt.Sprintf("%020d", 0)
			}
			return fmt.Sprintf("%020d", *r.GPUMemoryBytes)
		case "PID":
			return fmt.Sprintf("%010d", r.PID)
		case "CPU %":
			return fmt.Sprintf("%012.3f", r.CPUPercent)
		case "RSS":
			return fmt.Sprintf("%020d", r.RSSBytes)
		case "SM %":
			if r.SMPercent == nil {
				return "000"
			}
			return fmt.Sprintf("%03d", *r.SMPercent)
		case "Runtime":
			return fmt.Sprintf("%020d", -r.StartTime.Unix())
		}
		return cell(r, p.sortBy)
	}
	sort.SliceStable(p.rows, func(i, j int) bool {
		a, b := key(p.rows[i]), key(p.rows[j])
		if p.desc {
			return a > b
		}
		return a < b
	})
}

// cell is the text of one table cell.
func cell(r monitor.Process, col int) string {
	switch procColumns[col] {
	case "GPU":
		if len(r.GPUs) == 0 {
			return "-"
		}
		return fmt.Sprint(r.GPUs[0])
	case "PID":
		return fmt.Sprint(r.PID)
	case "User":
		return r.User
	case "Environment":
		return shortPath(r.EnvPath)
	case "GPU memory":
		if r.GPUMemoryBytes == nil {
			return "n/a"
		}
		return human.Bytes(*r.GPUMemoryBytes)
	case "SM %":
		if r.SMPercent == nil {
			return "-"
		}
		return fmt.Sprint(*r.SMPercent)
	case "CPU %":
		return fmt.Sprintf("%.1f", r.CPUPercent)
	case "RSS":
		return human.Bytes(r.RSSBytes)
	case "Runtime":
		if r.StartTime.IsZero() {
			return "-"
		}
		return human.Duration(time.Since(r.StartTime))
	case "Verdict":
		return string(r.Verdict)
	case "Command":
		c := strings.Join(r.Cmdline, " ")
		if c == "" {
			c = r.Name
		}
		return c
	}
	return ""
}

// updateTerminate offers "Terminate…" only for a job stuck on the CPU.
func (p *procsWindow) updateTerminate() {
	if p.chosen >= 0 && p.chosen < len(p.rows) && (p.rows[p.chosen].Verdict == procs.VerdictCPU || p.rows[p.chosen].Verdict == procs.VerdictCUDAIdle) && !p.rows[p.chosen].OutsideContainer {
		p.term.Enable()
		return
	}
	p.term.Disable()
}

func (p *procsWindow) terminate() {
	if p.chosen < 0 || p.chosen >= len(p.rows) {
		return
	}
	r := p.rows[p.chosen]
	msg := fmt.Sprintf("Send SIGTERM to PID %d?\n\n%s\n\n%s", r.PID, human.Truncate(cell(r, len(procColumns)-1), 120), r.Reason)
	dialog.ShowConfirm("Terminate process", msg, func(ok bool) {
		if !ok {
			return
		}
		term := p.w.u.d.Terminate
		if term == nil {
			term = terminate
		}
		if err := term(r.PID); err != nil {
			dialog.ShowError(fmt.Errorf("terminating PID %d: %w", r.PID, err), p.win)
		}
	}, p.win)
}
