package words

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/gpucanary/gpucanary/monitor"
	"github.com/gpucanary/gpucanary/monitor/human"
)

// Col is one thing said about a GPU process, a column of `gpucanary ps`'s
// table and of the processes window (each names its own header and
// width).
type Col int

// The process cells.
const (
	ColGPU Col = iota
	ColPID
	ColUser
	ColContainer
	ColEnv
	ColGPUMemory
	ColSM
	ColCPU
	ColRSS
	ColRuntime
	ColVerdict
	ColCommand
)

// Cell is what r's column c says, the same in the terminal and the
// window: "-" for what is not known (no GPU, no environment, a process
// outside this view's CPU %, RSS and runtime: unknown, never 0), "n/a"
// for GPU memory the driver does not report per process. home is written
// as ~ in the environment and the command; now is when the runtime is
// counted to.
func Cell(r monitor.Process, c Col, now time.Time, home string) string {
	switch c {
	case ColGPU:
		if len(r.GPUs) == 0 {
			return "-"
		}
		g := make([]string, len(r.GPUs))
		for i, n := range r.GPUs {
			g[i] = strconv.Itoa(n)
		}
		return strings.Join(g, ",")
	case ColPID:
		return strconv.Itoa(r.PID)
	case ColUser:
		return r.User
	case ColContainer:
		if r.Container == nil {
			return "-"
		}
		return r.Container.Short()
	case ColEnv:
		if r.EnvPath == "" {
			return "-"
		}
		return Short(home, r.EnvPath)
	case ColGPUMemory:
		if r.GPUMemoryBytes == nil {
			return "n/a"
		}
		return human.Bytes(*r.GPUMemoryBytes)
	case ColSM:
		if r.SMPercent == nil {
			return "-"
		}
		return fmt.Sprint(*r.SMPercent)
	case ColCPU:
		if !r.Measured() {
			return "-"
		}
		return fmt.Sprintf("%.1f", r.CPUPercent)
	case ColRSS:
		if !r.Measured() {
			return "-"
		}
		return human.Bytes(r.RSSBytes)
	case ColRuntime:
		if r.StartTime.IsZero() {
			return "-"
		}
		return human.Duration(now.Sub(r.StartTime))
	case ColVerdict:
		return string(r.Verdict)
	case ColCommand:
		return Command(r, home)
	}
	return ""
}

// argPathMax is the longest a path among a command's arguments is shown
// before it is shortened from the left.
const argPathMax = 32

// Command is a process's command line as a person scans it: the program
// by its name ("python", not "~/work/proj/.venv/bin/python": the
// environment has a column of its own), then its arguments, a long path
// among them shortened from the left to its last folders
// ("…/vision/scripts/train.py"), so that the script and its arguments
// are what a narrow column shows. A process with no command line is its
// name.
func Command(r monitor.Process, home string) string {
	if len(r.Cmdline) == 0 {
		return r.Name
	}
	var args []string
	for _, a := range r.Cmdline {
		if a = strings.Join(strings.Fields(a), " "); a != "" {
			args = append(args, a)
		}
	}
	if len(args) == 0 {
		return r.Name
	}
	out := make([]string, len(args))
	out[0] = args[0][strings.LastIndexAny(args[0], `/\`)+1:] // a Windows path's too, on any system
	if out[0] == "" {
		out[0] = args[0]
	}
	for i, a := range args[1:] {
		out[i+1] = shortArg(TildeIn(home, a))
	}
	return strings.Join(out, " ")
}

// shortArg shortens a path argument longer than argPathMax from the left
// at a separator: "…/vision/scripts/train.py". Other arguments, and an
// option's value (--data=/very/long/path), are left as they are.
func shortArg(a string) string {
	if len(a) <= argPathMax || strings.HasPrefix(a, "-") || !strings.ContainsAny(a, `/\`) {
		return a
	}
	cut := len(a) - argPathMax
	for i := cut; i < len(a); i++ {
		if a[i] == '/' || a[i] == '\\' {
			return "…" + a[i:]
		}
	}
	return "…" + a[cut:]
}
