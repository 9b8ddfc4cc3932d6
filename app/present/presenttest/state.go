// Package presenttest holds the fixed engine state the tray's and the
// windows' tests render, so both show the same machine.
package presenttest

import (
	"time"

	"github.com/gpucanary/gpucanary/monitor"
	"github.com/gpucanary/gpucanary/monitor/finding"
	"github.com/gpucanary/gpucanary/monitor/gpu"
	"github.com/gpucanary/gpucanary/monitor/procs"
	"github.com/gpucanary/gpucanary/monitor/pyenv"
)

// State is a fixed state: a simulated A100, a healthy and a broken
// environment, a job on the GPU and one stuck on the CPU.
func State() monitor.State {
	u32 := func(v uint32) *uint32 { return &v }
	f64 := func(v float64) *float64 { return &v }
	mem, none := uint64(9<<30), uint64(0)
	start := time.Now().Add(-75 * time.Minute)
	good := &pyenv.Env{Path: "/home/ada/work/vision/.venv", Python: "3.11", Layout: pyenv.LayoutPOSIX, Installer: "uv", Kind: "venv",
		Packages: map[string]*pyenv.Package{"torch": {Version: "2.5.1+cu121", Build: pyenv.BuildCUDA, CUDA: "12.1", Installer: "uv"},
			"torchvision": {Version: "0.20.1+cu121", Build: pyenv.BuildCUDA, CUDA: "12.1"}}}
	bad := &pyenv.Env{Path: "/home/ada/work/llm/.venv", Python: "3.12", Layout: pyenv.LayoutPOSIX, Installer: "uv", Kind: "venv",
		Packages: map[string]*pyenv.Package{"torch": {Version: "2.10.0", Build: pyenv.BuildCPU, Installer: "uv",
			Evidence: []pyenv.Evidence{{File: "/home/ada/work/llm/.venv/lib/python3.12/site-packages/torch/version.py", Says: "cuda, hip and xpu are None"},
				{File: "/home/ada/work/llm/.venv/lib/python3.12/site-packages/torch-2.10.0.dist-info/INSTALLER", Says: `INSTALLER "uv\n"`}}}}}
	return monitor.State{Started: true,
		GPU: gpu.State{Simulated: true, Source: "sim:a100.json", Driver: "550.54.15", CUDADriver: "12.4", Devices: []gpu.Device{{
			Index: 0, Name: "NVIDIA A100-SXM4-40GB", UUID: "GPU-0000", ComputeCapability: "8.0", Architecture: "Ampere",
			MemoryTotalBytes: 40 << 30, MemoryUsedBytes: mem, UtilizationGPU: u32(87), TemperatureC: u32(61), PowerWatts: f64(250), PowerLimitWatts: f64(400)}}},
		Envs: []monitor.EnvReport{
			{Env: good, Verdict: monitor.VerdictOK, Findings: []finding.Finding{}},
			{Env: bad, Verdict: monitor.VerdictError, Findings: []finding.Finding{{Code: finding.CodeTorchCPUBuild, Severity: finding.SeverityError,
				Message: "torch 2.10.0 is a CPU-only build, but this machine has an NVIDIA A100-SXM4-40GB.",
				Fix:     "uv pip install --python /home/ada/work/llm/.venv --reinstall --no-deps torch==2.10.0+cu128 --index-url https://download.pytorch.org/whl/cu128"}}},
		},
		Processes: []monitor.Process{
			{Row: procs.Row{Proc: procs.Proc{PID: 4242, User: "ada", Name: "python", Cmdline: []string{"python", "train.py", "--epochs", "10"}, CPUPercent: 101, RSSBytes: 6 << 30, StartTime: start, EnvPath: good.Path},
				GPUs: []int{0}, GPUMemoryBytes: &mem, SMPercent: u32(87), Verdict: procs.VerdictGPU, Reason: "holds 9.0 GiB on GPU 0"}},
			{Row: procs.Row{Proc: procs.Proc{PID: 5151, User: "ada", Name: "python", Cmdline: []string{"python", "serve.py"}, CPUPercent: 380, RSSBytes: 12 << 30, StartTime: start, EnvPath: bad.Path},
				GPUs: []int{}, GPUMemoryBytes: &none, Verdict: procs.VerdictCPU, JobOnCPU: true,
				Reason: "busy on the CPU for 25s: torch is a CPU-only build (libtorch_cpu without libtorch_cuda), although an NVIDIA GPU is present"}},
		},
	}
}
