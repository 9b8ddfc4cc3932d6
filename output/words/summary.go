package words

import (
	"fmt"
	"strings"

	"github.com/gpucanary/gpucanary/monitor"
)

// Summary is the one count of a machine every summary says: its GPUs,
// its jobs (CountJobs), its environments and how many are broken or
// warned about (Verdicts), and whether the search for them was cut
// short. Summarize makes it, and only Summarize, so the tray's tooltip,
// the windows, the evidence bundle and check's last line cannot count
// differently; its two phrasings (String, Checked) are the same numbers
// laid out for a status line and for the end of a listing.
type Summary struct {
	// GPUs is how many devices the driver lists; NoDriver is true when
	// no NVIDIA driver answers (the line then says so, not a count).
	GPUs             int
	NoDriver         bool
	Simulated, WSL   bool
	Processes        int // rows read, jobs or not
	Jobs             Jobs
	Envs             int
	Broken, Warnings int
	Incomplete       bool // the search for environments was cut short
}

// Summarize counts a state. A one-shot check is summarized as a state of
// its own (GPU, Envs, Processes if it read them, and SearchStopped from
// SearchStopped(r)), so that it says what the engine would.
func Summarize(s monitor.State) Summary {
	sum := Summary{
		GPUs: len(s.GPU.Devices), NoDriver: !s.GPU.HasDriver(), Simulated: s.GPU.Simulated, WSL: s.GPU.WSL,
		Processes: len(s.Processes), Jobs: CountJobs(s.Processes),
		Envs: len(s.Envs), Incomplete: s.SearchStopped != "",
	}
	sum.Broken, sum.Warnings = Verdicts(s.Envs)
	return sum
}

// SearchStopped is why r's search for environments was cut short, ""
// when it was not: its own reason, or a plain one when it gave none,
// since a search cut short is never silent.
func SearchStopped(r monitor.CheckResult) string {
	if r.Complete {
		return ""
	}
	if r.SearchStopped == "" {
		return "the search was cut short"
	}
	return r.SearchStopped
}

// SearchIncomplete is the sentence a command says under its list when the
// search for environments was cut short (stopped, from SearchStopped):
// why, that what it did not reach is not in the list (shown: "listed",
// "watched"), and how to reach it with command ("check", "watch").
func SearchIncomplete(stopped, command, shown string) string {
	return "Search incomplete: " + stopped + ". Environments it did not reach are not " + shown +
		": pass a path (gpucanary " + command + " PATH) or add the folder as a root in the settings."
}

// String is the status line a person reads in the tray's tooltip and
// menu, above the environments window and in the evidence bundle, short
// enough for a tooltip: "2 GPUs · 3 jobs on GPU · 4 envs · 1 env broken ·
// search incomplete". The jobs are said once a process was read, and the
// stuck and orphaned ones only when there are some.
func (s Summary) String() string {
	var parts []string
	switch {
	case s.NoDriver:
		parts = append(parts, NoDriver)
	default:
		parts = append(parts, Count(s.GPUs, "GPU", "GPUs"))
	}
	if s.Simulated {
		parts[0] += " (simulated)"
	}
	if s.WSL {
		parts[0] += " (WSL)"
	}
	if s.Jobs.OnGPU > 0 || s.Processes > 0 {
		parts = append(parts, Count(s.Jobs.OnGPU, "job on GPU", "jobs on GPU"))
	}
	if s.Jobs.Stuck > 0 {
		parts = append(parts, Count(s.Jobs.Stuck, "job on CPU", "jobs on CPU"))
	}
	if s.Jobs.Orphaned > 0 {
		parts = append(parts, Count(s.Jobs.Orphaned, "orphaned PID", "orphaned PIDs"))
	}
	parts = append(parts, Count(s.Envs, "env", "envs"))
	if s.Broken > 0 {
		parts = append(parts, Count(s.Broken, "env broken", "envs broken"))
	}
	if s.Warnings > 0 {
		parts = append(parts, Count(s.Warnings, "warning", "warnings"))
	}
	if s.Incomplete {
		parts = append(parts, "search incomplete")
	}
	return strings.Join(parts, " · ")
}

// Checked is check's last line, under the environments it listed (the
// GPU and the search's end are said in lines of their own there): "4
// environments checked: 3 with errors, 0 with warnings." Both counts are
// said, 0 included, so a script or a person reads the same place.
func (s Summary) Checked() string {
	return fmt.Sprintf("%s checked: %d with errors, %d with warnings.", Count(s.Envs, "environment", "environments"), s.Broken, s.Warnings)
}
