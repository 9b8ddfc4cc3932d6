package monitor

import (
	"fmt"
	"strings"
	"time"

	"github.com/gpucanary/gpucanary/monitor/health"
	"github.com/gpucanary/gpucanary/monitor/pyenv"
)

// Event kinds (stable: `watch --json` prints them and scripts match them).
const (
	KindCUDAWheelReplaced = "CUDA_WHEEL_REPLACED"
	KindTorchChanged      = "TORCH_CHANGED"
	KindTorchRemoved      = "TORCH_REMOVED"
	KindTorchInstalled    = "TORCH_INSTALLED"
	KindEnvAdded          = "ENV_ADDED"
	KindEnvRemoved        = "ENV_REMOVED"
	KindJobOnCPU          = "JOB_ON_CPU"
	KindJobOnCPUCleared   = "JOB_ON_CPU_CLEARED"
	KindFindingRaised     = "FINDING_RAISED"
	KindFindingCleared    = "FINDING_CLEARED"
	KindGPUStateChanged   = "GPU_STATE_CHANGED"
)

// Event is something that happened, for a person and for a script.
type Event struct {
	Time time.Time `json:"time"`
	Kind string    `json:"kind"`
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
	Finding *health.Finding `json:"finding,omitempty"`
	// PID is the process a job event is about.
	PID int `json:"pid,omitempty"`
	// Notify is the notification policy's decision: show this to the user
	// now. The tray and headless mode both follow it.
	Notify bool `json:"notify"`
	// Offline is true when the change happened while GPU Canary was not
	// running and was found on start.
	Offline bool `json:"offline,omitempty"`
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
		cmd := c.Command
		if r := []rune(cmd); len(r) > 60 {
			cmd = string(r[:59]) + "…"
		}
		return fmt.Sprintf("`%s` (PID %d)", cmd, c.PID)
	}
	return c.Installer
}

// describeTorch is "2.5.1+cu121 (CUDA 12.1)" or "2.10.0 (CPU only)".
func describeTorch(p *pyenv.Package) string {
	if p == nil {
		return "none"
	}
	return p.Version + " (" + p.BuildText() + ")"
}

// torchEvent compares torch before and after a change of env and returns
// the event it makes, or nil when torch did not change.
func torchEvent(env string, before, after *pyenv.Package) *Event {
	switch {
	case before == nil && after == nil:
		return nil
	case before == nil:
		return &Event{Kind: KindTorchInstalled, Env: env, After: after,
			Message: fmt.Sprintf("torch %s was installed in %s.", describeTorch(after), env)}
	case after == nil:
		return &Event{Kind: KindTorchRemoved, Env: env, Before: before,
			Message: fmt.Sprintf("torch %s was removed from %s.", describeTorch(before), env)}
	case before.Build == pyenv.BuildCUDA && after.Build != pyenv.BuildCUDA:
		return &Event{Kind: KindCUDAWheelReplaced, Env: env, Before: before, After: after,
			Message: fmt.Sprintf("torch in %s was replaced: %s → %s.", env, describeTorch(before), describeTorch(after))}
	case before.Version != after.Version || before.Build != after.Build || before.CUDA != after.CUDA || before.ROCm != after.ROCm:
		return &Event{Kind: KindTorchChanged, Env: env, Before: before, After: after,
			Message: fmt.Sprintf("torch in %s changed: %s → %s.", env, describeTorch(before), describeTorch(after))}
	}
	return nil
}

// blame adds the culprit to a torch event's message.
func blame(e *Event, c *Culprit) {
	if c == nil || (c.Command == "" && c.Installer == "") {
		return
	}
	e.Culprit = c
	e.Message = strings.TrimSuffix(e.Message, ".") + ", by " + c.String() + "."
}
