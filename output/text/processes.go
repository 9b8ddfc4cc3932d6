package text

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/gpucanary/gpucanary/monitor"
	"github.com/gpucanary/gpucanary/monitor/gpu"
	"github.com/gpucanary/gpucanary/monitor/human"
	"github.com/gpucanary/gpucanary/monitor/procs"
	"github.com/gpucanary/gpucanary/output/words"
)

// Processes prints the nvitop-like table of `gpucanary ps`: the GPU with
// each device's utilization, temperature, power and memory, then one line
// per process in the order given, its findings (or why it is off the
// GPU) beneath it. With a Width, the table drops its less needed columns
// until a row fits (the command is cut first); without one the command is
// whole.
func (p Printer) Processes(st gpu.State, rows []monitor.Process) {
	p.gpu(st, true)
	if st.WSL {
		p.printf("%s\n", p.paint(dim, "(WSL) "+gpu.WSLNote+"."))
	}
	p.printf("\n")
	if len(rows) == 0 {
		p.printf("%s\n", words.NoWorkloads)
		return
	}
	cols, cmdWidth := tableLayoutOf(p.Width, columnsFor(rows))
	head := make([]string, len(cols))
	for i, c := range cols {
		head[i] = pad(c.head, c.width, c.right)
	}
	p.printf("%s %s\n", safe(strings.Join(head, " ")), "COMMAND")
	now := p.now()
	for _, r := range rows {
		cells := make([]string, len(cols))
		for i, c := range cols {
			fitted := cell(words.Cell(r, c.cell, now, p.Home), c.width)
			if c.cell == words.ColEnv {
				fitted = cellLeft(words.Cell(r, c.cell, now, p.Home), c.width)
			}
			v := pad(string(fitted), c.width, c.right)
			if c.head == "VERDICT" {
				v = string(p.paint(verdictColour(r.Verdict), v))
			}
			cells[i] = v
		}
		command := words.Cell(r, words.ColCommand, now, p.Home)
		if cmdWidth > 0 {
			p.printf("%s %s\n", safe(strings.Join(cells, " ")), cell(command, cmdWidth))
		} else {
			p.printf("%s %s\n", safe(strings.Join(cells, " ")), command) // no terminal width: whole
		}
		for _, f := range r.Findings {
			p.Finding(f, "     ")
		}
		// Why a workload is off the GPU, unless a finding already says it.
		if r.Verdict != procs.VerdictGPU && len(r.Findings) == 0 && r.Reason != "" {
			p.printf("     %s\n", p.paint(dim, r.Reason))
		}
	}
}

// Title is the first line of `ps --watch`: the time of the sample, how
// often it refreshes and, when keys are read, how to quit.
func (p Printer) Title(at time.Time, every time.Duration, keys bool) {
	quit := "Ctrl-C quits"
	if keys {
		quit = "q quits"
	}
	p.printf("%s  %s  every %s · %s\n", p.paint(bold, "gpucanary ps"), at.Local().Format("2006-01-02 15:04:05"), every, quit)
}

// deviceStats is a device's live numbers under its name; "-" is what the
// driver does not say (not supported, asleep), never a made-up zero.
func (p Printer) deviceStats(d gpu.Device) {
	util, temp, power := "-", "-", "-"
	if d.UtilizationGPU != nil {
		util = fmt.Sprintf("%d%%", *d.UtilizationGPU)
	}
	if d.TemperatureC != nil {
		temp = fmt.Sprintf("%d°C", *d.TemperatureC)
	}
	if d.PowerWatts != nil {
		power = fmt.Sprintf("%.0f W", *d.PowerWatts)
		if d.PowerLimitWatts != nil {
			power = fmt.Sprintf("%.0f / %.0f W", *d.PowerWatts, *d.PowerLimitWatts)
		}
	}
	line := fmt.Sprintf("     util %s  temp %s  power %s  mem ", util, temp, power)
	if d.MemoryTotalBytes == 0 {
		p.printf("%s-\n", line)
		return
	}
	amounts := fmt.Sprintf(" %s / %s", human.Bytes(d.MemoryUsedBytes), human.Bytes(d.MemoryTotalBytes))
	barWidth := 30
	if p.Width > 0 {
		// The same for every device: as wide as the widest numbers allow.
		barWidth = min(30, max(4, p.Width-statsWidest))
	}
	p.printf("%s%s%s\n", line, bar(d.MemoryUsedBytes, d.MemoryTotalBytes, barWidth), amounts)
}

// statsWidest is the widest a device's numbers line is without its bar:
// "     util 100%  temp 100°C  power 999 / 999 W  mem [] 999.9 GiB / 999.9 GiB".
const statsWidest = 75

func verdictColour(v procs.Verdict) string {
	switch v {
	case procs.VerdictGPU:
		return green
	case procs.VerdictCPU:
		return red
	case procs.VerdictCUDAIdle, procs.VerdictOrphaned:
		return yellow
	}
	return dim
}

// column is one column of the process table before the command.
type column struct {
	head  string
	width int  // its width when the terminal allows
	min   int  // the narrowest it may be cut to
	right bool // numbers align right
	// drop is the order in which a narrow terminal loses it (1 first); 0
	// is never.
	drop int
	// cell is what it says of a process (words.Cell).
	cell words.Col
}

// Widths of the command column: at least this much is kept on a narrow
// terminal before other columns are dropped. Without a terminal width (a
// pipe, a file, ps -w) it is never cut: a script reading it needs all of it.
const (
	commandMin = 16
	maxDrop    = 6
)

// processColumns are ps's columns, each one of words' process cells.
var processColumns = []column{
	{head: "GPU", width: 4, min: 3, cell: words.ColGPU},
	{head: "PID", width: 7, min: 7, right: true, cell: words.ColPID},
	{head: "USER", width: 9, min: 6, drop: 5, cell: words.ColUser},
	{head: "ENVIRONMENT", width: 22, min: 10, drop: 6, cell: words.ColEnv},
	{head: "GPU-MEM", width: 9, min: 9, right: true, cell: words.ColGPUMemory},
	{head: "SM%", width: 4, min: 4, right: true, drop: 3, cell: words.ColSM},
	// CPU% and RSS are unknown for a process outside this view (another
	// PID namespace): "-", never 0.
	{head: "CPU%", width: 6, min: 6, right: true, cell: words.ColCPU},
	{head: "RSS", width: 9, min: 9, right: true, drop: 1, cell: words.ColRSS},
	{head: "TIME", width: 8, min: 8, right: true, drop: 2, cell: words.ColRuntime},
	{head: "VERDICT", width: 9, min: 9, cell: words.ColVerdict},
}

// containerColumn is the container (or pod) a process runs in, after
// USER; it is shown only when some process runs in one.
var containerColumn = column{head: "CONTAINER", width: 12, min: 8, drop: 4, cell: words.ColContainer}

// columnsFor is the table's columns for rows: processColumns, with
// CONTAINER when any process runs in a container.
func columnsFor(rows []monitor.Process) []column {
	if !slices.ContainsFunc(rows, func(r monitor.Process) bool { return r.Container != nil }) {
		return processColumns
	}
	i := slices.IndexFunc(processColumns, func(c column) bool { return c.head == "USER" }) + 1
	return slices.Insert(slices.Clone(processColumns), i, containerColumn)
}

// tableLayoutOf fits the columns to a terminal width columns wide (0: no
// limit): the command gets what is left; when that is under commandMin,
// the environment and user columns narrow, then columns are dropped in
// their drop order. It returns the columns kept and the command's width,
// 0 (no limit) when width is.
func tableLayoutOf(width int, all []column) ([]column, int) {
	cols := append([]column(nil), all...)
	if width <= 0 {
		return cols, 0
	}
	used := func() int {
		n := 0
		for _, c := range cols {
			n += c.width + 1
		}
		return n
	}
	// The widest narrowable column (the environment) narrows first.
	for i := len(cols) - 1; i >= 0; i-- {
		if over := used() + commandMin - width; over > 0 {
			cols[i].width = max(cols[i].min, cols[i].width-over)
		}
	}
	for order := 1; order <= maxDrop && used()+commandMin > width; order++ {
		if i := slices.IndexFunc(cols, func(c column) bool { return c.drop == order }); i >= 0 {
			cols = slices.Delete(cols, i, i+1)
		}
	}
	// What still does not fit is cut by fit.
	return cols, max(1, width-used())
}

func bar(used, total uint64, width int) string {
	n := int(float64(used) / float64(total) * float64(width))
	n = max(0, min(width, n))
	return fmt.Sprintf("[%s%s]", strings.Repeat("█", n), strings.Repeat("·", width-n))
}
