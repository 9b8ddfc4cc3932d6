// Package pyenvtest writes real, well-formed Python environments to disk
// (pyvenv.cfg or conda-meta, dist-info folders with METADATA, INSTALLER and
// RECORD, torch/version.py in its historical forms, torch/lib) so tests,
// benchmarks and CLI tests in any package can reproduce an incident without
// Python. It does not import testing.
package pyenvtest

import "github.com/gpucanary/gpucanary/monitor/pyenv"

// Torch describes the torch to install.
type Torch struct {
	DistVersion string // METADATA Version: "2.5.1" (PyPI) or "2.5.1+cu121" (download.pytorch.org)
	VersionPy   string // __version__ in torch/version.py; "" means DistVersion
	CUDA        string // version.py cuda; "" writes None
	HIP         string // version.py hip; "" writes None
	XPU         string // version.py xpu; "" writes None
	// Libs are the file names in torch/lib; nil means the default:
	// libtorch_cpu plus libtorch_cuda when CUDA is set (libtorch_hip for HIP,
	// libtorch_xpu for XPU), as .so or .dll by layout. An empty non-nil
	// slice creates an empty torch/lib.
	Libs      []string
	Installer string // INSTALLER content, written as is ("uv" has no newline); "" writes no file
	// LegacyVersionPy writes the old unannotated version.py (`cuda = '11.7'`).
	LegacyVersionPy bool
	// NoDeps installs a CUDA torch as `pip install --no-deps` does: none
	// of the nvidia-* runtime wheels it requires (RuntimeOf), which Write
	// otherwise installs beside it on a POSIX layout.
	NoDeps bool
	// OmitRuntime are runtime wheels Write leaves out
	// ("nvidia-cublas-cu12"), as if deleted after the install.
	OmitRuntime []string
	// Requires, when set, are METADATA's Requires-Dist lines instead of
	// the ones the release's wheels write (the runtime installed stays
	// the release's).
	Requires []string
}

// Companion is torchvision or torchaudio.
type Companion struct {
	Version string // METADATA Version and __version__: "0.20.1+cu121"
	CUDA    string // when set, version.py also has `cuda = '12.1'`
}

// Llama is llama-cpp-python; its files follow the layout of its version:
// <= 0.2.79 llama_cpp/libllama.so; 0.2.80-0.3.1 llama_cpp/lib/libllama.so
// and libggml.so (GPU runtimes linked inside); 0.3.2+ one
// llama_cpp/lib/libggml-BACKEND library per backend.
type Llama struct {
	Version  string
	Backends []string // "cuda", "hip", "vulkan", "metal", "cpu"
}

// BNB is bitsandbytes with the CUDA libraries it ships.
type BNB struct {
	Version  string
	CUDALibs []string // "124", "126": libbitsandbytes_cuda124.so (or .dll)
}

// Spec is one environment.
type Spec struct {
	Layout  pyenv.Layout // "" means POSIX
	Python  string       // "" means "3.11"; "3.11" is written as 3.11.7
	Manager string       // "venv" (default), "uv", "conda" or "embedded" (python.org's embeddable package, Windows layout: apps.go)
	Torch   *Torch
	Vision  *Companion
	Audio   *Companion
	Llama   *Llama
	BNB     *BNB
	// Nvidia are nvidia-* dists to install, name ("nvidia-cublas-cu12")
	// -> version; a name of torch's runtime (RuntimeOf) is installed at
	// this version instead of the one torch requires.
	Nvidia map[string]string
	// CondaTorchBuild, when set, makes torch a conda package: a
	// conda-meta/pytorch-VERSION-BUILD.json record (e.g. build
	// "py3.11_cuda12.1_cudnn8.9.2_0") beside its site-packages files, whose
	// INSTALLER says conda unless Torch.Installer says otherwise.
	CondaTorchBuild string
}
