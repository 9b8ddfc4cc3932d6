package monitor

import (
	"fmt"
	"time"

	"github.com/gpucanary/gpucanary/monitor/finding"
	"github.com/gpucanary/gpucanary/monitor/human"
	"github.com/gpucanary/gpucanary/monitor/jobend"
	"github.com/gpucanary/gpucanary/monitor/pyenv"
)

// Kind is what an event is about (stable: `watch --json` prints it and
// scripts match it; the settings name kinds to notify about).
type Kind string

// Event kinds.
const (
	KindCUDAWheelReplaced Kind = "CUDA_WHEEL_REPLACED"
	KindTorchChanged      Kind = "TORCH_CHANGED"
	KindTorchRemoved      Kind = "TORCH_REMOVED"
	KindTorchInstalled    Kind = "TORCH_INSTALLED"
	KindEnvAdded          Kind = "ENV_ADDED"
	KindEnvRemoved        Kind = "ENV_REMOVED"
	KindJobOnCPU          Kind = "JOB_ON_CPU"
	KindJobOnCPUCleared   Kind = "JOB_ON_CPU_CLEARED"
	KindFindingRaised     Kind = "FINDING_RAISED"
	KindFindingCleared    Kind = "FINDING_CLEARED"
	KindGPUStateChanged   Kind = "GPU_STATE_CHANGED"
	// A repair (`gpucanary fix`, the tray's Reinstall) started, and how it
	// ended: succeeded (verified), failed, or interrupted (cancelled,
	// timed out, or GPU Canary stopped during it). Read from its journal,
	// so a repair run while no engine ran is recorded at the next start.
	KindRepairStarted     Kind = "REPAIR_STARTED"
	KindRepairSucceeded   Kind = "REPAIR_SUCCEEDED"
	KindRepairFailed      Kind = "REPAIR_FAILED"
	KindRepairInterrupted Kind = "REPAIR_INTERRUPTED"
	// KindGuardChanged: a file of the guard `gpucanary guard` set was
	// removed or edited by hand, so installers may replace torch again.
	// Shown in history only: the user did it.
	KindGuardChanged Kind = "GUARD_CHANGED"
	// KindJobEnded: a GPU job that ran at least job_min_runtime ended
	// (or any process one asked to be told of: Monitor.WatchEnd),
	// finished or crashed with its reason (Event.Job).
	KindJobEnded Kind = "JOB_ENDED"
)

// Kinds converts kind names (from the settings file) to Kinds.
func Kinds(names []string) []Kind {
	out := make([]Kind, len(names))
	for i, n := range names {
		out[i] = Kind(n)
	}
	return out
}

// Event is something that happened, for a person and for a script.
type Event struct {
	Time time.Time `json:"time"`
	Kind Kind      `json:"kind"`
	Env  string    `json:"env,omitempty"`
	// Before and After are the package (torch) before and after the change.
	Before *pyenv.Package `json:"before,omitempty"`
	After  *pyenv.Package `json:"after,omitempty"`
	// Message says what happened in a person's words.
	Message string `json:"message"`
	// Fix is the command that repairs it, where one exists.
	Fix string `json:"fix,omitempty"`
	// Culprit is who made the change, where it can be known.
	Culprit *Culprit `json:"culprit,omitempty"`
	// Finding is the finding raised or cleared.
	Finding *finding.Finding `json:"finding,omitempty"`
	// PID is the process a job event is about.
	PID int `json:"pid,omitempty"`
	// Notify is the notification policy's decision: show this to the user
	// now. The tray and headless mode both follow it.
	Notify bool `json:"notify"`
	// Offline is true when the change happened while GPU Canary was not
	// running and was found on start.
	Offline bool `json:"offline,omitempty"`
	// Repair is the repair a REPAIR_* event is about.
	Repair *Repair `json:"repair,omitempty"`
	// Job is the job a JOB_ENDED event is about.
	Job *JobEnd `json:"job,omitempty"`
}

// JobEnd is a job that ended: who it was, what it did with the GPU, and
// how it ended (jobend.End: finished, crashed or unknown, and why).
type JobEnd struct {
	jobend.End
	// PID is the job's first process (the launcher's first worker, the
	// parent of DataLoader workers); PIDs are all its processes seen.
	PID  int   `json:"pid"`
	PIDs []int `json:"pids,omitempty"`
	// Command is its command line, redacted of secrets.
	Command []string `json:"command,omitempty"`
	Env     string   `json:"env,omitempty"`
	// Started is when it started; RunSeconds how long it ran.
	Started    time.Time `json:"started,omitzero"`
	RunSeconds float64   `json:"run_seconds"`
	// PeakGPUMemoryBytes and MeanGPUPercent are what was seen of it at
	// the polls while it ran; null when the driver never said.
	PeakGPUMemoryBytes *uint64  `json:"peak_gpu_memory_bytes"`
	MeanGPUPercent     *float64 `json:"mean_gpu_percent"`
	// Asked is true when someone asked to be told of its end (which
	// then is told whatever its run time).
	Asked bool `json:"asked,omitempty"`
}

// Repair is one run of a repair, as its journal recorded it.
type Repair struct {
	// Journal is the journal file, which holds the installer's whole
	// output.
	Journal string `json:"journal"`
	// Command is the installer's command line.
	Command string `json:"command,omitempty"`
	// Before and After are the versions of torch and its companions
	// before and after the run (After once it ended).
	Before map[string]string `json:"before,omitempty"`
	After  map[string]string `json:"after,omitempty"`
	// Why says what went wrong, and Cause quotes the installer's own
	// error lines, when it failed.
	Why   string   `json:"why,omitempty"`
	Cause []string `json:"cause,omitempty"`
	// Rollback puts back what was there before; set only when the run
	// changed something.
	Rollback string `json:"rollback,omitempty"`
	// PID is the GPU Canary process that ran the repair.
	PID int `json:"pid,omitempty"`
}

// Culprit is who changed an environment.
type Culprit struct {
	// Installer is what the new dist-info's INSTALLER file says ("uv", "pip").
	Installer string `json:"installer,omitempty"`
	// PID and Command are the installing process caught at the first file
	// event; Command is redacted of secrets.
	PID     int    `json:"pid,omitempty"`
	Command string `json:"command,omitempty"`
}

// String is "`uv run train.py` (PID 4242)", or "uv" when only the
// INSTALLER file is known.
func (c *Culprit) String() string {
	if c == nil {
		return ""
	}
	if c.Command != "" {
		// Paths are shortened by their leading folders, never cut
		// in a name (human.Shorten).
		return fmt.Sprintf("`%s` (PID %d)", human.Shorten(c.Command, 60), c.PID)
	}
	return c.Installer
}
