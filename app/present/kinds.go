package present

import (
	"github.com/gpucanary/gpucanary/monitor"
	"github.com/gpucanary/gpucanary/monitor/finding"
)

// kindNames are the event kinds in a person's words, in the order the
// Settings window lists them. The codes stay what scripts and the
// settings file use (`watch --json`, `notify = [...]`); a person reads
// these names wherever a kind is shown. notify marks the kinds a user may
// turn notifications on or off for (the engine's policy never notifies
// the others; they are shown in the history only).
var kindNames = []struct {
	kind   monitor.Kind
	name   string
	notify bool
}{
	{monitor.KindCUDAWheelReplaced, "torch lost its CUDA build", true},
	{monitor.KindTorchChanged, "torch changed version", true},
	{monitor.KindTorchRemoved, "torch was removed", true},
	{monitor.KindJobOnCPU, "A GPU job runs on the CPU", true},
	{monitor.KindJobOnCPUCleared, "The job left the CPU", true},
	{monitor.KindFindingRaised, "A problem was found", true},
	{monitor.KindFindingCleared, "A problem was resolved", true},
	{monitor.KindGPUStateChanged, "The GPU or driver changed", true},
	// The GPU health codes: their findings' raise and clear (issue 44).
	{finding.CodeGPUThrottled, "The GPU slows down under load", true},
	{finding.CodeGPULost, "A GPU stopped answering", true},
	{finding.CodeGPUXid, "A GPU reported an Xid error", true},
	{finding.CodePCIeDegraded, "A GPU's PCIe link is degraded", true},
	{finding.CodeGPUMemoryErrors, "A GPU's memory needs a reset", true},
	{finding.CodeVRAMSpill, "Training spills out of VRAM", true},
	{finding.CodeDriverReset, "The display driver was reset", true},
	{monitor.KindJobEnded, "A GPU job ended", true},
	{finding.CodeJobStalled, "A GPU job stalled", true},
	{finding.CodeJobSpinning, "A GPU job spins without progress", true},
	{monitor.KindTorchInstalled, "torch was installed", false},
	{monitor.KindEnvAdded, "Environment added", false},
	{monitor.KindEnvRemoved, "Environment removed", false},
	{monitor.KindGuardChanged, "A guard was changed by hand", false},
}

// KindName is kind in a person's words; a kind this table does not know
// (a newer engine's) shows as its code.
func KindName(kind monitor.Kind) string {
	for _, k := range kindNames {
		if k.kind == kind {
			return k.name
		}
	}
	return string(kind)
}

// NotifyKinds are the kinds a user may turn notifications on or off for,
// in the order Settings lists them.
func NotifyKinds() []monitor.Kind {
	var out []monitor.Kind
	for _, k := range kindNames {
		if k.notify {
			out = append(out, k.kind)
		}
	}
	return out
}
