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

// Command is a process's command line as a person scans it
// (human.CommandLine): the program by its name ("python", not
// "~/work/proj/.venv/bin/python": the environment has a column of its
// own), then its arguments, a long path among them shortened from the
// left ("…/vision/scripts/train.py"). A process with no command line is
// its name.
func Command(r monitor.Process, home string) string {
	return human.CommandLine(r.Cmdline, r.Name, home)
}
