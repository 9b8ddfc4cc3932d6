package pyenvtest

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
)

const gitVersion = "a8d6afb511a69687bbb2b7e88a3cf67917e1697e"

// pyOptional is a Python Optional[str] literal.
func pyOptional(s string) string {
	if s == "" {
		return "None"
	}
	return "'" + s + "'"
}

// torchVersionPy writes version.py as tools/generate_torch_version.py did
// for the release: unannotated before 1.13 (LegacyVersionPy), annotated
// after, xpu from 2.6, xpu in __all__ from 2.8.
func torchVersionPy(t *Torch) string {
	v := t.VersionPy
	if v == "" {
		v = t.DistVersion
	}
	if t.LegacyVersionPy {
		return fmt.Sprintf("__version__ = '%s'\ndebug = False\ncuda = %s\ngit_version = '%s'\nhip = %s\n",
			v, pyOptional(t.CUDA), gitVersion, pyOptional(t.HIP))
	}
	hasXPU := atLeast(t.DistVersion, 2, 6) || t.XPU != ""
	all := "['__version__', 'debug', 'cuda', 'git_version', 'hip']"
	if atLeast(t.DistVersion, 2, 8) {
		all = "['__version__', 'debug', 'cuda', 'git_version', 'hip', 'xpu']"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "from typing import Optional\n\n__all__ = %s\n__version__ = '%s'\ndebug = False\n", all, v)
	fmt.Fprintf(&b, "cuda: Optional[str] = %s\ngit_version = '%s'\nhip: Optional[str] = %s\n", pyOptional(t.CUDA), gitVersion, pyOptional(t.HIP))
	if hasXPU {
		fmt.Fprintf(&b, "xpu: Optional[str] = %s\n", pyOptional(t.XPU))
	}
	return b.String()
}

// torchRequires lists Requires-Dist as torch wheels do: from 2.5 every
// wheel names the nvidia-* runtime behind a Linux x86_64 marker.
func torchRequires(t *Torch) []string {
	if t.Requires != nil {
		return t.Requires
	}
	req := []string{"filelock", "typing-extensions>=4.8.0", "networkx", "jinja2", "fsspec"}
	marker := `; platform_system == "Linux" and platform_machine == "x86_64"`
	for _, r := range torchRuntime(t) {
		req = append(req, r.name+"=="+r.version+marker)
	}
	if atLeast(t.DistVersion, 2, 5) {
		req = append(req, "sympy==1.13.1; python_version >= \"3.9\"")
	}
	return req
}

// runtimeWheel is one nvidia-* wheel a torch requires.
type runtimeWheel struct{ name, version string }

// torchRuntime is the nvidia-* runtime torchRequires names (from 2.5 on;
// for CUDA 12.4 when torch is no CUDA build, as PyPI's wheels for every
// platform name it), with versions shaped like the real ones.
func torchRuntime(t *Torch) []runtimeWheel {
	if !atLeast(t.DistVersion, 2, 5) {
		return nil
	}
	cuda := t.CUDA
	if cuda == "" {
		cuda = "12.4"
	}
	suffix := "-cu" + strings.SplitN(cuda, ".", 2)[0]
	var out []runtimeWheel
	for _, n := range []string{"nvidia-cuda-nvrtc", "nvidia-cuda-runtime", "nvidia-cuda-cupti", "nvidia-cublas", "nvidia-cufft", "nvidia-curand"} {
		out = append(out, runtimeWheel{n + suffix, cuda + ".127"})
	}
	return append(out, runtimeWheel{"nvidia-cudnn" + suffix, "9.1.0.70"})
}

func (w *writer) torch() error {
	t := w.s.Torch
	if t == nil {
		return nil
	}
	files := map[string]string{
		"torch/__init__.py": "r\"\"\"The torch package.\"\"\"\nfrom torch.version import __version__ as __version__\n",
		"torch/version.py":  torchVersionPy(t),
	}
	libs := t.Libs
	if libs == nil {
		libs = []string{w.libName("c10"), w.libName("torch"), w.libName("torch_cpu"), w.libName("torch_python")}
		switch {
		case t.CUDA != "":
			libs = append(libs, w.libName("torch_cuda"), w.libName("c10_cuda"))
			if w.win {
				libs = append(libs, "cudart64_12.dll", "cudnn64_9.dll")
			}
		case t.HIP != "":
			libs = append(libs, w.libName("torch_hip"), w.libName("c10_hip"), "libamdhip64.so")
		case t.XPU != "":
			libs = append(libs, w.libName("torch_xpu"), w.libName("c10_xpu"))
		}
	}
	for _, l := range libs {
		files["torch/lib/"+l] = "\x7fELF fixture " + l
	}
	installer := t.Installer
	if w.s.CondaTorchBuild != "" {
		if installer == "" {
			installer = "conda\n"
		}
		public, _, _ := strings.Cut(t.DistVersion, "+")
		rec := fmt.Sprintf("pytorch-%s-%s.json", public, w.s.CondaTorchBuild)
		if err := w.file(filepath.Join(w.root, "conda-meta", rec), condaRecordJSON("pytorch", public, w.s.CondaTorchBuild, "pytorch")); err != nil {
			return err
		}
	}
	if err := w.dist("torch", t.DistVersion, installer, torchRequires(t), files); err != nil {
		return err
	}
	if len(libs) == 0 { // an empty torch/lib still exists
		return mkdir(filepath.Join(w.site, "torch", "lib"))
	}
	return nil
}

func (w *writer) companions() error {
	installer := "pip\n"
	if w.s.Torch != nil {
		installer = w.s.Torch.Installer
	}
	for _, c := range []struct {
		name string
		spec *Companion
	}{{"torchvision", w.s.Vision}, {"torchaudio", w.s.Audio}} {
		if c.spec == nil {
			continue
		}
		vp := fmt.Sprintf("__version__ = '%s'\ngit_version = '%s'\n", c.spec.Version, gitVersion)
		if c.spec.CUDA != "" {
			vp += fmt.Sprintf("cuda = '%s'\n", c.spec.CUDA)
		}
		if c.name == "torchvision" {
			vp += "from torchvision.extension import _check_cuda_version\nif _check_cuda_version() > 0:\n    cuda = _check_cuda_version()\n"
		}
		ext := "_C.so"
		if w.win {
			ext = "_C.pyd"
		}
		files := map[string]string{
			c.name + "/__init__.py": "from ." + "version import __version__\n",
			c.name + "/version.py":  vp,
			c.name + "/" + ext:      "\x7fELF fixture",
		}
		if err := w.dist(c.name, c.spec.Version, installer, []string{"torch"}, files); err != nil {
			return err
		}
	}
	return nil
}

// llamaLinks are the GPU runtime names a single-library llama build links.
var llamaLinks = map[string][2]string{ // backend -> {posix, windows}
	"cuda":   {"libcudart.so.12\x00libcublas.so.12", "cudart64_12.dll\x00cublas64_12.dll"},
	"hip":    {"libamdhip64.so.6\x00libhipblas.so.2", "amdhip64.dll"},
	"vulkan": {"libvulkan.so.1", "vulkan-1.dll"},
	"metal":  {"/System/Library/Frameworks/Metal.framework/Versions/A/Metal", ""},
}

func (w *writer) llama() error {
	l := w.s.Llama
	if l == nil {
		return nil
	}
	files := map[string]string{"llama_cpp/__init__.py": "from .llama_cpp import *\n__version__ = \"" + l.Version + "\"\n"}
	linked := "\x7fELF\x00libc.so.6\x00libstdc++.so.6"
	for _, b := range l.Backends {
		if names, ok := llamaLinks[b]; ok {
			if w.win {
				linked += "\x00" + names[1]
			} else {
				linked += "\x00" + names[0]
			}
		}
	}
	switch {
	case !atLeast(l.Version, 0, 3) && !atLeastPatch(l.Version, 0, 2, 80):
		files["llama_cpp/"+w.libName("llama")] = linked
	case !atLeastPatch(l.Version, 0, 3, 2):
		files["llama_cpp/lib/"+w.libName("llama")] = "\x7fELF\x00" + w.libName("ggml")
		files["llama_cpp/lib/"+w.libName("ggml")] = linked
	default:
		files["llama_cpp/lib/"+w.libName("llama")] = "\x7fELF\x00" + w.libName("ggml")
		files["llama_cpp/lib/"+w.libName("ggml")] = "\x7fELF"
		files["llama_cpp/lib/"+w.libName("ggml-base")] = "\x7fELF"
		backends := l.Backends
		if !slices.Contains(backends, "cpu") {
			backends = append(slices.Clone(backends), "cpu")
		}
		for _, b := range backends {
			files["llama_cpp/lib/"+w.libName("ggml-"+b)] = "\x7fELF"
		}
	}
	return w.dist("llama_cpp_python", l.Version, "pip\n", []string{"typing-extensions>=4.5.0", "numpy>=1.20.0", "diskcache>=5.6.1", "jinja2>=2.11.3"}, files)
}

// atLeastPatch compares major.minor.patch of v.
func atLeastPatch(v string, major, minor, patch int) bool {
	ma, mi := minorOf(v)
	if ma != major || mi != minor {
		return ma > major || ma == major && mi > minor
	}
	parts := strings.SplitN(v, ".", 4)
	p := 0
	if len(parts) >= 3 {
		fmt.Sscanf(parts[2], "%d", &p)
	}
	return p >= patch
}

func (w *writer) bnb() error {
	b := w.s.BNB
	if b == nil {
		return nil
	}
	files := map[string]string{
		"bitsandbytes/__init__.py":             "__version__ = \"" + b.Version + "\"\n",
		"bitsandbytes/" + bnbLib("cpu", w.win): "\x7fELF",
	}
	for _, c := range b.CUDALibs {
		files["bitsandbytes/"+bnbLib("cuda"+c, w.win)] = "\x7fELF"
	}
	return w.dist("bitsandbytes", b.Version, "pip\n", []string{"torch<3,>=2.0", "numpy>=1.17"}, files)
}

// nvidia writes Spec.Nvidia, and the nvidia-* runtime wheels a CUDA
// torch requires as pip installs them on Linux: every one, at the version
// torch pins (Spec.Nvidia's version where it names one), unless the torch
// was installed with --no-deps or leaves some out, or conda installed it
// (its runtime is conda packages, not wheels). Their INSTALLER is torch's.
func (w *writer) nvidia() error {
	versions := map[string]string{}
	installer := map[string]string{}
	if t := w.s.Torch; t != nil && t.CUDA != "" && !w.win && w.s.CondaTorchBuild == "" && !t.NoDeps {
		for _, r := range torchRuntime(t) {
			if !slices.Contains(t.OmitRuntime, r.name) {
				versions[r.name], installer[r.name] = r.version, t.Installer
			}
		}
	}
	for n, v := range w.s.Nvidia {
		versions[n], installer[n] = v, "pip\n"
	}
	names := make([]string, 0, len(versions))
	for n := range versions {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		short := strings.TrimPrefix(n, "nvidia-")
		short = strings.SplitN(short, "-cu", 2)[0]
		short = strings.ReplaceAll(short, "-", "_")
		files := map[string]string{"nvidia/" + short + "/__init__.py": ""}
		if err := w.dist(n, versions[n], installer[n], nil, files); err != nil {
			return err
		}
	}
	return nil
}

// bnbLib keeps the "lib" prefix on Windows too: libbitsandbytes_cuda124.dll.
func bnbLib(kind string, win bool) string {
	if win {
		return "libbitsandbytes_" + kind + ".dll"
	}
	return "libbitsandbytes_" + kind + ".so"
}
