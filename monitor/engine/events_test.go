package engine

import (
	"testing"

	"github.com/gpucanary/gpucanary/monitor"
	"github.com/gpucanary/gpucanary/monitor/gpu"
	"github.com/gpucanary/gpucanary/monitor/pyenv"
)

func TestTorchEvent(t *testing.T) {
	const env = "/p/.venv"
	cu121 := &pyenv.Package{Version: "2.5.1+cu121", Build: pyenv.BuildCUDA, CUDA: "12.1"}
	cu124 := &pyenv.Package{Version: "2.5.1+cu124", Build: pyenv.BuildCUDA, CUDA: "12.4"}
	cpu := &pyenv.Package{Version: "2.5.1+cpu", Build: pyenv.BuildCPU}
	rocm := &pyenv.Package{Version: "2.5.1+rocm6.2", Build: pyenv.BuildROCm, ROCm: "6.2"}
	newer := &pyenv.Package{Version: "2.6.0+cu124", Build: pyenv.BuildCUDA, CUDA: "12.4"}
	tests := []struct {
		name          string
		before, after *pyenv.Package
		kind          monitor.Kind // "" for no event
		message       string
	}{
		{"no torch before or after", nil, nil, "", ""},
		{"the same torch", cu121, &pyenv.Package{Version: "2.5.1+cu121", Build: pyenv.BuildCUDA, CUDA: "12.1", Installer: "uv"}, "", ""},
		{"installed", nil, cu121, monitor.KindTorchInstalled, "torch 2.5.1+cu121 (CUDA 12.1) was installed in /p/.venv."},
		{"removed", cpu, nil, monitor.KindTorchRemoved, "torch 2.5.1+cpu (CPU only) was removed from /p/.venv."},
		{"CUDA replaced by CPU", cu121, cpu, monitor.KindCUDAWheelReplaced, "torch in /p/.venv was replaced: 2.5.1+cu121 (CUDA 12.1) → 2.5.1+cpu (CPU only)."},
		{"CUDA replaced by ROCm", cu121, rocm, monitor.KindCUDAWheelReplaced, "torch in /p/.venv was replaced: 2.5.1+cu121 (CUDA 12.1) → 2.5.1+rocm6.2 (ROCm 6.2)."},
		{"another CUDA", cu121, cu124, monitor.KindTorchChanged, "torch in /p/.venv changed: 2.5.1+cu121 (CUDA 12.1) → 2.5.1+cu124 (CUDA 12.4)."},
		{"a newer version", cu124, newer, monitor.KindTorchChanged, "torch in /p/.venv changed: 2.5.1+cu124 (CUDA 12.4) → 2.6.0+cu124 (CUDA 12.4)."},
		{"CPU to CUDA", cpu, cu121, monitor.KindTorchChanged, "torch in /p/.venv changed: 2.5.1+cpu (CPU only) → 2.5.1+cu121 (CUDA 12.1)."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ev := torchEvent(env, tt.before, tt.after)
			if tt.kind == "" {
				if ev != nil {
					t.Fatalf("torchEvent = %+v, want none", ev)
				}
				return
			}
			if ev == nil || ev.Kind != tt.kind || ev.Message != tt.message || ev.Env != env || ev.Before != tt.before || ev.After != tt.after {
				t.Fatalf("torchEvent = %+v, want %s %q", ev, tt.kind, tt.message)
			}
		})
	}
}

func TestBlame(t *testing.T) {
	tests := []struct {
		name    string
		culprit *monitor.Culprit
		want    string
	}{
		{"unknown", nil, "torch changed."},
		{"empty", &monitor.Culprit{}, "torch changed."},
		{"the INSTALLER file", &monitor.Culprit{Installer: "uv"}, "torch changed, by uv."},
		{"the process", &monitor.Culprit{Installer: "pip", PID: 42, Command: "pip install torch"}, "torch changed, by `pip install torch` (PID 42)."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ev := &monitor.Event{Message: "torch changed."}
			blame(ev, tt.culprit)
			if ev.Message != tt.want {
				t.Errorf("message = %q, want %q", ev.Message, tt.want)
			}
		})
	}
}

func TestGPUChange(t *testing.T) {
	a100 := gpu.Device{Index: 0, Name: "A100", UUID: "GPU-a"}
	h100 := gpu.Device{Index: 1, Name: "H100", UUID: "GPU-h"}
	on := func(driver, cuda string, ds ...gpu.Device) gpu.State {
		return gpu.State{Driver: driver, CUDADriver: cuda, Devices: ds}
	}
	tests := []struct {
		name string
		a, b gpu.State
		want string
	}{
		{"nothing changed", on("550", "12.4", a100), on("550", "12.4", a100), ""},
		{"no driver before or after", gpu.State{}, gpu.State{}, ""},
		{"the driver vanished", on("550", "12.4", a100), gpu.State{Error: "NVML_ERROR_DRIVER_NOT_LOADED"}, "The NVIDIA driver no longer answers: NVML_ERROR_DRIVER_NOT_LOADED."},
		{"the driver vanished, no reason", on("550", "12.4", a100), gpu.State{}, "The NVIDIA driver no longer answers."},
		{"a driver appeared", gpu.State{}, on("550", "12.4", a100, h100), "An NVIDIA driver appeared: 550 (CUDA 12.4), 2 GPU(s)."},
		{"the driver changed", on("550", "12.4", a100), on("560", "12.6", a100), "The NVIDIA driver changed: 550 (CUDA 12.4) → 560 (CUDA 12.6)."},
		{"a GPU lost", on("550", "12.4", a100, h100), on("550", "12.4", a100), "GPU lost: H100 no longer answers."},
		{"the first of two lost", on("550", "12.4", a100, h100), on("550", "12.4"), "GPU lost: A100 no longer answers."},
		{"a GPU more", on("550", "12.4", a100), on("550", "12.4", a100, h100), "2 GPU(s) now answer (were 1)."},
		{"a GPU without UUID still itself", on("550", "12.4", gpu.Device{Index: 0, Name: "T4"}), on("550", "12.4", gpu.Device{Index: 0, Name: "T4"}), ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := gpuChange(tt.a, tt.b); got != tt.want {
				t.Errorf("gpuChange = %q, want %q", got, tt.want)
			}
		})
	}
}
