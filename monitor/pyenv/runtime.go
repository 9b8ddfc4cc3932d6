package pyenv

import (
	"fmt"
	"github.com/gpucanary/gpucanary/monitor/pyenv/pyspec"
	"runtime"
	"strings"
)

// The NVIDIA runtime wheels of a CUDA torch.
//
// A Linux x86_64 CUDA wheel of torch does not carry the CUDA libraries
// (cuBLAS, cuDNN, the CUDA runtime, NCCL, …): it requires NVIDIA's wheels
// of them (nvidia-cublas-cu12==12.4.5.8, …) in its METADATA, behind the
// marker platform_system == 'Linux' and platform_machine == 'x86_64', and
// finds their libraries at import through its RPATH
// ($ORIGIN/../../nvidia/<lib>/lib) or, failing that, by searching sys.path
// for nvidia/<lib>/lib (torch/__init__.py, _load_global_deps). Without
// them `import torch` fails: "libcublas.so.12: cannot open shared object
// file", then "libcublas.so.*[0-9] not found in the system path".
//
//   - PyPI's Linux wheels have required them since torch 1.13
//     (pytorch/builder#1132: "Create WHL package for 11.7 that pulls cuda
//     and cudnn pypi wheels"); download.pytorch.org's Linux CUDA wheels
//     since 2.2 (pytorch/pytorch#114281, "Move small pypi build as default
//     for linux cuda 12.1", whose test log installs them from the index).
//   - The lists per CUDA version are PYTORCH_EXTRA_INSTALL_REQUIREMENTS in
//     pytorch's .github/scripts/generate_binary_build_matrix.py ("cuda
//     linux wheels require PYTORCH_EXTRA_INSTALL_REQUIREMENTS to install").
//   - The download.pytorch.org/whl/cuNNN indexes host the nvidia-* wheels
//     beside torch, so `pip install torch==X+cuNNN --index-url …/cuNNN`
//     installs them; with --no-deps (pip or uv) they are skipped.
//   - Windows wheels bundle the DLLs in torch/lib and require none; conda's
//     torch depends on conda packages, not on wheels.
//
// checkRuntime turns a missing or mismatched one into a Problem on torch,
// so that an environment whose torch cannot import is never "OK".

// runtimeLibs is the library each runtime wheel holds, by its name without
// "nvidia-" and its "-cuNN" suffix, in the order a message names the first
// missing one; the library's soname number is its wheel version's major
// (nvidia-cublas-cu12 12.4.5.8 holds libcublas.so.12, nvidia-cudnn-cu12
// 9.1.0.70 libcudnn.so.9).
var runtimeLibs = []struct{ stem, lib string }{
	{"cublas", "libcublas.so"}, {"cudnn", "libcudnn.so"}, {"cuda-runtime", "libcudart.so"},
	{"cuda-nvrtc", "libnvrtc.so"}, {"cufft", "libcufft.so"}, {"curand", "libcurand.so"},
	{"cusolver", "libcusolver.so"}, {"cusparse", "libcusparse.so"}, {"nccl", "libnccl.so"},
	{"nvjitlink", "libnvJitLink.so"}, {"cuda-cupti", "libcupti.so"},
}

// markerMachines is Python's platform.machine() for a Go architecture, on
// Linux and on Windows.
var markerMachines = map[string][2]string{
	"amd64": {"x86_64", "AMD64"},
	"arm64": {"aarch64", "ARM64"},
	"386":   {"i686", "x86"},
}

// hostArch is the architecture platform_machine is read from: an
// environment is judged for the machine GPU Canary runs on.
var hostArch = runtime.GOARCH

// MarkerEnv is the environment's marker variables as far as the disk
// tells them: the platform from its layout (posix means Linux, windows
// Windows), platform_machine from this machine's architecture,
// python_version from Python, and extra unset. The others
// (platform_release, implementation_name, python_full_version, …) are
// unknown.
func (e *Env) MarkerEnv() pyspec.Env {
	m := pyspec.Env{"extra": ""}
	machine, knownArch := markerMachines[hostArch]
	switch e.Layout {
	case LayoutPOSIX:
		m["os_name"], m["sys_platform"], m["platform_system"] = "posix", "linux", "Linux"
		if knownArch {
			m["platform_machine"] = machine[0]
		}
	case LayoutWindows:
		m["os_name"], m["sys_platform"], m["platform_system"] = "nt", "win32", "Windows"
		if knownArch {
			m["platform_machine"] = machine[1]
		}
	}
	if e.Python != "" {
		m["python_version"] = e.Python
	}
	return m
}

// checkRuntime checks a CUDA torch's NVIDIA runtime: each nvidia-*
// requirement of its METADATA whose marker applies here must be installed
// in the environment's sites, at a version its specifier allows. A
// requirement whose marker cannot be evaluated is not known to apply and
// is never reported.
func (in *inspector) checkRuntime() {
	env := in.env
	t := env.Torch()
	if t == nil || t.Build != BuildCUDA || t.Installer == InstallerConda || len(t.requires) == 0 {
		return
	}
	menv := env.MarkerEnv()
	var missing []pyspec.Requirement
	var mismatched []string
	seen := map[string]bool{}
	for _, line := range t.requires {
		r, ok := pyspec.ParseRequirement(line)
		if !ok || !strings.HasPrefix(r.Name, "nvidia-") {
			continue
		}
		if applies, known := pyspec.Eval(r.Marker, menv); !known || !applies {
			continue
		}
		have := env.Packages[r.Name]
		if have == nil {
			if !seen[r.Name] {
				seen[r.Name] = true
				missing = append(missing, r)
			}
			continue
		}
		if ok, known := pyspec.Satisfies(have.Version, r.Specifier); known && !ok {
			mismatched = append(mismatched, fmt.Sprintf("%s%s is required, %s is installed", r.Name, r.Specifier, have.Version))
		}
	}
	if len(missing) > 0 {
		t.Problems = append(t.Problems, Problem{Kind: ProblemMissingRuntime, Path: t.DistInfo, Message: missingRuntimeText(t, missing)})
	}
	if len(mismatched) > 0 {
		t.Problems = append(t.Problems, Problem{Kind: ProblemRuntimeMismatch, Path: t.DistInfo,
			Message: fmt.Sprintf("torch %s was built against other versions of NVIDIA's CUDA runtime wheels than the ones installed (%s): torch usually still loads them, but a library older than the one it was built against can fail at import with \"undefined symbol\", and `pip check` reports the conflict; installing torch's pins again without --no-deps puts the required versions back",
				t.Version, strings.Join(mismatched, "; "))})
	}
}

// missingRuntimeText says which runtime wheels are missing and how import
// fails without them.
func missingRuntimeText(t *Package, missing []pyspec.Requirement) string {
	names := make([]string, len(missing))
	for i, r := range missing {
		names[i] = r.Name + r.Specifier
	}
	what := "a CUDA runtime wheel of NVIDIA's that is not installed: " + names[0]
	if len(names) > 1 {
		what = fmt.Sprintf("%d CUDA runtime wheels of NVIDIA's that are not installed: %s", len(names), strings.Join(names, ", "))
	}
	fails := "`import torch` fails: the CUDA libraries these wheels hold cannot be found"
	if lib := firstLib(missing); lib != "" {
		fails = fmt.Sprintf("`import torch` fails with \"%s: cannot open shared object file\"", lib)
	}
	return fmt.Sprintf("torch %s requires %s. %s. An install with --no-deps (pip's or uv's) leaves them out; installing torch's pins again from its index without --no-deps installs them",
		t.Version, what, fails)
}

// firstLib is the library of the first missing wheel in runtimeLibs'
// order, with its soname number when the requirement pins a version
// ("libcublas.so.12"); "" when none is known.
func firstLib(missing []pyspec.Requirement) string {
	for _, l := range runtimeLibs {
		for _, r := range missing {
			stem := strings.TrimPrefix(r.Name, "nvidia-")
			if i := strings.LastIndex(stem, "-cu"); i > 0 && isDigits(stem[i+3:]) {
				stem = stem[:i]
			}
			if stem != l.stem {
				continue
			}
			pinned, ok := strings.CutPrefix(r.Specifier, "==")
			major, _, _ := strings.Cut(strings.TrimSpace(pinned), ".")
			if !ok || !isDigits(major) {
				return l.lib
			}
			return l.lib + "." + major
		}
	}
	return ""
}
