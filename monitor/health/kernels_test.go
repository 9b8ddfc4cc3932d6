package health

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/gpucanary/gpucanary/monitor/fatbin/fatbintest"
	"github.com/gpucanary/gpucanary/monitor/finding"
	"github.com/gpucanary/gpucanary/monitor/gpu"
	"github.com/gpucanary/gpucanary/monitor/pyenv"
	"github.com/gpucanary/gpucanary/monitor/pyenv/pyenvtest"
)

// The GPUs of issue 28's verdicts, each alone on its machine.
var (
	gtx1080Ti = gpu.State{Driver: "580.65.06", CUDADriver: "13.0", Devices: []gpu.Device{device("NVIDIA GeForce GTX 1080 Ti", "6.1")}}
	rtx3060   = gpu.State{Driver: "580.65.06", CUDADriver: "13.0", Devices: []gpu.Device{device("NVIDIA GeForce RTX 3060", "8.6")}}
	a100      = gpu.State{Driver: "580.65.06", CUDADriver: "13.0", Devices: []gpu.Device{device("NVIDIA A100-SXM4-80GB", "8.0")}}
	rtx5090CU = gpu.State{Driver: "580.65.06", CUDADriver: "13.0", Devices: []gpu.Device{device("NVIDIA GeForce RTX 5090", "12.0")}}
)

// realEnv writes an environment whose library rel is the real carved
// libggml-cuda.so (or ggml-cuda.dll) and reads it.
func realEnv(t *testing.T, spec pyenvtest.Spec, rel, carved string) (*pyenv.Env, string) {
	t.Helper()
	root := filepath.Join(t.TempDir(), "venv")
	if err := pyenvtest.Write(root, spec); err != nil {
		t.Fatal(err)
	}
	path, err := pyenvtest.PutRealLibrary(root, spec, rel, fatbintest.MustLoad(carved))
	if err != nil {
		t.Fatal(err)
	}
	env, err := pyenv.Inspect(root)
	if err != nil {
		t.Fatal(err)
	}
	return env, path
}

// TestCUDAKernelsMissing: llama-cpp-python with the real libggml-cuda.so
// (sm_86 sm_89 sm_120 sm_121, PTX 75 80 90), Linux and Windows layouts.
func TestCUDAKernelsMissing(t *testing.T) {
	llama := &pyenvtest.Llama{Version: "0.3.16", Backends: []string{"cuda"}}
	for _, layout := range []struct {
		spec        pyenvtest.Spec
		rel, carved string
	}{
		{pyenvtest.Spec{Llama: llama}, "llama_cpp/lib/libggml-cuda.so", fatbintest.LinuxGGML},
		{pyenvtest.Spec{Layout: pyenv.LayoutWindows, Llama: llama}, "llama_cpp/lib/ggml-cuda.dll", fatbintest.WindowsGGML},
	} {
		env, path := realEnv(t, layout.spec, layout.rel, layout.carved)
		for _, tc := range []struct {
			name string
			g    gpu.State
			sev  finding.Severity // "" for no finding
			says []string
		}{
			{"GTX 1080 Ti", gtx1080Ti, finding.SeverityError, []string{"NVIDIA GeForce GTX 1080 Ti (sm_61)", path, "llama-cpp-python 0.3.16", fatbintest.GGMLKernels, "no kernel image is available"}},
			{"RTX 3060", rtx3060, "", nil},
			{"A100", a100, finding.SeverityWarning, []string{"NVIDIA A100-SXM4-80GB (sm_80)", "compute_80 PTX", "just in time", path}},
			{"RTX 5090", rtx5090CU, "", nil},
			{"no driver", noDriver, "", nil},
			{"1080 Ti and A100", gpu.State{Driver: "580.65.06", CUDADriver: "13.0", Devices: append(gtx1080Ti.Devices, a100.Devices...)},
				finding.SeverityError, []string{"GTX 1080 Ti (sm_61)", "On NVIDIA A100-SXM4-80GB (sm_80) it runs only through compute_80 PTX"}},
		} {
			t.Run(filepath.Base(layout.rel)+" "+tc.name, func(t *testing.T) {
				var got []finding.Finding
				for _, f := range CheckEnv(env, tc.g, Options{}) {
					if f.Code == finding.CodeCUDAKernelsMissing {
						got = append(got, f)
					}
				}
				if tc.sev == "" {
					if len(got) != 0 {
						t.Fatalf("findings %+v, want none", got)
					}
					return
				}
				if len(got) != 1 || got[0].Severity != tc.sev {
					t.Fatalf("findings %+v, want one %s", got, tc.sev)
				}
				for _, s := range tc.says {
					if !strings.Contains(got[0].Message, s) {
						t.Errorf("message %q does not say %q", got[0].Message, s)
					}
				}
			})
		}
	}
}

// TestSourceTorchJudgedFromItsLibrary: a source-built torch the table
// cannot judge (2.6.0a0+gitabc) whose libtorch_cuda.so is the real
// library is judged from it: no kernels on a GTX 1080 Ti, runnable and
// not "unchecked" on an RTX 5090.
func TestSourceTorchJudgedFromItsLibrary(t *testing.T) {
	spec := pyenvtest.Spec{Torch: &pyenvtest.Torch{DistVersion: "2.6.0a0+gitabc", CUDA: "12.4", Installer: "pip\n", Requires: []string{"filelock"}}}
	env, path := realEnv(t, spec, "torch/lib/libtorch_cuda.so", fatbintest.LinuxGGML)
	codes := func(fs []finding.Finding) map[string]finding.Finding {
		m := map[string]finding.Finding{}
		for _, f := range fs {
			m[f.Code] = f
		}
		return m
	}
	// Without the library read, the table could not judge it.
	withoutLib := *env
	withoutLib.CUDALibs = nil
	if _, ok := codes(CheckEnv(&withoutLib, rtx5090CU, Options{}))[finding.CodeTorchBuildUnchecked]; !ok {
		t.Fatal("a source build was judged by the table")
	}

	on1080 := codes(CheckEnv(env, gtx1080Ti, Options{}))
	f, ok := on1080[finding.CodeGPUArchUnsupported]
	if !ok || f.Severity != finding.SeverityError || !strings.Contains(f.Message, "sm_61") || !strings.Contains(f.Message, "libtorch_cuda.so") {
		t.Errorf("on a GTX 1080 Ti: %+v", on1080)
	}
	if len(f.Evidence) == 0 || f.Evidence[0].File != path {
		t.Errorf("evidence %+v does not name %s", f.Evidence, path)
	}
	if _, ok := on1080[finding.CodeCUDAKernelsMissing]; ok {
		t.Error("torch's library was judged twice")
	}
	on5090 := codes(CheckEnv(env, rtx5090CU, Options{}))
	for _, code := range []string{finding.CodeTorchBuildUnchecked, finding.CodeTorchUnknownRelease, finding.CodeGPUArchUnsupported} {
		if f, ok := on5090[code]; ok {
			t.Errorf("on an RTX 5090: %s %s", code, f.Message)
		}
	}
	if f, ok := codes(CheckEnv(env, a100, Options{}))[finding.CodeGPUArchUnsupported]; !ok || f.Severity != finding.SeverityWarning {
		t.Errorf("on an A100: %+v, want the PTX warning", f)
	}
}

// TestCUDAKernelsGrouped: one finding per package, NVIDIA's runtime
// wheels sharing one; a library that could not be read is no finding;
// an arch-specific sm_90a runs only on 9.0.
func TestCUDAKernelsGrouped(t *testing.T) {
	lib := func(pkg, file string, sass, ptx []string) pyenv.CUDALib {
		return pyenv.CUDALib{Package: pkg, File: file, Kernels: strings.Join(sass, " "), SASS: sass, PTX: ptx}
	}
	env := &pyenv.Env{Path: "/e", Packages: map[string]*pyenv.Package{}, CUDALibs: []pyenv.CUDALib{
		lib("nvidia-cublas-cu12", "/e/nvidia/cublas/lib/libcublas.so.12", []string{"sm_50", "sm_90"}, []string{"compute_90"}),
		lib("nvidia-cudnn-cu12", "/e/nvidia/cudnn/lib/libcudnn.so.9", []string{"sm_50", "sm_90"}, nil),
		lib("flash-attn", "/e/flash_attn_2_cuda.so", []string{"sm_90a"}, nil),
		{Package: "broken", File: "/e/broken.so", Error: "malformed CUDA fat binary"},
	}}
	h100 := gpu.State{Driver: "580.65.06", CUDADriver: "13.0", Devices: []gpu.Device{device("NVIDIA H100", "9.0")}}
	b200 := gpu.State{Driver: "580.65.06", CUDADriver: "13.0", Devices: []gpu.Device{device("NVIDIA B200", "10.0")}}
	for _, tc := range []struct {
		g    gpu.State
		want []string // severity: first words
	}{
		{h100, nil},
		{b200, []string{
			"error: libcudnn.so.9 of nvidia-cudnn-cu12 (/e/nvidia/cudnn/lib/libcudnn.so.9) has no kernels for NVIDIA B200 (sm_100)",
			"error: flash_attn_2_cuda.so of flash-attn (/e/flash_attn_2_cuda.so) has no kernels for NVIDIA B200 (sm_100)",
		}},
	} {
		var got []string
		for _, f := range CheckEnv(env, tc.g, Options{}) {
			if f.Code == finding.CodeCUDAKernelsMissing {
				got = append(got, string(f.Severity)+": "+f.Message)
			}
		}
		if len(got) != len(tc.want) {
			t.Fatalf("%s: findings\n%s\nwant %d", tc.g.Devices[0].Name, strings.Join(got, "\n"), len(tc.want))
		}
		for i, w := range tc.want {
			if !strings.HasPrefix(got[i], w) {
				t.Errorf("finding %d:\n%s\nwant it to start %q", i, got[i], w)
			}
		}
		if len(got) > 0 && !strings.Contains(got[0], "libcublas.so.12 of nvidia-cublas-cu12") {
			t.Errorf("the runtime wheels' finding does not name cuBLAS, reached by PTX: %s", got[0])
		}
	}
}
