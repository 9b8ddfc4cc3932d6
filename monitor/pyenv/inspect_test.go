package pyenv_test

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gpucanary/gpucanary/monitor/pyenv"
	"github.com/gpucanary/gpucanary/monitor/pyenv/pyenvtest"
)

var layouts = []pyenv.Layout{pyenv.LayoutPOSIX, pyenv.LayoutWindows}

// cuda121 is incident 1's environment before the overwrite.
func cuda121() pyenvtest.Spec {
	return pyenvtest.Spec{
		Manager: "uv",
		Torch:   &pyenvtest.Torch{DistVersion: "2.5.1+cu121", CUDA: "12.1", Installer: "uv"},
		Vision:  &pyenvtest.Companion{Version: "0.20.1+cu121", CUDA: "12.1"},
		Audio:   &pyenvtest.Companion{Version: "2.5.1+cu121"},
	}
}

// sitePackages is where pyenvtest puts packages for a layout.
func sitePackages(root string, l pyenv.Layout) string {
	if l == pyenv.LayoutWindows {
		return filepath.Join(root, "Lib", "site-packages")
	}
	return filepath.Join(root, "lib", "python3.11", "site-packages")
}

func torchLib(l pyenv.Layout, stem string) string {
	if l == pyenv.LayoutWindows {
		return stem + ".dll"
	}
	return "lib" + stem + ".so"
}

// want is what a test expects of torch and the environment.
type want struct {
	noTorch      bool
	build        pyenv.Build
	cuda, rocm   string
	xpu          string
	version      string
	distVersion  string
	installer    string // torch's
	envInstaller string
	envKind      string
	problems     []string // torch problem kinds, sorted
	envProblems  []string
}

func kinds(ps []pyenv.Problem) []string {
	var out []string
	for _, p := range ps {
		out = append(out, p.Kind)
	}
	slices.Sort(out)
	return out
}

func TestInspectIncidents(t *testing.T) {
	tests := []struct {
		name   string
		spec   func(pyenv.Layout) pyenvtest.Spec
		mutate func(t *testing.T, root, site string, l pyenv.Layout)
		want   want
	}{
		{
			name: "incident 1 before: uv venv with torch 2.5.1+cu121",
			spec: func(pyenv.Layout) pyenvtest.Spec { return cuda121() },
			want: want{build: pyenv.BuildCUDA, cuda: "12.1", version: "2.5.1+cu121", distVersion: "2.5.1+cu121", installer: "uv", envInstaller: "uv", envKind: "venv"},
		},
		{
			name: "incident 1 after: the same venv after uv replaced torch with a CPU build",
			spec: func(pyenv.Layout) pyenvtest.Spec { return cuda121() },
			mutate: func(t *testing.T, root, site string, l pyenv.Layout) {
				// uv removes the old distribution's files, then writes the new one.
				for _, dir := range []string{"torch", "torch-2.5.1+cu121.dist-info", "torchvision-0.20.1+cu121.dist-info", "torchvision"} {
					must(t, os.RemoveAll(filepath.Join(site, dir)))
				}
				s := cuda121()
				s.Layout = l
				s.Torch = &pyenvtest.Torch{DistVersion: "2.5.1+cpu", Installer: "uv"}
				s.Vision = &pyenvtest.Companion{Version: "0.20.1+cpu"}
				s.Audio = nil
				must(t, pyenvtest.Write(root, s))
			},
			want: want{build: pyenv.BuildCPU, version: "2.5.1+cpu", distVersion: "2.5.1+cpu", installer: "uv", envInstaller: "uv", envKind: "venv"},
		},
		{
			name: "Linux PyPI torch: no local tag in METADATA, +cu124 in version.py",
			spec: func(pyenv.Layout) pyenvtest.Spec {
				return pyenvtest.Spec{Torch: &pyenvtest.Torch{DistVersion: "2.5.1", VersionPy: "2.5.1+cu124", CUDA: "12.4", Installer: "pip\n"}}
			},
			want: want{build: pyenv.BuildCUDA, cuda: "12.4", version: "2.5.1+cu124", distVersion: "2.5.1", installer: "pip", envInstaller: "pip", envKind: "venv"},
		},
		{
			name: "Windows PyPI torch is a CPU build",
			spec: func(pyenv.Layout) pyenvtest.Spec {
				return pyenvtest.Spec{Torch: &pyenvtest.Torch{DistVersion: "2.5.1", Installer: "pip\n"}}
			},
			want: want{build: pyenv.BuildCPU, version: "2.5.1", distVersion: "2.5.1", installer: "pip", envInstaller: "pip", envKind: "venv"},
		},
		{
			name: "incident 3: cu124 index wheel, version.py's real cuda value is read",
			spec: func(pyenv.Layout) pyenvtest.Spec {
				return pyenvtest.Spec{Torch: &pyenvtest.Torch{DistVersion: "2.4.1+cu124", CUDA: "12.4", Installer: "pip\n"}}
			},
			want: want{build: pyenv.BuildCUDA, cuda: "12.4", version: "2.4.1+cu124", distVersion: "2.4.1+cu124", installer: "pip", envInstaller: "pip", envKind: "venv"},
		},
		{
			name: "incident 3: version.py beats the tag when they disagree",
			spec: func(pyenv.Layout) pyenvtest.Spec {
				return pyenvtest.Spec{Torch: &pyenvtest.Torch{DistVersion: "2.6.0+cu124", CUDA: "12.6.3", Installer: "pip\n"}}
			},
			want: want{build: pyenv.BuildCUDA, cuda: "12.6", version: "2.6.0+cu124", distVersion: "2.6.0+cu124", installer: "pip", envInstaller: "pip", envKind: "venv"},
		},
		{
			name: "incident 4: Blackwell needs cu128",
			spec: func(pyenv.Layout) pyenvtest.Spec {
				return pyenvtest.Spec{Manager: "uv", Torch: &pyenvtest.Torch{DistVersion: "2.7.1+cu128", CUDA: "12.8", Installer: "uv"}}
			},
			want: want{build: pyenv.BuildCUDA, cuda: "12.8", version: "2.7.1+cu128", distVersion: "2.7.1+cu128", installer: "uv", envInstaller: "uv", envKind: "venv"},
		},
		{
			name: "incident 5: legacy version.py of a hand-installed 1.12 CUDA torch",
			spec: func(pyenv.Layout) pyenvtest.Spec {
				return pyenvtest.Spec{Torch: &pyenvtest.Torch{DistVersion: "1.12.1+cu116", CUDA: "11.6", LegacyVersionPy: true}}
			},
			want: want{build: pyenv.BuildCUDA, cuda: "11.6", version: "1.12.1+cu116", distVersion: "1.12.1+cu116", envInstaller: "unknown", envKind: "venv"},
		},
		{
			name: "conda env with conda's torch",
			spec: func(pyenv.Layout) pyenvtest.Spec {
				return pyenvtest.Spec{Manager: "conda", Torch: &pyenvtest.Torch{DistVersion: "2.5.1", CUDA: "12.1"}, CondaTorchBuild: "py3.11_cuda12.1_cudnn8.9.2_0"}
			},
			want: want{build: pyenv.BuildCUDA, cuda: "12.1", version: "2.5.1", distVersion: "2.5.1", installer: "conda", envInstaller: "conda", envKind: "conda"},
		},
		{
			name: "conda torch with version.py gone falls back to the conda build string",
			spec: func(pyenv.Layout) pyenvtest.Spec {
				return pyenvtest.Spec{Manager: "conda", Torch: &pyenvtest.Torch{DistVersion: "2.5.1", CUDA: "12.6"}, CondaTorchBuild: "cuda126_generic_py311_h1234567_201"}
			},
			mutate: func(t *testing.T, root, site string, l pyenv.Layout) {
				must(t, os.Remove(filepath.Join(site, "torch", "version.py")))
			},
			want: want{build: pyenv.BuildCUDA, cuda: "12.6", version: "2.5.1", distVersion: "2.5.1", installer: "conda", envInstaller: "conda", envKind: "conda",
				problems: []string{pyenv.ProblemHalfDeleted}},
		},
		{
			name: "pip-installed torch inside a conda env",
			spec: func(pyenv.Layout) pyenvtest.Spec {
				return pyenvtest.Spec{Manager: "conda", Torch: &pyenvtest.Torch{DistVersion: "2.5.1+cu121", CUDA: "12.1", Installer: "pip\n"}}
			},
			want: want{build: pyenv.BuildCUDA, cuda: "12.1", version: "2.5.1+cu121", distVersion: "2.5.1+cu121", installer: "pip", envInstaller: "conda", envKind: "conda"},
		},
		{
			name: "ROCm build",
			spec: func(pyenv.Layout) pyenvtest.Spec {
				return pyenvtest.Spec{Torch: &pyenvtest.Torch{DistVersion: "2.5.1+rocm6.2", HIP: "6.2.41133", Installer: "pip\n"}}
			},
			want: want{build: pyenv.BuildROCm, rocm: "6.2.41133", version: "2.5.1+rocm6.2", distVersion: "2.5.1+rocm6.2", installer: "pip", envInstaller: "pip", envKind: "venv"},
		},
		{
			name: "XPU build",
			spec: func(pyenv.Layout) pyenvtest.Spec {
				return pyenvtest.Spec{Torch: &pyenvtest.Torch{DistVersion: "2.8.0+xpu", XPU: "20250100", Installer: "pip\n"}}
			},
			want: want{build: pyenv.BuildXPU, xpu: "20250100", version: "2.8.0+xpu", distVersion: "2.8.0+xpu", installer: "pip", envInstaller: "pip", envKind: "venv"},
		},
		{
			// torch 2.5's version.py has no xpu field: all its fields are
			// None, and only the tag says XPU (not a CPU build).
			name: "XPU build whose version.py predates the xpu field",
			spec: func(l pyenv.Layout) pyenvtest.Spec {
				return pyenvtest.Spec{Torch: &pyenvtest.Torch{DistVersion: "2.5.1+xpu", Installer: "pip\n", Libs: []string{torchLib(l, "torch_cpu"), torchLib(l, "torch_xpu")}}}
			},
			want: want{build: pyenv.BuildXPU, version: "2.5.1+xpu", distVersion: "2.5.1+xpu", installer: "pip", envInstaller: "pip", envKind: "venv"},
		},
		{
			name: "no torch",
			spec: func(pyenv.Layout) pyenvtest.Spec { return pyenvtest.Spec{Manager: "uv"} },
			want: want{noTorch: true, envInstaller: "uv", envKind: "venv"},
		},
		{
			name: "broken: two torch dist-infos",
			spec: func(pyenv.Layout) pyenvtest.Spec { return cuda121() },
			mutate: func(t *testing.T, root, site string, l pyenv.Layout) {
				dir := filepath.Join(site, "torch-2.4.0+cpu.dist-info")
				must(t, os.MkdirAll(dir, 0o755))
				must(t, os.WriteFile(filepath.Join(dir, "METADATA"), []byte("Metadata-Version: 2.1\nName: torch\nVersion: 2.4.0+cpu\n"), 0o644))
			},
			want: want{build: pyenv.BuildCUDA, cuda: "12.1", version: "2.5.1+cu121", distVersion: "2.5.1+cu121", installer: "uv", envInstaller: "uv", envKind: "venv",
				problems: []string{pyenv.ProblemDuplicateDistInfo}},
		},
		{
			name: "broken: torch folder without dist-info",
			spec: func(pyenv.Layout) pyenvtest.Spec { return cuda121() },
			mutate: func(t *testing.T, root, site string, l pyenv.Layout) {
				must(t, os.RemoveAll(filepath.Join(site, "torch-2.5.1+cu121.dist-info")))
			},
			want: want{build: pyenv.BuildCUDA, cuda: "12.1", version: "2.5.1+cu121", envInstaller: "uv", envKind: "venv",
				problems: []string{pyenv.ProblemMissingDistInfo}},
		},
		{
			name: "broken: pip stash ~orch left behind",
			spec: func(pyenv.Layout) pyenvtest.Spec { return cuda121() },
			mutate: func(t *testing.T, root, site string, l pyenv.Layout) {
				must(t, os.MkdirAll(filepath.Join(site, "~orch", "lib"), 0o755))
				must(t, os.MkdirAll(filepath.Join(site, "~orch-2.4.0.dist-info"), 0o755))
			},
			want: want{build: pyenv.BuildCUDA, cuda: "12.1", version: "2.5.1+cu121", distVersion: "2.5.1+cu121", installer: "uv", envInstaller: "uv", envKind: "venv",
				problems: []string{pyenv.ProblemPipStash, pyenv.ProblemPipStash}},
		},
		{
			name: "broken: a stash of an uninstalled torch is the environment's",
			spec: func(pyenv.Layout) pyenvtest.Spec { return pyenvtest.Spec{} },
			mutate: func(t *testing.T, root, site string, l pyenv.Layout) {
				must(t, os.MkdirAll(filepath.Join(site, "~-rch"), 0o755))
			},
			want: want{noTorch: true, envInstaller: "unknown", envKind: "venv", envProblems: []string{pyenv.ProblemPipStash}},
		},
		{
			name: "broken: version.py is a directory; the local tag decides",
			spec: func(pyenv.Layout) pyenvtest.Spec { return cuda121() },
			mutate: func(t *testing.T, root, site string, l pyenv.Layout) {
				vp := filepath.Join(site, "torch", "version.py")
				must(t, os.Remove(vp))
				must(t, os.Mkdir(vp, 0o755))
			},
			want: want{build: pyenv.BuildCUDA, cuda: "12.1", version: "2.5.1+cu121", distVersion: "2.5.1+cu121", installer: "uv", envInstaller: "uv", envKind: "venv",
				problems: []string{pyenv.ProblemUnreadable}},
		},
		{
			name: "broken: version.py is a dangling symlink; torch/lib decides",
			spec: func(pyenv.Layout) pyenvtest.Spec {
				return pyenvtest.Spec{Torch: &pyenvtest.Torch{DistVersion: "2.5.1", VersionPy: "2.5.1+cu124", CUDA: "12.4", Installer: "pip\n"}}
			},
			mutate: func(t *testing.T, root, site string, l pyenv.Layout) {
				vp := filepath.Join(site, "torch", "version.py")
				must(t, os.Remove(vp))
				must(t, os.Symlink(filepath.Join(root, "nowhere"), vp))
			},
			want: want{build: pyenv.BuildCUDA, version: "2.5.1", distVersion: "2.5.1", installer: "pip", envInstaller: "pip", envKind: "venv",
				problems: []string{pyenv.ProblemUnreadable}},
		},
		{
			name: "broken: 50 MB METADATA with no end to its header",
			spec: func(pyenv.Layout) pyenvtest.Spec { return cuda121() },
			mutate: func(t *testing.T, root, site string, l pyenv.Layout) {
				p := filepath.Join(site, "torch-2.5.1+cu121.dist-info", "METADATA")
				must(t, os.WriteFile(p, []byte("Metadata-Version: 2.1\nName: torch\nDescription: "), 0o644))
				must(t, os.Truncate(p, 50<<20)) // sparse: 50 MB of NULs, no newline
			},
			want: want{build: pyenv.BuildCUDA, cuda: "12.1", version: "2.5.1+cu121", distVersion: "2.5.1+cu121", installer: "uv", envInstaller: "uv", envKind: "venv",
				problems: []string{pyenv.ProblemTruncated}},
		},
		{
			name: "broken: half-deleted torch, version.py says cuda but no libtorch_cuda",
			spec: func(l pyenv.Layout) pyenvtest.Spec {
				s := cuda121()
				s.Torch.Libs = []string{torchLib(l, "torch_cpu"), torchLib(l, "c10")}
				return s
			},
			want: want{build: pyenv.BuildCUDA, cuda: "12.1", version: "2.5.1+cu121", distVersion: "2.5.1+cu121", installer: "uv", envInstaller: "uv", envKind: "venv",
				problems: []string{pyenv.ProblemHalfDeleted}},
		},
		{
			name: "broken: CPU torch over CUDA files left libtorch_cuda behind",
			spec: func(l pyenv.Layout) pyenvtest.Spec {
				return pyenvtest.Spec{Torch: &pyenvtest.Torch{DistVersion: "2.5.1+cpu", Installer: "pip\n", Libs: []string{torchLib(l, "torch_cpu"), torchLib(l, "torch_cuda")}}}
			},
			want: want{build: pyenv.BuildCPU, version: "2.5.1+cpu", distVersion: "2.5.1+cpu", installer: "pip", envInstaller: "pip", envKind: "venv",
				problems: []string{pyenv.ProblemLeftoverFiles}},
		},
		{
			name: "broken: torch/lib deleted",
			spec: func(pyenv.Layout) pyenvtest.Spec { return cuda121() },
			mutate: func(t *testing.T, root, site string, l pyenv.Layout) {
				must(t, os.RemoveAll(filepath.Join(site, "torch", "lib")))
			},
			want: want{build: pyenv.BuildCUDA, cuda: "12.1", version: "2.5.1+cu121", distVersion: "2.5.1+cu121", installer: "uv", envInstaller: "uv", envKind: "venv",
				problems: []string{pyenv.ProblemHalfDeleted}},
		},
		{
			name: "broken: dist-info without the torch folder",
			spec: func(pyenv.Layout) pyenvtest.Spec { return cuda121() },
			mutate: func(t *testing.T, root, site string, l pyenv.Layout) {
				must(t, os.RemoveAll(filepath.Join(site, "torch")))
			},
			want: want{build: pyenv.BuildCUDA, cuda: "12.1", version: "2.5.1+cu121", distVersion: "2.5.1+cu121", installer: "uv", envInstaller: "uv", envKind: "venv",
				problems: []string{pyenv.ProblemHalfDeleted}},
		},
	}
	for _, tt := range tests {
		for _, l := range layouts {
			t.Run(tt.name+"/"+string(l), func(t *testing.T) {
				root := t.TempDir()
				s := tt.spec(l)
				s.Layout = l
				must(t, pyenvtest.Write(root, s))
				if tt.mutate != nil {
					tt.mutate(t, root, sitePackages(root, l), l)
				}
				start := time.Now()
				env, err := pyenv.Inspect(root)
				if err != nil {
					t.Fatalf("Inspect: %v", err)
				}
				if d := time.Since(start); d > 2*time.Second {
					t.Errorf("Inspect took %v: reads are not bounded", d)
				}
				checkEnv(t, env, root, l, tt.want)
			})
		}
	}
}

func checkEnv(t *testing.T, env *pyenv.Env, root string, l pyenv.Layout, w want) {
	t.Helper()
	if env.Path != root || env.Layout != l || env.Python != "3.11" || env.Kind != w.envKind || env.Installer != w.envInstaller {
		t.Errorf("env = {path %s layout %s python %q kind %s installer %s}, want {%s %s 3.11 %s %s}",
			env.Path, env.Layout, env.Python, env.Kind, env.Installer, root, l, w.envKind, w.envInstaller)
	}
	if env.SitePackages != sitePackages(root, l) {
		t.Errorf("site-packages = %s, want %s", env.SitePackages, sitePackages(root, l))
	}
	if got := kinds(env.Problems); !slices.Equal(got, w.envProblems) {
		t.Errorf("env problems = %v (%+v), want %v", got, env.Problems, w.envProblems)
	}
	tp := env.Torch()
	if w.noTorch {
		if tp != nil {
			t.Errorf("torch = %+v, want none", tp)
		}
		return
	}
	if tp == nil {
		t.Fatal("torch not found")
	}
	got := want{build: tp.Build, cuda: tp.CUDA, rocm: tp.ROCm, xpu: tp.XPU, version: tp.Version, distVersion: tp.DistVersion, installer: tp.Installer}
	exp := want{build: w.build, cuda: w.cuda, rocm: w.rocm, xpu: w.xpu, version: w.version, distVersion: w.distVersion, installer: w.installer}
	if !equalWant(got, exp) {
		t.Errorf("torch = %+v\nwant    %+v", got, exp)
	}
	if pk := kinds(tp.Problems); !slices.Equal(pk, w.problems) {
		t.Errorf("torch problems = %v (%+v), want %v", pk, tp.Problems, w.problems)
	}
	if len(tp.Evidence) == 0 {
		t.Error("torch has no evidence")
	}
	for _, e := range tp.Evidence {
		if !strings.HasPrefix(e.File, root) || e.Says == "" {
			t.Errorf("evidence %+v is not an absolute file under the env with a saying", e)
		}
	}
}

func equalWant(a, b want) bool {
	return a.build == b.build && a.cuda == b.cuda && a.rocm == b.rocm && a.xpu == b.xpu &&
		a.version == b.version && a.distVersion == b.distVersion && a.installer == b.installer
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func TestInspectCompanions(t *testing.T) {
	for _, l := range layouts {
		t.Run(string(l), func(t *testing.T) {
			root := t.TempDir()
			s := cuda121()
			s.Layout = l
			s.Audio = &pyenvtest.Companion{Version: "2.5.1+cpu"}
			must(t, pyenvtest.Write(root, s))
			env, err := pyenv.Inspect(root)
			must(t, err)
			v, a := env.Packages[pyenv.TorchVision], env.Packages[pyenv.TorchAudio]
			if v == nil || v.Build != pyenv.BuildCUDA || v.CUDA != "12.1" || v.Version != "0.20.1+cu121" || v.Installer != "uv" {
				t.Errorf("torchvision = %+v, want cuda 12.1 0.20.1+cu121 by uv", v)
			}
			if a == nil || a.Build != pyenv.BuildCPU || a.Version != "2.5.1+cpu" {
				t.Errorf("torchaudio = %+v, want cpu 2.5.1+cpu", a)
			}
		})
	}
}

func TestInspectLlama(t *testing.T) {
	tests := []struct {
		version  string
		backends []string
		want     []string
		build    pyenv.Build
	}{
		{"0.2.79", []string{"cuda"}, []string{"cpu", "cuda"}, pyenv.BuildCUDA},
		{"0.2.79", nil, []string{"cpu"}, pyenv.BuildCPU},
		{"0.2.85", []string{"cuda"}, []string{"cpu", "cuda"}, pyenv.BuildCUDA},
		{"0.3.1", []string{"hip"}, []string{"cpu", "hip"}, pyenv.BuildROCm},
		{"0.3.1", nil, []string{"cpu"}, pyenv.BuildCPU},
		{"0.3.4", []string{"cuda"}, []string{"cpu", "cuda"}, pyenv.BuildCUDA},
		{"0.3.4", []string{"vulkan"}, []string{"cpu", "vulkan"}, pyenv.BuildUnknown},
		{"0.3.4", nil, []string{"cpu"}, pyenv.BuildCPU},
	}
	for _, tt := range tests {
		for _, l := range layouts {
			t.Run(tt.version+"/"+strings.Join(tt.backends, "+")+"/"+string(l), func(t *testing.T) {
				root := t.TempDir()
				must(t, pyenvtest.Write(root, pyenvtest.Spec{Layout: l, Llama: &pyenvtest.Llama{Version: tt.version, Backends: tt.backends}}))
				env, err := pyenv.Inspect(root)
				must(t, err)
				p := env.Packages[pyenv.LlamaCppPython]
				if p == nil {
					t.Fatal("llama-cpp-python not found")
				}
				if !slices.Equal(p.Backends, tt.want) || p.Build != tt.build || p.Version != tt.version || len(p.Problems) != 0 {
					t.Errorf("got backends %v build %s version %s problems %v, want %v %s %s", p.Backends, p.Build, p.Version, p.Problems, tt.want, tt.build, tt.version)
				}
			})
		}
	}
}

// TestInspectLlamaWithoutItsLibrary: a llama-cpp-python in which no
// libllama or ggml library is found has no backend to name, the CPU's
// included: it is described as having no library (unable to load where
// the install is half-deleted), never as "backends: cpu", and a problem
// says why (half-deleted: import fails; an editable
// install whose code is not found: its backends are not known).
func TestInspectLlamaWithoutItsLibrary(t *testing.T) {
	for _, tt := range []struct {
		name   string
		damage func(t *testing.T, site string)
		kind   string
		says   string
		text   string // Describe
	}{
		{"no llama_cpp/lib", func(t *testing.T, site string) { must(t, os.RemoveAll(filepath.Join(site, "llama_cpp", "lib"))) },
			pyenv.ProblemHalfDeleted, "llama_cpp holds no libllama or ggml library", "no libllama or ggml library: it cannot load"},
		{"no llama_cpp folder", func(t *testing.T, site string) { must(t, os.RemoveAll(filepath.Join(site, "llama_cpp"))) },
			pyenv.ProblemHalfDeleted, "no llama_cpp folder beside its dist-info", "no libllama or ggml library: it cannot load"},
		{"an editable install whose code is not found", func(t *testing.T, site string) {
			must(t, os.RemoveAll(filepath.Join(site, "llama_cpp")))
			writeFile(t, site, "llama_cpp_python-0.3.8.dist-info/direct_url.json", `{"dir_info": {"editable": true}, "url": "file:///src/llama-cpp-python"}`)
		}, pyenv.ProblemMalformed, "an editable install of " + filepath.FromSlash("/src/llama-cpp-python") + " whose llama_cpp folder GPU Canary did not find", "no libllama or ggml library found"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			must(t, pyenvtest.Write(root, pyenvtest.Spec{Llama: &pyenvtest.Llama{Version: "0.3.8", Backends: []string{"cpu"}}}))
			tt.damage(t, filepath.Join(root, "lib", "python3.11", "site-packages"))
			env, err := pyenv.Inspect(root)
			must(t, err)
			p := env.Packages[pyenv.LlamaCppPython]
			if p == nil {
				t.Fatal("llama-cpp-python not found")
			}
			if len(p.Backends) != 0 || p.Build == pyenv.BuildCPU {
				t.Errorf("backends %v, build %s: a backend is claimed with no library", p.Backends, p.Build)
			}
			if got := pyenv.Describe(pyenv.LlamaCppPython, p); got != tt.text {
				t.Errorf("Describe = %q, want %q", got, tt.text)
			}
			if len(p.Problems) != 1 || p.Problems[0].Kind != tt.kind || !strings.Contains(p.Problems[0].Message, tt.says) {
				t.Errorf("problems %+v, want one %s saying %q", p.Problems, tt.kind, tt.says)
			}
		})
	}
}

func TestInspectBitsAndBytes(t *testing.T) {
	for _, l := range layouts {
		for _, libs := range [][]string{{"124"}, {"124", "126"}, nil} {
			t.Run(string(l)+"/"+strings.Join(libs, "+"), func(t *testing.T) {
				root := t.TempDir()
				must(t, pyenvtest.Write(root, pyenvtest.Spec{Layout: l, BNB: &pyenvtest.BNB{Version: "0.45.0", CUDALibs: libs}}))
				env, err := pyenv.Inspect(root)
				must(t, err)
				p := env.Packages[pyenv.BitsAndBytes]
				if p == nil {
					t.Fatal("bitsandbytes not found")
				}
				wantBuild := pyenv.BuildCUDA
				if libs == nil {
					wantBuild = pyenv.BuildCPU
				}
				if !slices.Equal(p.Backends, libs) || p.Build != wantBuild || p.Version != "0.45.0" || len(p.Libs) != len(libs)+1 {
					t.Errorf("got %+v, want backends %v build %s", p, libs, wantBuild)
				}
			})
		}
	}
}

func TestInspectNvidia(t *testing.T) {
	for _, l := range layouts {
		t.Run(string(l), func(t *testing.T) {
			root := t.TempDir()
			s := cuda121()
			s.Layout = l
			s.Nvidia = map[string]string{"nvidia-cuda-runtime-cu12": "12.1.105", "nvidia-cublas-cu12": "12.1.3.1", "nvidia-cudnn-cu12": "9.1.0.70"}
			must(t, pyenvtest.Write(root, s))
			env, err := pyenv.Inspect(root)
			must(t, err)
			for name, v := range s.Nvidia {
				p := env.Packages[name]
				if p == nil || p.Version != v {
					t.Errorf("%s = %+v, want version %s", name, p, v)
				}
			}
			if rt := env.Packages["nvidia-cuda-runtime-cu12"]; rt == nil || rt.CUDA != "12.1" {
				t.Errorf("nvidia-cuda-runtime-cu12 CUDA = %+v, want 12.1", rt)
			}
		})
	}
}

func TestInspectErrors(t *testing.T) {
	notEnv := t.TempDir()
	if _, err := pyenv.Inspect(notEnv); !errors.Is(err, pyenv.ErrNotEnv) || !strings.Contains(err.Error(), notEnv) {
		t.Errorf("Inspect(plain dir) = %v, want ErrNotEnv naming the path", err)
	}
	missing := filepath.Join(notEnv, "gone")
	if _, err := pyenv.Inspect(missing); !errors.Is(err, os.ErrNotExist) || !strings.Contains(err.Error(), missing) {
		t.Errorf("Inspect(missing) = %v, want a not-exist error naming the path", err)
	}
}

func TestInspectRelativePathIsAbsolute(t *testing.T) {
	root := t.TempDir()
	must(t, pyenvtest.Write(filepath.Join(root, ".venv"), cuda121()))
	t.Chdir(root)
	env, err := pyenv.Inspect("./sub/../.venv/")
	must(t, err)
	if want := filepath.Join(root, ".venv"); env.Path != want {
		t.Errorf("Path = %q, want %q", env.Path, want)
	}
}

func TestInspectPermissionDenied(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root reads a mode-000 file anyway; the directory and dangling-symlink cases cover unreadable files")
	}
	root := t.TempDir()
	must(t, pyenvtest.Write(root, cuda121()))
	vp := filepath.Join(sitePackages(root, pyenv.LayoutPOSIX), "torch", "version.py")
	must(t, os.Chmod(vp, 0))
	env, err := pyenv.Inspect(root)
	must(t, err)
	if got := kinds(env.Torch().Problems); !slices.Equal(got, []string{pyenv.ProblemUnreadable}) {
		t.Errorf("problems = %v, want [unreadable]", got)
	}
	if env.Torch().Build != pyenv.BuildCUDA || env.Torch().CUDA != "12.1" {
		t.Errorf("torch = %s %s, want the local tag's cuda 12.1", env.Torch().Build, env.Torch().CUDA)
	}
}
