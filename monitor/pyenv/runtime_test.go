package pyenv_test

import (
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/gpucanary/gpucanary/monitor/pyenv"
	"github.com/gpucanary/gpucanary/monitor/pyenv/pyenvtest"
)

// onX86 skips a test that expects a runtime finding on a host whose
// architecture the torch requirements' markers (platform_machine ==
// "x86_64") do not name: there, nothing is required.
func onX86(t *testing.T) {
	t.Helper()
	if runtime.GOARCH != "amd64" {
		t.Skip("torch's nvidia-* requirements apply on x86_64 only")
	}
}

// TestRuntimeWheels: a CUDA torch whose METADATA requires nvidia-* wheels
// on this platform is broken without them (missing-runtime, naming each
// one and the library import fails on) and questionable with other
// versions (runtime-mismatch, required against installed); a CPU build, a
// Windows layout, conda's torch, a marker that does not match and a
// marker that cannot be evaluated require nothing.
func TestRuntimeWheels(t *testing.T) {
	cuda := func() *pyenvtest.Torch {
		return &pyenvtest.Torch{DistVersion: "2.5.1+cu124", CUDA: "12.4", Installer: "pip\n"}
	}
	noDeps := cuda()
	noDeps.NoDeps = true
	noCudnn := cuda()
	noCudnn.OmitRuntime = []string{"nvidia-cudnn-cu12"}
	tests := []struct {
		name     string
		spec     pyenvtest.Spec
		requires []string // torch's Requires-Dist instead of the release's, when set
		kinds    []string // torch problem kinds
		says     []string // in the problem's message
		arch     bool     // the finding depends on an x86_64 host
	}{
		{name: "every runtime wheel installed", spec: pyenvtest.Spec{Torch: cuda()}},
		{name: "installed with --no-deps", spec: pyenvtest.Spec{Torch: noDeps}, arch: true,
			kinds: []string{pyenv.ProblemMissingRuntime},
			says: []string{"torch 2.5.1+cu124 requires 7 CUDA runtime wheels of NVIDIA's that are not installed: nvidia-cuda-nvrtc-cu12==12.4.127, nvidia-cuda-runtime-cu12==12.4.127, nvidia-cuda-cupti-cu12==12.4.127, nvidia-cublas-cu12==12.4.127, nvidia-cufft-cu12==12.4.127, nvidia-curand-cu12==12.4.127, nvidia-cudnn-cu12==9.1.0.70",
				"`import torch` fails with \"libcublas.so.12: cannot open shared object file\"", "--no-deps"}},
		{name: "one deleted", spec: pyenvtest.Spec{Torch: noCudnn}, arch: true,
			kinds: []string{pyenv.ProblemMissingRuntime},
			says:  []string{"requires a CUDA runtime wheel of NVIDIA's that is not installed: nvidia-cudnn-cu12==9.1.0.70.", "\"libcudnn.so.9: cannot open shared object file\""}},
		{name: "another version", spec: pyenvtest.Spec{Torch: cuda(), Nvidia: map[string]string{"nvidia-cudnn-cu12": "9.5.1.17", "nvidia-cublas-cu12": "12.4.127"}}, arch: true,
			kinds: []string{pyenv.ProblemRuntimeMismatch},
			says:  []string{"(nvidia-cudnn-cu12==9.1.0.70 is required, 9.5.1.17 is installed)", "undefined symbol"}},
		{name: "names compared as PEP 503 normalizes them", spec: pyenvtest.Spec{Torch: cuda()},
			requires: []string{`NVIDIA_CUBLAS.cu12==12.4.127; platform_system == "Linux" and platform_machine == "x86_64"`}},
		{name: "a range the installed version meets", spec: pyenvtest.Spec{Torch: cuda()},
			requires: []string{`nvidia-cudnn-cu12>=9.1,<10; platform_system == "Linux"`}},
		{name: "a requirement without a marker", spec: pyenvtest.Spec{Torch: noDeps},
			requires: []string{`nvidia-nccl-cu12==2.21.5`},
			kinds:    []string{pyenv.ProblemMissingRuntime}, says: []string{"not installed: nvidia-nccl-cu12==2.21.5.", "libnccl.so.2"}},
		{name: "a wheel no library is known for", spec: pyenvtest.Spec{Torch: noDeps},
			requires: []string{`nvidia-nvtx-cu12==12.4.127`},
			kinds:    []string{pyenv.ProblemMissingRuntime}, says: []string{"`import torch` fails: the CUDA libraries these wheels hold cannot be found"}},
		{name: "CPU build", spec: pyenvtest.Spec{Torch: &pyenvtest.Torch{DistVersion: "2.5.1+cpu", Installer: "pip\n"}}},
		{name: "PyPI's torch on Windows", spec: pyenvtest.Spec{Layout: pyenv.LayoutWindows, Torch: noDeps}},
		{name: "conda's torch", spec: pyenvtest.Spec{Manager: "conda", Torch: &pyenvtest.Torch{DistVersion: "2.5.1", CUDA: "12.4"}, CondaTorchBuild: "py3.11_cuda12.4_cudnn9.1.0_0"}},
		{name: "a marker for another machine", spec: pyenvtest.Spec{Torch: noDeps},
			requires: []string{`nvidia-cublas-cu12==12.4.5.8; platform_system == "Linux" and platform_machine == "aarch64"`}},
		{name: "an extra", spec: pyenvtest.Spec{Torch: noDeps},
			requires: []string{`nvidia-cublas-cu12==12.4.5.8; extra == "cuda"`}},
		{name: "a marker that cannot be evaluated", spec: pyenvtest.Spec{Torch: noDeps},
			requires: []string{`nvidia-cublas-cu12==12.4.5.8; platform_system ~ "Linux"`}},
		{name: "a marker on a variable that is not known", spec: pyenvtest.Spec{Torch: noDeps},
			requires: []string{`nvidia-cublas-cu12==12.4.5.8; platform_release >= "5.0"`}},
		{name: "a version that cannot be read is not judged", spec: pyenvtest.Spec{Torch: cuda(), Nvidia: map[string]string{"nvidia-cublas-cu12": "latest"}},
			requires: []string{`nvidia-cublas-cu12==12.4.5.8`}},
		{name: "only nvidia-* requirements are the runtime", spec: pyenvtest.Spec{Torch: noDeps},
			requires: []string{`triton==3.1.0; platform_system == "Linux" and platform_machine == "x86_64"`, `sympy==1.13.1`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.arch {
				onX86(t)
			}
			root := t.TempDir()
			if tt.requires != nil {
				tw := *tt.spec.Torch // the cases share their Torch
				tw.Requires = tt.requires
				tt.spec.Torch = &tw
			}
			must(t, pyenvtest.Write(root, tt.spec))
			env, err := pyenv.Inspect(root)
			must(t, err)
			torch := env.Torch()
			if got := kinds(torch.Problems); !slices.Equal(got, tt.kinds) {
				t.Fatalf("torch problems %v, want %v: %+v", got, tt.kinds, torch.Problems)
			}
			for _, s := range tt.says {
				if !strings.Contains(torch.Problems[0].Message, s) {
					t.Errorf("message lacks %q:\n%s", s, torch.Problems[0].Message)
				}
			}
			if len(tt.kinds) > 0 && torch.Problems[0].Path != torch.DistInfo {
				t.Errorf("problem path %s, want torch's dist-info %s", torch.Problems[0].Path, torch.DistInfo)
			}
		})
	}
}

// TestRuntimeWheelsInAnotherSite: a runtime wheel in the base
// interpreter's site, which a --system-site-packages venv imports from,
// counts: torch searches sys.path for its libraries.
func TestRuntimeWheelsInAnotherSite(t *testing.T) {
	onX86(t)
	home, base := t.TempDir(), t.TempDir()
	root := filepath.Join(t.TempDir(), "env")
	tw := &pyenvtest.Torch{DistVersion: "2.5.1+cu124", CUDA: "12.4", Installer: "pip\n", OmitRuntime: []string{"nvidia-cublas-cu12"}}
	must(t, pyenvtest.Write(root, pyenvtest.Spec{Torch: tw}))
	env, err := pyenv.InspectWith(root, noUser(home))
	must(t, err)
	if got := kinds(env.Torch().Problems); !slices.Equal(got, []string{pyenv.ProblemMissingRuntime}) {
		t.Fatalf("without it: torch problems %v", got)
	}
	baseSite := writePrefix(t, filepath.Join(base, "py"), "3.11")
	writeDist(t, baseSite, "nvidia-cublas-cu12", "12.4.127", "pip\n")
	writeFile(t, root, "pyvenv.cfg", "home = "+filepath.Join(base, "py", "bin")+"\ninclude-system-site-packages = true\nversion = 3.11.7\n")
	env, err = pyenv.InspectWith(root, noUser(home))
	must(t, err)
	if p := env.Packages["nvidia-cublas-cu12"]; p == nil || p.Site != baseSite {
		t.Fatalf("nvidia-cublas-cu12 not read from the base site: %+v (sites %+v)", p, env.Sites)
	}
	if ps := env.Torch().Problems; len(ps) != 0 {
		t.Errorf("with nvidia-cublas-cu12 in the base site: torch problems %+v", ps)
	}
}
