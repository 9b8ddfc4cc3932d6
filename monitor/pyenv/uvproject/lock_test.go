package uvproject

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/pelletier/go-toml/v2"
)

const (
	pyDirect     = "[project]\nname = \"p\"\nversion = \"0\"\ndependencies = [\"torch>=2.0\", \"numpy\"]\n"
	pyTransitive = "[project]\nname = \"p\"\nversion = \"0\"\ndependencies = [\"sentence-transformers\"]\n"
	pyPinned     = pyDirect + "\n[[tool.uv.index]]\nname = \"pytorch-cu121\"\nurl = \"https://download.pytorch.org/whl/cu121\"\nexplicit = true\n\n[tool.uv.sources]\ntorch = [{ index = \"pytorch-cu121\", marker = \"sys_platform == 'linux'\" }]\n"
	pyPinnedCPU  = pyDirect + "\n[[tool.uv.index]]\nname = \"cpu\"\nurl = \"https://download.pytorch.org/whl/cpu\"\n\n[tool.uv.sources]\ntorch = { index = \"cpu\" }\n"
	pyGroup      = "[project]\nname = \"p\"\nversion = \"0\"\n\n[dependency-groups]\ngpu = [\"Torch==2.5.1\", { include-group = \"dev\" }]\ndev = [\"pytest\"]\n"
)

// project builds a uv project in a temporary folder: pyproject.toml, the
// lock from testdata/lock (none when lock is ""), and an empty .venv.
func project(t *testing.T, pyproject, lock string) Project {
	t.Helper()
	dir := t.TempDir()
	write(t, filepath.Join(dir, "pyproject.toml"), pyproject)
	if lock != "" {
		b, err := os.ReadFile(filepath.Join("testdata", "lock", lock))
		if err != nil {
			t.Fatal(err)
		}
		write(t, filepath.Join(dir, "uv.lock"), string(b))
	}
	env := filepath.Join(dir, ".venv")
	write(t, filepath.Join(env, "pyvenv.cfg"), "home = /usr/bin\nuv = 0.5.4\n")
	p, ok := FindProject(env)
	if !ok {
		t.Fatalf("no project found for %s", env)
	}
	return p
}

func write(t *testing.T, path, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestWillReplaceTorch(t *testing.T) {
	tests := []struct {
		name, pyproject, lock, platform string
		risk                            string // "" for none
	}{
		{"split lock on linux takes cu121", pyDirect, "split.lock", "linux", ""},
		{"split lock on windows takes PyPI", pyDirect, "split.lock", "windows", "uv.lock takes torch 2.5.1 from PyPI for Windows, which is a CPU-only build"},
		{"lock pins +cpu on linux", pyDirect, "cpu.lock", "linux", "torch 2.5.1+cpu from https://download.pytorch.org/whl/cpu for Linux, which is a CPU-only build"},
		{"lock pins +cpu on windows", pyDirect, "cpu.lock", "windows", "for Windows, which is a CPU-only build"},
		{"transitive from PyPI on windows", pyTransitive, "transitive.lock", "windows", "torch is only a dependency of a dependency here, and uv.lock takes torch 2.5.1 from PyPI"},
		{"transitive from PyPI on linux is a CUDA build", pyTransitive, "transitive.lock", "linux", ""},
		{"pinned but the lock has not followed", pyPinned, "split.lock", "windows", "run `uv lock`"},
		{"extras choose cpu or cu128 on linux", pyDirect, "extras.lock", "linux", ""},
		{"extras on windows have only cu128", pyDirect, "extras.lock", "windows", ""},
		{"cpu only for aarch64", pyDirect, "aarch64.lock", "linux", ""},
		{"no lock, unpinned, windows", pyDirect, "", "windows", "the next `uv lock`"},
		{"no lock, unpinned, linux uses PyPI's CUDA build", pyDirect, "", "linux", ""},
		{"no lock, pinned to CUDA", pyPinned, "", "windows", ""},
		{"no lock, pinned to the cpu index", pyPinnedCPU, "", "linux", `pins torch to index "cpu"`},
		{"no lock, torch in a dependency group", pyGroup, "", "windows", "without pinning an index"},
		{"no lock, no torch dependency", pyTransitive, "", "windows", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			info, err := ReadProject(project(t, tt.pyproject, tt.lock))
			if err != nil {
				t.Fatal(err)
			}
			risks := WillReplaceTorch(info, tt.platform, true, nil)
			if tt.risk == "" {
				if len(risks) != 0 {
					t.Errorf("risks = %+v, want none", risks)
				}
				return
			}
			if len(risks) != 1 || !strings.Contains(risks[0].Reason, tt.risk) || risks[0].Platform != tt.platform {
				t.Fatalf("risks = %+v, want one on %s with %q", risks, tt.platform, tt.risk)
			}
			if r := risks[0].Reason; strings.HasSuffix(r, ".") || strings.ToLower(r[:1]) != r[:1] {
				t.Errorf("reason %q must read inside a sentence", r)
			}
			if got := WillReplaceTorch(info, tt.platform, false, nil); len(got) != 0 {
				t.Errorf("with a CPU torch installed there is nothing to lose, got %+v", got)
			}
		})
	}
}

func TestReadProject(t *testing.T) {
	info, err := ReadProject(project(t, pyPinned, "split.lock"))
	if err != nil {
		t.Fatal(err)
	}
	if !info.Direct || info.Pinned != "pytorch-cu121" || info.PinnedURL != "https://download.pytorch.org/whl/cu121" {
		t.Errorf("info = %+v", info)
	}
	want := []TorchSource{
		{Version: "2.5.1", Registry: "https://pypi.org/simple", Marker: "sys_platform != 'linux'", CPU: true, Platforms: []string{"windows"}},
		{Version: "2.5.1+cu121", Registry: "https://download.pytorch.org/whl/cu121", Marker: "sys_platform == 'linux'", Platforms: []string{"linux"}},
	}
	if len(info.Torch) != len(want) {
		t.Fatalf("torch entries = %+v", info.Torch)
	}
	for i := range want {
		g, w := info.Torch[i], want[i]
		if g.Version != w.Version || g.Registry != w.Registry || g.Marker != w.Marker || g.CPU != w.CPU || !slices.Equal(g.Platforms, w.Platforms) {
			t.Errorf("torch[%d] = %+v, want %+v", i, g, w)
		}
	}

	group, err := ReadProject(project(t, pyGroup, ""))
	if err != nil || !group.Direct || len(group.Torch) != 0 {
		t.Errorf("a dependency group naming Torch: %+v, %v", group, err)
	}
}

func TestReadProjectErrors(t *testing.T) {
	p := project(t, pyDirect, "malformed.lock")
	_, err := ReadProject(p)
	var de *toml.DecodeError
	if !errors.As(err, &de) || !strings.Contains(err.Error(), p.Lock) {
		t.Errorf("malformed lock: %v, want a wrapped DecodeError naming %s", err, p.Lock)
	}
	bad := project(t, "[project\nname = 1\n", "")
	if _, err := ReadProject(bad); err == nil || !strings.Contains(err.Error(), bad.Pyproject) {
		t.Errorf("malformed pyproject: %v", err)
	}
	gone := project(t, pyDirect, "cpu.lock")
	os.Remove(gone.Lock)
	if _, err := ReadProject(gone); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a lock removed after FindProject: %v", err)
	}
}

func TestFindProject(t *testing.T) {
	tests := []struct {
		name  string
		files map[string]string // relative path -> content
		env   string
		want  string // project dir relative to the root, "-" for none
		lock  bool
	}{
		{"venv beside a locked project", map[string]string{"pyproject.toml": pyDirect, "uv.lock": "version = 1\n"}, ".venv", ".", true},
		{"walks up from a deeper env", map[string]string{"pyproject.toml": "[tool.uv]\n"}, "envs/gpu/.venv", ".", false},
		{"a uv-made venv is enough", map[string]string{"pyproject.toml": pyDirect, ".venv/pyvenv.cfg": "uv = 0.5.4\n"}, ".venv", ".", false},
		{"a poetry project is not a uv project", map[string]string{"pyproject.toml": "[tool.poetry]\nname = \"x\"\n"}, ".venv", "-", false},
		{"stops at the repository root", map[string]string{"pyproject.toml": pyDirect, "uv.lock": "", "repo/.git/HEAD": "ref\n"}, "repo/.venv", "-", false},
		{"not more than five levels", map[string]string{"pyproject.toml": pyDirect, "uv.lock": ""}, "a/b/c/d/e/.venv", "-", false},
		{"nothing there", map[string]string{}, ".venv", "-", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			for rel, data := range tt.files {
				write(t, filepath.Join(root, rel), data)
			}
			env := filepath.Join(root, tt.env)
			if err := os.MkdirAll(env, 0o755); err != nil {
				t.Fatal(err)
			}
			p, ok := FindProject(env)
			if tt.want == "-" {
				if ok {
					t.Errorf("found %+v, want none", p)
				}
				return
			}
			dir := filepath.Join(root, tt.want)
			if !ok || p.Dir != dir || p.Pyproject != filepath.Join(dir, "pyproject.toml") || (p.Lock != "") != tt.lock {
				t.Errorf("FindProject = %+v, %v; want the project in %s (lock %v)", p, ok, dir, tt.lock)
			}
		})
	}
}

func TestMarkerOn(t *testing.T) {
	tests := []struct {
		marker         string
		linux, windows tri
	}{
		{"", yes, yes},
		{"sys_platform == 'linux'", yes, no},
		{"sys_platform != 'linux'", no, yes},
		{`platform_system == "Windows"`, no, yes},
		{"sys_platform == 'linux' or sys_platform == 'win32'", yes, yes},
		{"sys_platform == 'darwin'", no, no},
		{"platform_machine == 'aarch64' and sys_platform == 'linux'", maybe, no},
		{"(platform_machine != 'aarch64' and sys_platform == 'linux') or sys_platform == 'win32'", maybe, yes},
		{"python_full_version < '3.12' and os_name == 'nt'", no, maybe},
		{"'linux' in sys_platform", yes, no},
		{"sys_platform not in 'win32 cygwin'", yes, no},
		{"sys_platform == 'linux' and (", maybe, maybe},
		{"sys_platform ==", maybe, maybe},
	}
	for _, tt := range tests {
		t.Run(tt.marker, func(t *testing.T) {
			if l, w := markerOn(tt.marker, "linux"), markerOn(tt.marker, "windows"); l != tt.linux || w != tt.windows {
				t.Errorf("linux %v windows %v, want %v %v", l, w, tt.linux, tt.windows)
			}
		})
	}
}

func TestBuild(t *testing.T) {
	tests := []struct {
		version, registry, platform, want, tag string
	}{
		{"2.5.1", "https://pypi.org/simple", "linux", buildCUDA, ""},
		{"2.5.1", "https://pypi.org/simple", "windows", buildCPU, ""},
		{"2.5.1", "https://mirrors.example.com/pypi/simple/", "windows", buildCPU, ""},
		{"2.5.1+cu121", "https://pypi.org/simple", "windows", buildCUDA, "cu121"},
		{"2.5.1", "https://download.pytorch.org/whl/cpu", "linux", buildCPU, ""},
		{"2.5.1", "https://download.pytorch.org/whl/cu124/", "windows", buildCUDA, "cu124"},
		{"2.7.1+cu126", "https://download.pytorch.org/whl/cu126", "linux", buildCUDA, "cu126"},
		{"2.5.1+rocm6.2", "https://download.pytorch.org/whl/rocm6.2", "linux", buildROCm, ""},
		{"2.5.1", "https://download.pytorch.org/whl/cpu/torch-2.5.1%2Bcpu-cp311-cp311-linux_x86_64.whl", "linux", buildCPU, ""},
		{"2.5.1", "https://download.pytorch.org/whl/cu121/torch-2.5.1%2Bcu121-cp311-cp311-linux_x86_64.whl", "linux", buildCUDA, "cu121"},
		{"2.5.1", "../wheels/torch.whl", "linux", buildUnknown, ""},
	}
	for _, tt := range tests {
		t.Run(tt.version+" "+tt.registry+" "+tt.platform, func(t *testing.T) {
			if got, tag := (TorchSource{Version: tt.version, Registry: tt.registry}).variant(tt.platform); got != tt.want || tag != tt.tag {
				t.Errorf("variant = %q, %q; want %q, %q", got, tag, tt.want, tt.tag)
			}
		})
	}
}

// TestWillReplaceTorchJudged: a CUDA entry of the lock is a risk when the
// judge finds it worse here (audit issue 1: PyPI's cu126 torch 2.7 over a
// cu128 one on a Blackwell GPU), an error-grade one when it cannot run;
// an entry under an extra is a risk only when no good CUDA entry could
// hold instead; a lock the project's own pin produced says the pin must
// change. The judge is asked with the entry's version, tag and platform.
func TestWillReplaceTorchJudged(t *testing.T) {
	var asked []LockedCUDA
	judge := func(bad ...string) Judge {
		return func(l LockedCUDA) (string, bool) {
			asked = append(asked, l)
			if slices.Contains(bad, l.Version) {
				return "a CUDA build with no kernels here", true
			}
			return "", false
		}
	}
	tests := []struct {
		name, pyproject, lock, platform string
		judge                           Judge
		risks                           []Risk // Reason: a part it must contain
		asked                           []LockedCUDA
	}{
		{"PyPI on Linux judged bad", pyTransitive, "transitive.lock", "linux", judge("2.5.1"),
			[]Risk{{Platform: "linux", Reason: "torch is only a dependency of a dependency here, and uv.lock takes torch 2.5.1 from PyPI for Linux, which is a CUDA build with no kernels here, so the next `uv sync` or `uv run` will replace it", CannotRun: true}},
			[]LockedCUDA{{Version: "2.5.1", Platform: "linux"}}},
		{"PyPI on Linux judged fine", pyTransitive, "transitive.lock", "linux", judge(), nil,
			[]LockedCUDA{{Version: "2.5.1", Platform: "linux"}}},
		{"the cu121 entry on Linux judged bad", pyDirect, "split.lock", "linux", judge("2.5.1+cu121"),
			[]Risk{{Platform: "linux", Reason: "takes torch 2.5.1+cu121 from https://download.pytorch.org/whl/cu121 for Linux, which is a CUDA build with no kernels here", CannotRun: true}},
			[]LockedCUDA{{Version: "2.5.1+cu121", Tag: "cu121", Platform: "linux"}}},
		{"the project's own pin made it", pyPinned, "split.lock", "linux", judge("2.5.1+cu121"),
			[]Risk{{Platform: "linux", Reason: `pyproject.toml itself sends torch to index "pytorch-cu121" (https://download.pytorch.org/whl/cu121): that pin must change`, CannotRun: true, PinnedThere: true}},
			[]LockedCUDA{{Version: "2.5.1+cu121", Tag: "cu121", Platform: "linux"}}},
		{"pinned to cu121 but the lock takes PyPI", pyPinned, "transitive.lock", "linux", judge("2.5.1"),
			[]Risk{{Platform: "linux", Reason: "uv.lock has not followed: run `uv lock`", CannotRun: true, LockStale: true}},
			[]LockedCUDA{{Version: "2.5.1", Platform: "linux"}}},
		{"windows takes PyPI's CPU build, not judged", pyDirect, "split.lock", "windows", judge("2.5.1", "2.5.1+cu121"),
			[]Risk{{Platform: "windows", Reason: "which is a CPU-only build"}}, nil},
		{"extras: a good cu128 entry may hold instead of the cpu one", pyDirect, "extras.lock", "linux", judge(), nil,
			[]LockedCUDA{{Version: "2.9.1+cu128", Tag: "cu128", Platform: "linux"}}},
		{"extras: no good CUDA entry may hold", pyDirect, "extras.lock", "linux", judge("2.9.1+cu128"),
			[]Risk{{Platform: "linux", Reason: "2.9.1+cpu"}, {Platform: "linux", Reason: "2.9.1+cu128", CannotRun: true}},
			[]LockedCUDA{{Version: "2.9.1+cu128", Tag: "cu128", Platform: "linux"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			info, err := ReadProject(project(t, tt.pyproject, tt.lock))
			if err != nil {
				t.Fatal(err)
			}
			asked = nil
			risks := WillReplaceTorch(info, tt.platform, true, tt.judge)
			if len(risks) != len(tt.risks) {
				t.Fatalf("risks = %+v, want %d", risks, len(tt.risks))
			}
			for i, w := range tt.risks {
				g := risks[i]
				if g.Platform != w.Platform || !strings.Contains(g.Reason, w.Reason) || g.CannotRun != w.CannotRun || g.PinnedThere != w.PinnedThere || g.LockStale != w.LockStale {
					t.Errorf("risk %d = %+v, want %+v", i, g, w)
				}
			}
			if !slices.Equal(asked, tt.asked) {
				t.Errorf("judge asked %+v, want %+v", asked, tt.asked)
			}
		})
	}
}
