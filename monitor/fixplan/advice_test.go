package fixplan

import (
	"errors"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/gpucanary/gpucanary/monitor/finding"
	"github.com/gpucanary/gpucanary/monitor/gpu"
	"github.com/gpucanary/gpucanary/monitor/pyenv"
	"github.com/gpucanary/gpucanary/monitor/pyenv/pyenvtest"
)

func device(name, cc string) gpu.Device {
	return gpu.Device{Name: name, ComputeCapability: cc, MemoryTotalBytes: 40 << 30}
}

var (
	a100Driver550 = gpu.State{Driver: "550.54.15", CUDADriver: "12.4", Devices: []gpu.Device{device("NVIDIA A100-SXM4-40GB", "8.0")}}
	rtx5090       = gpu.State{Driver: "570.86.10", CUDADriver: "12.8", Devices: []gpu.Device{device("NVIDIA GeForce RTX 5090", "12.0")}}
	noDriver      = gpu.State{Source: "none", Error: "NVML not found"}
)

// onPath finds every program under its own name.
func onPath(name string) (string, error) { return name, nil }

// TestAdviceReinstall is the fix command the findings show, for the
// incidents whose fix is a reinstall: the plan's command, "" when no plan
// can be carried out. ENV stands for the environment's path.
func TestAdviceReinstall(t *testing.T) {
	cuda121 := &pyenvtest.Torch{DistVersion: "2.5.1+cu121", CUDA: "12.1", Installer: "pip"}
	cpu := &pyenvtest.Torch{DistVersion: "2.5.1+cpu", Installer: "uv"}
	cuda124 := func(edit func(*pyenvtest.Torch)) *pyenvtest.Torch {
		t := &pyenvtest.Torch{DistVersion: "2.5.1+cu124", CUDA: "12.4", Installer: "pip"}
		edit(t)
		return t
	}
	halfDeleted := func(t *pyenvtest.Torch) { t.Libs = []string{"libtorch_cpu.so"} }
	noDeps := func(t *pyenvtest.Torch) { t.NoDeps = true }
	noUV := func(string) (string, error) { return "", errors.New("not found") }
	for _, tc := range []struct {
		name   string
		spec   pyenvtest.Spec
		gpu    gpu.State
		advice Advice
		want   string
		x86    bool // the runtime's marker names x86_64: elsewhere torch requires none
	}{
		{
			name: "uv put a CPU torch in place", spec: pyenvtest.Spec{Manager: "uv", Torch: cpu}, gpu: a100Driver550,
			want: "uv pip install --python ENV torch==2.5.1+cu124 --index-url https://download.pytorch.org/whl/cu124",
		},
		{
			name: "a mirror names its index", spec: pyenvtest.Spec{Manager: "uv", Torch: cpu}, gpu: a100Driver550,
			advice: Advice{IndexBase: "https://mirror.example.org/pytorch/"},
			want:   "uv pip install --python ENV torch==2.5.1+cu124 --index-url https://mirror.example.org/pytorch/cu124",
		},
		{
			name: "no uv on PATH: the host's pip aims at the environment", spec: pyenvtest.Spec{Manager: "uv", Torch: cpu}, gpu: a100Driver550,
			advice: Advice{LookPath: noUV},
			want:   "python3 -m pip --python ENV/bin/python install torch==2.5.1+cu124 --index-url https://download.pytorch.org/whl/cu124",
		},
		{
			name: "Blackwell with torch 2.5 gets the oldest release that runs", spec: pyenvtest.Spec{Torch: cuda121}, gpu: rtx5090,
			want: "ENV/bin/python -m pip install torch==2.7.1+cu128 --index-url https://download.pytorch.org/whl/cu128",
		},
		{
			name: "torchvision from another release is paired again", gpu: a100Driver550,
			spec: pyenvtest.Spec{Torch: cuda121, Vision: &pyenvtest.Companion{Version: "0.19.1+cu121", CUDA: "12.1"}},
			want: "ENV/bin/python -m pip install torch==2.5.1+cu124 torchvision==0.20.1+cu124 --index-url https://download.pytorch.org/whl/cu124",
		},
		{
			name: "the same torch half deleted: forced, without dependencies", spec: pyenvtest.Spec{Torch: cuda124(halfDeleted)}, gpu: a100Driver550,
			want: "ENV/bin/python -m pip install --force-reinstall --no-deps torch==2.5.1+cu124 --index-url https://download.pytorch.org/whl/cu124",
		},
		{
			name: "the same torch half deleted, uv's", spec: pyenvtest.Spec{Manager: "uv", Torch: cuda124(halfDeleted)}, gpu: a100Driver550,
			want: "uv pip install --python ENV --reinstall --no-deps torch==2.5.1+cu124 --index-url https://download.pytorch.org/whl/cu124",
		},
		{
			name: "the same torch without its runtime: the same pins, unforced", spec: pyenvtest.Spec{Torch: cuda124(noDeps)}, gpu: a100Driver550,
			want: "ENV/bin/python -m pip install torch==2.5.1+cu124 --index-url https://download.pytorch.org/whl/cu124", x86: true,
		},
		{
			name: "the same torch half deleted and without its runtime: forced, with dependencies", gpu: a100Driver550,
			spec: pyenvtest.Spec{Torch: cuda124(func(t *pyenvtest.Torch) { halfDeleted(t); noDeps(t) })},
			want: "ENV/bin/python -m pip install --force-reinstall torch==2.5.1+cu124 --index-url https://download.pytorch.org/whl/cu124", x86: true,
		},
		{
			name: "the same torch half deleted and without its runtime, uv's", gpu: a100Driver550,
			spec: pyenvtest.Spec{Manager: "uv", Torch: cuda124(func(t *pyenvtest.Torch) { halfDeleted(t); noDeps(t) })},
			want: "uv pip install --python ENV --reinstall torch==2.5.1+cu124 --index-url https://download.pytorch.org/whl/cu124", x86: true,
		},
		{
			name: "conda's torch gets no pip command", gpu: a100Driver550,
			spec: pyenvtest.Spec{Manager: "conda", Torch: &pyenvtest.Torch{DistVersion: "2.5.1", CUDA: ""}, CondaTorchBuild: "cpu_py311h0000000_0"},
		},
		{name: "no driver: no variant can be chosen", spec: pyenvtest.Spec{Torch: cpu}, gpu: noDriver},
		{name: "no torch", spec: pyenvtest.Spec{Llama: &pyenvtest.Llama{Version: "0.3.2", Backends: []string{"cpu"}}}, gpu: a100Driver550},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.x86 && runtime.GOARCH != "amd64" {
				t.Skip("torch's runtime requirements name x86_64")
			}
			root := filepath.Join(t.TempDir(), "env")
			if err := pyenvtest.Write(root, tc.spec); err != nil {
				t.Fatal(err)
			}
			env, err := pyenv.Inspect(root)
			if err != nil {
				t.Fatal(err)
			}
			if tc.advice.LookPath == nil {
				tc.advice.LookPath = onPath // uv and python3 are found where they are named
			}
			got := tc.advice.Fix(env, tc.gpu, finding.CodeTorchCPUBuild)
			if want := strings.ReplaceAll(tc.want, "ENV", env.Path); got != want {
				t.Errorf("Reinstall =\n  %q\nwant\n  %q", got, want)
			}
		})
	}
}
