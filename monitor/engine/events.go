package engine

import (
	"fmt"
	"strings"

	"github.com/gpucanary/gpucanary/monitor"
	"github.com/gpucanary/gpucanary/monitor/gpu"
	"github.com/gpucanary/gpucanary/monitor/pyenv"
)

// The words of the engine's events about environments and the GPU.

// describeTorch is "2.5.1+cu121 (CUDA 12.1)" or "2.10.0 (CPU only)".
// torchNote is "torch 2.5.1+cu121 (CUDA 12.1)", or "no torch": what an
// environment added or gone had ("(torch none)" read as a package named
// none).
func torchNote(p *pyenv.Package) string {
	if p == nil {
		return "no torch"
	}
	return "torch " + describeTorch(p)
}

func describeTorch(p *pyenv.Package) string {
	if p == nil {
		return "none"
	}
	return p.Version + " (" + p.BuildText() + ")"
}

// torchEvent compares torch before and after a change of env and returns
// the event it makes, or nil when torch did not change.
func torchEvent(env string, before, after *pyenv.Package) *monitor.Event {
	switch {
	case before == nil && after == nil:
		return nil
	case before == nil:
		return &monitor.Event{Kind: monitor.KindTorchInstalled, Env: env, After: after,
			Message: fmt.Sprintf("torch %s was installed in %s.", describeTorch(after), env)}
	case after == nil:
		return &monitor.Event{Kind: monitor.KindTorchRemoved, Env: env, Before: before,
			Message: fmt.Sprintf("torch %s was removed from %s.", describeTorch(before), env)}
	case before.Build == pyenv.BuildCUDA && after.Build != pyenv.BuildCUDA:
		return &monitor.Event{Kind: monitor.KindCUDAWheelReplaced, Env: env, Before: before, After: after,
			Message: fmt.Sprintf("torch in %s was replaced: %s → %s.", env, describeTorch(before), describeTorch(after))}
	case before.Version != after.Version || before.Build != after.Build || before.CUDA != after.CUDA || before.ROCm != after.ROCm:
		return &monitor.Event{Kind: monitor.KindTorchChanged, Env: env, Before: before, After: after,
			Message: fmt.Sprintf("torch in %s changed: %s → %s.", env, describeTorch(before), describeTorch(after))}
	}
	return nil
}

// blame adds the culprit to a torch event's message.
func blame(e *monitor.Event, c *monitor.Culprit) {
	if c == nil || (c.Command == "" && c.Installer == "") {
		return
	}
	e.Culprit = c
	e.Message = strings.TrimSuffix(e.Message, ".") + ", by " + c.String() + "."
}

// gpuChange says what changed between two GPU states that a person should
// know, or "".
func gpuChange(a, b gpu.State) string {
	switch {
	case a.HasDriver() && !b.HasDriver():
		msg := "The NVIDIA driver no longer answers"
		if b.Error != "" {
			msg += ": " + b.Error
		}
		return msg + "."
	case !a.HasDriver() && b.HasDriver():
		return fmt.Sprintf("An NVIDIA driver appeared: %s (CUDA %s), %d GPU(s).", b.Driver, b.CUDADriver, len(b.Devices))
	case a.Driver != b.Driver || a.CUDADriver != b.CUDADriver:
		return fmt.Sprintf("The NVIDIA driver changed: %s (CUDA %s) → %s (CUDA %s).", a.Driver, a.CUDADriver, b.Driver, b.CUDADriver)
	}
	had := map[string]string{}
	for _, d := range a.Devices {
		had[deviceID(d)] = d.Name
	}
	for _, d := range b.Devices {
		delete(had, deviceID(d))
	}
	for _, d := range a.Devices {
		if name, lost := had[deviceID(d)]; lost {
			return fmt.Sprintf("GPU lost: %s no longer answers.", name)
		}
	}
	if len(b.Devices) > len(a.Devices) {
		return fmt.Sprintf("%d GPU(s) now answer (were %d).", len(b.Devices), len(a.Devices))
	}
	return ""
}

func deviceID(d gpu.Device) string {
	if d.UUID != "" {
		return d.UUID
	}
	return fmt.Sprint(d.Index, d.Name)
}
