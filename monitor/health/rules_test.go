package health

import (
	"path/filepath"
	"strings"
	"testing"

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
	a100Driver525 = gpu.State{Driver: "525.60.13", CUDADriver: "12.0", Devices: []gpu.Device{device("NVIDIA A100-SXM4-40GB", "8.0")}}
	a100Driver470 = gpu.State{Driver: "470.82.01", CUDADriver: "11.4", Devices: []gpu.Device{device("NVIDIA A100-SXM4-40GB", "8.0")}}
)

// want is a finding expected by code and severity, with words its message
// or fix must contain.
type want struct {
	code     string
	severity Severity
	message  string
	fix      string
}

func TestRules(t *testing.T) {
	cuda121 := &pyenvtest.Torch{DistVersion: "2.5.1+cu121", CUDA: "12.1", Installer: "pip"}
	cpu := &pyenvtest.Torch{DistVersion: "2.5.1+cpu", Installer: "uv"}
	tests := []struct {
		name string
		spec pyenvtest.Spec
		gpu  gpu.State
		env  map[string]string
		want []want
	}{
		{name: "healthy CUDA torch", spec: pyenvtest.Spec{Torch: cuda121}, gpu: a100Driver550},
		{
			// Incident 1: uv replaced the CUDA build with a CPU one.
			name: "uv put a CPU torch in place", spec: pyenvtest.Spec{Manager: "uv", Torch: cpu}, gpu: a100Driver550,
			want: []want{{code: CodeTorchCPUBuild, severity: SeverityError, message: "CPU-only build, but this machine has an NVIDIA A100",
				fix: "reinstall in ENV on driver 550.54.15"}},
		},
		{
			name: "CPU torch with no GPU is fine", spec: pyenvtest.Spec{Torch: cpu}, gpu: noDriver,
			want: []want{{code: CodeTorchCPUBuild, severity: SeverityInfo, message: "no NVIDIA GPU is present"}},
		},
		{
			// Incident 3: the cu124 wheel's real value is read, and a driver
			// older than its CUDA is caught by range, not string equality.
			name: "PyPI torch with version.py +cu124 on an old driver", gpu: a100Driver470,
			spec: pyenvtest.Spec{Torch: &pyenvtest.Torch{DistVersion: "2.5.1", VersionPy: "2.5.1+cu124", CUDA: "12.4"}},
			want: []want{{code: CodeDriverTooOld, severity: SeverityError, message: "supports CUDA 11.4"}},
		},
		{
			name: "minor-version compatibility is a warning", gpu: a100Driver525,
			spec: pyenvtest.Spec{Torch: &pyenvtest.Torch{DistVersion: "2.5.1+cu124", CUDA: "12.4"}},
			want: []want{{code: CodeDriverTooOld, severity: SeverityWarning, message: "minor-version compatibility"}},
		},
		{
			// Incident 4: a Blackwell card with torch 2.5.
			name: "Blackwell with torch 2.5", gpu: rtx5090, spec: pyenvtest.Spec{Torch: cuda121},
			want: []want{{code: CodeGPUArchUnsupported, severity: SeverityError, message: "sm_120",
				fix: "reinstall in ENV on driver 570.86.10"}},
		},
		{
			name: "torchvision from another release", gpu: a100Driver550,
			spec: pyenvtest.Spec{Torch: cuda121, Vision: &pyenvtest.Companion{Version: "0.19.1+cu121", CUDA: "12.1"}},
			want: []want{{code: CodeTorchFamilyMismatch, severity: SeverityError, message: "needs torchvision 0.20.1",
				fix: "reinstall in ENV"}},
		},
		{
			name: "CPU torchvision beside CUDA torch", gpu: a100Driver550,
			spec: pyenvtest.Spec{Torch: cuda121, Vision: &pyenvtest.Companion{Version: "0.20.1+cpu"}},
			want: []want{{code: CodeTorchFamilyMismatch, severity: SeverityError, message: "(CPU only) does not match torch 2.5.1+cu121 (CUDA 12.1)"}},
		},
		{
			name: "bitsandbytes 0.45 without the library for torch's CUDA", gpu: a100Driver550,
			spec: pyenvtest.Spec{Torch: cuda121, BNB: &pyenvtest.BNB{Version: "0.45.0", CUDALibs: []string{"118", "124"}}},
			want: []want{{code: CodeBNBCUDAMismatch, severity: SeverityError, message: "libbitsandbytes_cuda121"}},
		},
		{
			name: "BNB_CUDA_VERSION points at a library that exists", gpu: a100Driver550,
			spec: pyenvtest.Spec{Torch: cuda121, BNB: &pyenvtest.BNB{Version: "0.45.0", CUDALibs: []string{"118", "124"}}},
			env:  map[string]string{"BNB_CUDA_VERSION": "124"},
		},
		{
			name: "bitsandbytes 0.50 falls back within the major", gpu: a100Driver550,
			spec: pyenvtest.Spec{Torch: &pyenvtest.Torch{DistVersion: "2.5.1+cu124", CUDA: "12.4"}, BNB: &pyenvtest.BNB{Version: "0.50.0", CUDALibs: []string{"118", "121"}}},
		},
		{
			// Incident 2: llama.cpp on the CPU with a GPU present.
			name: "llama-cpp-python without CUDA", gpu: a100Driver550,
			spec: pyenvtest.Spec{Llama: &pyenvtest.Llama{Version: "0.3.2", Backends: []string{"cpu"}}},
			want: []want{{code: CodeLlamaCPPCPUBuild, severity: SeverityError, message: "every layer runs on the CPU", fix: "-DGGML_CUDA=on"}},
		},
		{
			name: "llama-cpp-python with CUDA", gpu: a100Driver550,
			spec: pyenvtest.Spec{Llama: &pyenvtest.Llama{Version: "0.3.2", Backends: []string{"cuda", "cpu"}}},
		},
		{
			// Incident 5 (Windows layout): a Windows PyPI torch is CPU-only.
			name: "Windows venv with a PyPI torch", gpu: a100Driver550,
			spec: pyenvtest.Spec{Layout: pyenv.LayoutWindows, Torch: &pyenvtest.Torch{DistVersion: "2.5.1", Installer: "pip"}},
			want: []want{{code: CodeTorchCPUBuild, severity: SeverityError, message: "CPU-only build"}},
		},
		{
			name: "torch newer than the table is advice, not an error", gpu: a100Driver550,
			spec: pyenvtest.Spec{Torch: &pyenvtest.Torch{DistVersion: "9.1.0+cu124", CUDA: "12.4"}},
			want: []want{{code: CodeTorchUnknownRelease, severity: SeverityInfo, message: "newer than GPU Canary's release table"}},
		},
		{
			name: "conda torch gets no pip fix", gpu: a100Driver550,
			spec: pyenvtest.Spec{Manager: "conda", Torch: &pyenvtest.Torch{DistVersion: "2.5.1", CUDA: ""}, CondaTorchBuild: "cpu_py311h0000000_0"},
			want: []want{{code: CodeTorchCPUBuild, severity: SeverityError, message: "CPU-only build"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := filepath.Join(t.TempDir(), "env")
			if err := pyenvtest.Write(root, tt.spec); err != nil {
				t.Fatal(err)
			}
			env, err := pyenv.Inspect(root)
			if err != nil {
				t.Fatal(err)
			}
			got := CheckEnv(env, tt.gpu, Options{Getenv: func(k string) string { return tt.env[k] }, Reinstall: reinstallStub})
			if len(got) != len(tt.want) {
				t.Fatalf("got %d findings, want %d:\n%s", len(got), len(tt.want), dump(got))
			}
			for i, w := range tt.want {
				f := got[i]
				if f.Code != w.code || f.Severity != w.severity {
					t.Errorf("finding %d = %s/%s, want %s/%s\n%s", i, f.Code, f.Severity, w.code, w.severity, dump(got))
				}
				if !strings.Contains(f.Message, w.message) {
					t.Errorf("message %q lacks %q", f.Message, w.message)
				}
				wantFix := strings.ReplaceAll(w.fix, "ENV", env.Path)
				if !strings.Contains(f.Fix, wantFix) {
					t.Errorf("fix %q lacks %q", f.Fix, wantFix)
				}
				if f.Env != env.Path {
					t.Errorf("finding env = %q", f.Env)
				}
			}
		})
	}
}

// reinstallStub stands in for fix's planner (health cannot import it): a
// command that names the environment and the driver it was asked about.
func reinstallStub(env *pyenv.Env, g gpu.State) string {
	return "reinstall in " + env.Path + " on driver " + g.Driver
}

// TestReinstallIsInjected: the findings a reinstall fixes show the command
// the injected builder writes, asked once per environment; without a
// builder they propose none, and fixes that are not a reinstall stay.
func TestReinstallIsInjected(t *testing.T) {
	root := filepath.Join(t.TempDir(), "env")
	spec := pyenvtest.Spec{Torch: &pyenvtest.Torch{DistVersion: "2.5.1+cu121", CUDA: "12.1", Installer: "pip"},
		Vision: &pyenvtest.Companion{Version: "0.20.1+cpu"}, Llama: &pyenvtest.Llama{Version: "0.3.2", Backends: []string{"cpu"}}}
	if err := pyenvtest.Write(root, spec); err != nil {
		t.Fatal(err)
	}
	env, err := pyenv.Inspect(root)
	if err != nil {
		t.Fatal(err)
	}
	calls := 0
	counted := func(e *pyenv.Env, g gpu.State) string { calls++; return reinstallStub(e, g) }
	for _, tc := range []struct {
		name      string
		reinstall func(*pyenv.Env, gpu.State) string
		want      map[string]string // code -> fix
	}{
		{"with a builder", counted, map[string]string{
			CodeGPUArchUnsupported: "reinstall in " + env.Path + " on driver 570.86.10", CodeTorchFamilyMismatch: "reinstall in " + env.Path + " on driver 570.86.10",
			CodeLlamaCPPCPUBuild: `CMAKE_ARGS="-DGGML_CUDA=on" ` + env.Interpreter() + " -m pip install --force-reinstall --no-cache-dir --no-deps llama-cpp-python==0.3.2"}},
		{"without one", nil, map[string]string{
			CodeGPUArchUnsupported: "", CodeTorchFamilyMismatch: "",
			CodeLlamaCPPCPUBuild: `CMAKE_ARGS="-DGGML_CUDA=on" ` + env.Interpreter() + " -m pip install --force-reinstall --no-cache-dir --no-deps llama-cpp-python==0.3.2"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := map[string]string{}
			for _, f := range CheckEnv(env, rtx5090, Options{Reinstall: tc.reinstall}) {
				got[f.Code] = f.Fix
			}
			for code, fix := range tc.want {
				if g, ok := got[code]; !ok || g != fix {
					t.Errorf("%s: fix %q, want %q (findings: %v)", code, g, fix, got)
				}
			}
		})
	}
	if calls != 1 {
		t.Errorf("the builder was asked %d times for one environment, want once", calls)
	}
}

func TestCheckGPU(t *testing.T) {
	if fs := CheckGPU(a100Driver550); len(fs) != 0 {
		t.Errorf("findings with a driver: %v", fs)
	}
	fs := CheckGPU(noDriver)
	if len(fs) != 1 || fs[0].Code != CodeNoGPUDriver || !strings.Contains(fs[0].Message, "NVML not found") {
		t.Errorf("no driver: %v", fs)
	}
}

func dump(fs []Finding) string {
	var b strings.Builder
	for _, f := range fs {
		b.WriteString("  " + f.Code + " " + string(f.Severity) + ": " + f.Message + " | fix: " + f.Fix + "\n")
	}
	return b.String()
}

func TestFixedByReinstall(t *testing.T) {
	for code, want := range map[string]bool{CodeTorchCPUBuild: true, CodeGPUArchUnsupported: true, CodeLlamaCPPCPUBuild: false, CodeBNBCUDAMismatch: false, CodeNoGPUDriver: false} {
		if got := FixedByReinstall(code); got != want {
			t.Errorf("FixedByReinstall(%s) = %v", code, got)
		}
	}
}
