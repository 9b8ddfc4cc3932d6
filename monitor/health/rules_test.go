package health

import (
	"cmp"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gpucanary/gpucanary/monitor/finding"
	"github.com/gpucanary/gpucanary/monitor/fixplan"
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
	// a100And5090 is issue 16's machine: an A100 and an RTX 5090.
	a100And5090 = gpu.State{Driver: "570.86.10", CUDADriver: "12.8", Devices: []gpu.Device{device("NVIDIA A100-SXM4-40GB", "8.0"), device("NVIDIA GeForce RTX 5090", "12.0")}}
	// a100And5090Asleep: the 5090 is asleep, so NVML gave no compute
	// capability; its name says it.
	a100And5090Asleep = gpu.State{Driver: "570.86.10", CUDADriver: "12.8", Devices: []gpu.Device{device("NVIDIA A100-SXM4-40GB", "8.0"), {Name: "NVIDIA GeForce RTX 5090", Asleep: true}}}
	t4Driver418       = gpu.State{Driver: "418.87.01", CUDADriver: "10.1", Devices: []gpu.Device{device("Tesla T4", "7.5")}}
)

// want is a finding expected by code and severity, with words its message
// or fix must contain.
type want struct {
	code     string
	severity finding.Severity
	message  string
	fix      string
	nofix    bool // no fix command may be shown
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
			want: []want{{code: finding.CodeTorchCPUBuild, severity: finding.SeverityError, message: "CPU-only build, but this machine has an NVIDIA A100",
				fix: "uv pip install --python ENV torch==2.5.1+cu124 --index-url https://download.pytorch.org/whl/cu124"}},
		},
		{
			name: "CPU torch with no GPU is fine", spec: pyenvtest.Spec{Torch: cpu}, gpu: noDriver,
			want: []want{{code: finding.CodeTorchCPUBuild, severity: finding.SeverityInfo, message: "no NVIDIA GPU is present"}},
		},
		{
			// Incident 3: the cu124 wheel's real value is read, and a driver
			// older than its CUDA is caught by range, not string equality.
			name: "PyPI torch with version.py +cu124 on an old driver", gpu: a100Driver470,
			spec: pyenvtest.Spec{Torch: &pyenvtest.Torch{DistVersion: "2.5.1", VersionPy: "2.5.1+cu124", CUDA: "12.4"}},
			want: []want{{code: finding.CodeDriverTooOld, severity: finding.SeverityError, message: "supports CUDA 11.4"}},
		},
		{
			name: "minor-version compatibility is a warning", gpu: a100Driver525,
			spec: pyenvtest.Spec{Torch: &pyenvtest.Torch{DistVersion: "2.5.1+cu124", CUDA: "12.4"}},
			want: []want{{code: finding.CodeDriverTooOld, severity: finding.SeverityWarning, message: "minor-version compatibility"}},
		},
		{
			// Incident 4: a Blackwell card with torch 2.5.
			name: "Blackwell with torch 2.5", gpu: rtx5090, spec: pyenvtest.Spec{Torch: cuda121},
			want: []want{{code: finding.CodeGPUArchUnsupported, severity: finding.SeverityError, message: "sm_120",
				fix: "torch==2.7.1+cu128 --index-url https://download.pytorch.org/whl/cu128"}},
		},
		{
			name: "torchvision from another release", gpu: a100Driver550,
			spec: pyenvtest.Spec{Torch: cuda121, Vision: &pyenvtest.Companion{Version: "0.19.1+cu121", CUDA: "12.1"}},
			want: []want{{code: finding.CodeTorchFamilyMismatch, severity: finding.SeverityError, message: "needs torchvision 0.20.1",
				fix: "torch==2.5.1+cu124 torchvision==0.20.1+cu124"}},
		},
		{
			name: "CPU torchvision beside CUDA torch", gpu: a100Driver550,
			spec: pyenvtest.Spec{Torch: cuda121, Vision: &pyenvtest.Companion{Version: "0.20.1+cpu"}},
			want: []want{{code: finding.CodeTorchFamilyMismatch, severity: finding.SeverityError, message: "(CPU only) does not match torch 2.5.1+cu121 (CUDA 12.1)"}},
		},
		{
			name: "bitsandbytes 0.45 without the library for torch's CUDA", gpu: a100Driver550,
			spec: pyenvtest.Spec{Torch: cuda121, BNB: &pyenvtest.BNB{Version: "0.45.0", CUDALibs: []string{"118", "124"}}},
			want: []want{{code: finding.CodeBNBCUDAMismatch, severity: finding.SeverityError, message: "libbitsandbytes_cuda121"}},
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
			want: []want{{code: finding.CodeLlamaCPPCPUBuild, severity: finding.SeverityError, message: "every layer runs on the CPU",
				fix: "ENV/bin/python -m pip install --force-reinstall --no-deps llama-cpp-python==0.3.2 --index-url https://abetlen.github.io/llama-cpp-python/whl/cu124"}},
		},
		{
			name: "llama-cpp-python with CUDA", gpu: a100Driver550,
			spec: pyenvtest.Spec{Llama: &pyenvtest.Llama{Version: "0.3.2", Backends: []string{"cuda", "cpu"}}},
		},
		{
			// Incident 5 (Windows layout): a Windows PyPI torch is CPU-only.
			name: "Windows venv with a PyPI torch", gpu: a100Driver550,
			spec: pyenvtest.Spec{Layout: pyenv.LayoutWindows, Torch: &pyenvtest.Torch{DistVersion: "2.5.1", Installer: "pip"}},
			want: []want{{code: finding.CodeTorchCPUBuild, severity: finding.SeverityError, message: "CPU-only build"}},
		},
		{
			// Issue 14: a release the tables do not know is a warning that
			// says it could not be checked, never silence and never an error.
			// Issue 29: only when nothing could be judged, here because no
			// release in the tables has its CUDA tag.
			name: "torch newer than the table could not be checked", gpu: a100Driver550,
			spec: pyenvtest.Spec{Torch: &pyenvtest.Torch{DistVersion: "9.1.0+cu120", CUDA: "12.0"}},
			want: []want{{code: finding.CodeTorchUnknownRelease, severity: finding.SeverityWarning, message: "could not be checked against this machine's GPUs (NVIDIA A100-SXM4-40GB (sm_80)): torch 9.1.0+cu120 is newer than GPU Canary's release table"}},
		},
		{
			// Issue 29: a newer release with a known tag is judged by that
			// tag's newest arch list: an info that says so, and a clean
			// verdict on an A100.
			name: "torch newer than the table is judged by inference", gpu: a100Driver550,
			spec: pyenvtest.Spec{Torch: &pyenvtest.Torch{DistVersion: "9.1.0+cu124", CUDA: "12.4"}},
			want: []want{{code: finding.CodeTorchUnknownRelease, severity: finding.SeverityInfo, message: "judged by the arch list of torch 2.6 cu124, the newest release in the table with cu124, and by the driver floor of CUDA 12.4 (inferred)", nofix: true}},
		},
		{
			// Issue 14: torch 1.x is judged too; 1.13 has no PTX and no
			// sm_120, and only torch 2.7 with cu128 runs on a 5090.
			name: "torch 1.13.1+cu117 on an RTX 5090", gpu: rtx5090,
			spec: pyenvtest.Spec{Torch: &pyenvtest.Torch{DistVersion: "1.13.1+cu117", CUDA: "11.7", Installer: "pip"}},
			want: []want{{code: finding.CodeGPUArchUnsupported, severity: finding.SeverityError,
				message: "has no kernels for the NVIDIA GeForce RTX 5090 (Blackwell, sm_120)",
				fix:     "torch==2.7.1+cu128 --index-url https://download.pytorch.org/whl/cu128"}},
		},
		{
			name: "the upgrade is said in the message", gpu: rtx5090,
			spec: pyenvtest.Spec{Torch: &pyenvtest.Torch{DistVersion: "1.13.1+cu117", CUDA: "11.7", Installer: "pip"}, Vision: &pyenvtest.Companion{Version: "0.14.1+cu117", CUDA: "11.7"}},
			want: []want{{code: finding.CodeGPUArchUnsupported, severity: finding.SeverityError,
				message: "the oldest release that does is torch 2.7.1 (cu128), so the fix upgrades torch and with it torchvision 0.14.1 → 0.22.1",
				fix:     "torch==2.7.1+cu128 torchvision==0.22.1+cu128"}},
		},
		{
			// Issue 16: on an A100 and an RTX 5090, cu124 runs on the A100
			// only; reinstalling cu124 over cu124 would change nothing.
			name: "A100 and RTX 5090 with cu124", gpu: a100And5090,
			spec: pyenvtest.Spec{Torch: &pyenvtest.Torch{DistVersion: "2.5.1+cu124", CUDA: "12.4", Installer: "pip"}},
			want: []want{{code: finding.CodeGPUArchUnsupported, severity: finding.SeverityError,
				message: "every GPU on this machine counts",
				fix:     "torch==2.7.1+cu128"}},
		},
		{
			name: "A100 and an asleep RTX 5090 with cu124", gpu: a100And5090Asleep,
			spec: pyenvtest.Spec{Torch: &pyenvtest.Torch{DistVersion: "2.5.1+cu124", CUDA: "12.4", Installer: "pip"}},
			want: []want{{code: finding.CodeGPUArchUnsupported, severity: finding.SeverityError,
				message: "the NVIDIA GeForce RTX 5090 (Blackwell, sm_120, asleep)",
				fix:     "torch==2.7.1+cu128"}},
		},
		{
			name: "a CPU torch on a mixed machine is upgraded, not reinstalled", gpu: a100And5090,
			spec: pyenvtest.Spec{Torch: &pyenvtest.Torch{DistVersion: "2.5.1+cpu", Installer: "pip"}},
			want: []want{{code: finding.CodeTorchCPUBuild, severity: finding.SeverityError, message: "so the fix upgrades torch", fix: "torch==2.7.1+cu128"}},
		},
		{
			// Issue 14: a ROCm torch beside an A100 runs on the CPU.
			name: "ROCm torch on an NVIDIA machine", gpu: a100Driver550,
			spec: pyenvtest.Spec{Torch: &pyenvtest.Torch{DistVersion: "2.5.1+rocm6.2", HIP: "6.2.41133-dd7f95766", Installer: "pip"}},
			want: []want{{code: finding.CodeTorchNonNVIDIA, severity: finding.SeverityError, message: "is a ROCm (AMD GPU) build, but this machine has an NVIDIA A100",
				fix: "torch==2.5.1+cu124 --index-url https://download.pytorch.org/whl/cu124"}},
		},
		{
			// The driver (CUDA 12.4) supports 2.7's cu126 only through
			// minor-version compatibility, which a rule warns about; cu118
			// it supports in full.
			name: "XPU torch on an NVIDIA machine", gpu: a100Driver550,
			spec: pyenvtest.Spec{Torch: &pyenvtest.Torch{DistVersion: "2.7.1+xpu", XPU: "20250101", Installer: "pip"}},
			want: []want{{code: finding.CodeTorchNonNVIDIA, severity: finding.SeverityError, message: "is an XPU (Intel GPU) build", fix: "torch==2.7.1+cu118"}},
		},
		{
			name: "ROCm torch without an NVIDIA GPU", gpu: noDriver,
			spec: pyenvtest.Spec{Torch: &pyenvtest.Torch{DistVersion: "2.5.1+rocm6.2", HIP: "6.2.41133-dd7f95766"}},
			want: []want{{code: finding.CodeTorchNonNVIDIA, severity: finding.SeverityInfo, message: "GPU Canary checks NVIDIA GPUs only"}},
		},
		{
			// torch 1.4 reaches an A100 only through compute_37 PTX.
			name: "PTX only is a warning", gpu: a100Driver550,
			spec: pyenvtest.Spec{Torch: &pyenvtest.Torch{DistVersion: "1.4.0", CUDA: "10.1", LegacyVersionPy: true}},
			want: []want{{code: finding.CodeGPUArchUnsupported, severity: finding.SeverityWarning, message: "only PTX the driver compiles on first use",
				fix: "torch==1.9.1+cu111"}},
		},
		{
			// Nothing from 2.9 on runs on a CUDA 12.4 driver in full: the
			// CPU build's fix is cu126, and the message says what it lacks.
			name: "a CPU torch whose every CUDA build needs a newer driver", gpu: a100Driver550,
			spec: pyenvtest.Spec{Torch: &pyenvtest.Torch{DistVersion: "2.9.1+cpu", Installer: "pip"}},
			want: []want{{code: finding.CodeTorchCPUBuild, severity: finding.SeverityError, message: "The best build of torch 2.9.1 for this machine, cu126, still has faults: cu126 runs on this driver only through minor-version compatibility",
				fix: "torch==2.9.1+cu126"}},
		},
		{
			// cu126 is the best 2.9 build for this driver already: no
			// reinstall clears the warning, so none is shown (the driver is
			// the fix).
			name: "minor-version compatibility with no better build", gpu: a100Driver550,
			spec: pyenvtest.Spec{Torch: &pyenvtest.Torch{DistVersion: "2.9.1+cu126", CUDA: "12.6", Installer: "pip"}},
			want: []want{{code: finding.CodeDriverTooOld, severity: finding.SeverityWarning, message: "560.28.03 on Linux", nofix: true}},
		},
		{
			// Before CUDA 11 there is no minor-version compatibility.
			name: "cu102 on a CUDA 10.1 driver", gpu: t4Driver418,
			spec: pyenvtest.Spec{Torch: &pyenvtest.Torch{DistVersion: "1.7.1", CUDA: "10.2", LegacyVersionPy: true}},
			want: []want{{code: finding.CodeDriverTooOld, severity: finding.SeverityError, message: "CUDA 10.2 builds need a driver for CUDA 10.2 or newer"}},
		},
		{
			name: "a source build could not be checked", gpu: rtx5090,
			spec: pyenvtest.Spec{Torch: &pyenvtest.Torch{DistVersion: "2.5.0a0+git32f585d", CUDA: "12.4"}},
			want: []want{{code: finding.CodeTorchBuildUnchecked, severity: finding.SeverityWarning, message: "could not be checked against this machine's GPUs"}},
		},
		{
			name: "a variant pytorch.org does not have could not be checked",
			gpu:  gpu.State{Driver: "570.86.10", CUDADriver: "12.8", Devices: []gpu.Device{device("NVIDIA A100-SXM4-40GB", "8.0")}},
			spec: pyenvtest.Spec{Manager: "conda", Torch: &pyenvtest.Torch{DistVersion: "2.5.1", CUDA: "12.6"}, CondaTorchBuild: "cuda126_generic_py311_h0000000_201"},
			want: []want{{code: finding.CodeTorchBuildUnchecked, severity: finding.SeverityWarning, message: "are not in GPU Canary's table"}},
		},
		{
			// An asleep GPU is not asked its compute capability, and this
			// name is not in the table: 2.8.0+cu128 has no sm_61 code, so
			// whether it runs there is unknown, and silence would read
			// as OK.
			name: "an asleep GPU whose compute capability is not known", gpu: gpu.State{Driver: "570.133.07", CUDADriver: "12.8",
				Devices: []gpu.Device{{Name: "NVIDIA GeForce MX150", Asleep: true}}},
			spec: pyenvtest.Spec{Torch: &pyenvtest.Torch{DistVersion: "2.8.0+cu128", CUDA: "12.8", Installer: "pip"}},
			want: []want{{code: finding.CodeTorchBuildUnchecked, severity: finding.SeverityWarning, message: "could not be checked against NVIDIA GeForce MX150 (compute capability not known, asleep)", nofix: true}},
		},
		{
			name: "conda torch gets no pip fix", gpu: a100Driver550,
			spec: pyenvtest.Spec{Manager: "conda", Torch: &pyenvtest.Torch{DistVersion: "2.5.1", CUDA: ""}, CondaTorchBuild: "cpu_py311h0000000_0"},
			want: []want{{code: finding.CodeTorchCPUBuild, severity: finding.SeverityError, message: "CPU-only build"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { checkRules(t, tt.spec, tt.gpu, tt.env, tt.want) })
	}
}

// onPath finds every program under its own name.
func onPath(name string) (string, error) { return name, nil }

// checkRules writes spec as an environment, evaluates the rules on it for
// the GPU g and the variables env, and wants exactly the findings want.
func checkRules(t *testing.T, spec pyenvtest.Spec, g gpu.State, vars map[string]string, wants []want) {
	t.Helper()
	root := filepath.Join(t.TempDir(), "env")
	if err := pyenvtest.Write(root, spec); err != nil {
		t.Fatal(err)
	}
	env, err := pyenv.Inspect(root)
	if err != nil {
		t.Fatal(err)
	}
	// The planner's advice from the official index: the wanted fixes are
	// the commands a user is shown.
	// uv is found, wherever the tests run (the case without it is its own).
	got := CheckEnv(env, g, Options{Getenv: func(k string) string { return vars[k] }, Advice: fixplan.Advice{LookPath: onPath}})
	if len(got) != len(wants) {
		t.Fatalf("got %d findings, want %d:\n%s", len(got), len(wants), dump(got))
	}
	for i, w := range wants {
		f := got[i]
		if f.Code != w.code || f.Severity != w.severity {
			t.Errorf("finding %d = %s/%s, want %s/%s\n%s", i, f.Code, f.Severity, w.code, w.severity, dump(got))
		}
		if !strings.Contains(f.Message, w.message) {
			t.Errorf("message %q lacks %q", f.Message, w.message)
		}
		wantFix := strings.ReplaceAll(w.fix, "ENV", env.Path)
		if !strings.Contains(f.Fix, wantFix) || (w.nofix && f.Fix != "") {
			t.Errorf("fix %q, want %q (none: %v)", f.Fix, wantFix, w.nofix)
		}
		if f.Env != env.Path {
			t.Errorf("finding env = %q", f.Env)
		}
	}
}

// TestReinstallIsThePlanners: the findings a reinstall fixes show the
// command the planner writes (fixplan.Advice, the same for every one of
// them), and fixes that are not a reinstall stay.
func TestReinstallIsThePlanners(t *testing.T) {
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
	for _, tc := range []struct {
		name   string
		advice fixplan.Advice
	}{
		{"the official index", fixplan.Advice{}},
		{"a mirror", fixplan.Advice{IndexBase: "https://mirror.example/whl", LlamaIndexBase: "https://mirror.example/llama/"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			planned := tc.advice.Fix(env, rtx5090, finding.CodeTorchCPUBuild)
			if planned == "" || !strings.Contains(planned, env.Path) {
				t.Fatalf("the planner wrote %q", planned)
			}
			want := map[string]string{
				finding.CodeGPUArchUnsupported: planned, finding.CodeTorchFamilyMismatch: planned,
				// Driver 12.8: cu125 is newer, but its wheels begin at 0.3.22.
				finding.CodeLlamaCPPCPUBuild: env.Interpreter() + " -m pip install --force-reinstall --no-deps llama-cpp-python==0.3.2 --index-url " +
					cmp.Or(strings.TrimSuffix(tc.advice.LlamaIndexBase, "/"), "https://abetlen.github.io/llama-cpp-python/whl") + "/cu124"}
			got := map[string]string{}
			for _, f := range CheckEnv(env, rtx5090, Options{Advice: tc.advice}) {
				got[f.Code] = f.Fix
			}
			for code, fix := range want {
				if g, ok := got[code]; !ok || g != fix {
					t.Errorf("%s: fix %q, want %q (findings: %v)", code, g, fix, got)
				}
			}
		})
	}
}

func TestCheckGPU(t *testing.T) {
	if fs := CheckGPU(a100Driver550); len(fs) != 0 {
		t.Errorf("findings with a driver: %v", fs)
	}
	fs := CheckGPU(noDriver)
	if len(fs) != 1 || fs[0].Code != finding.CodeNoGPUDriver || !strings.Contains(fs[0].Message, "NVML not found") {
		t.Errorf("no driver: %v", fs)
	}
}

func dump(fs []finding.Finding) string {
	var b strings.Builder
	for _, f := range fs {
		b.WriteString("  " + f.Code + " " + string(f.Severity) + ": " + f.Message + " | fix: " + f.Fix + "\n")
	}
	return b.String()
}

func TestFixedByReinstall(t *testing.T) {
	for code, want := range map[string]bool{finding.CodeTorchCPUBuild: true, finding.CodeGPUArchUnsupported: true, finding.CodeLlamaCPPCPUBuild: false, finding.CodeBNBCUDAMismatch: false, finding.CodeNoGPUDriver: false} {
		if got := finding.FixedByReinstall(code); got != want {
			t.Errorf("FixedByReinstall(%s) = %v", code, got)
		}
	}
}
