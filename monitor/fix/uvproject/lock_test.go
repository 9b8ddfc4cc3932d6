package uvproject

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const lockSplit = `version = 1
requires-python = ">=3.11"
resolution-markers = [
    "sys_platform == 'linux'",
    "sys_platform != 'linux'",
]

[[package]]
name = "torch"
version = "2.5.1"
source = { registry = "https://pypi.org/simple" }
resolution-markers = [
    "sys_platform != 'linux'",
]
wheels = [
    { url = "https://files.pythonhosted.org/packages/torch-2.5.1-cp311-cp311-win_amd64.whl", hash = "sha256:00", size = 1 },
]

[[package]]
name = "torch"
version = "2.5.1+cu121"
source = { registry = "https://download.pytorch.org/whl/cu121" }
resolution-markers = [
    "sys_platform == 'linux'",
]
wheels = [
    { url = "https://download.pytorch.org/whl/cu121/torch-2.5.1%2Bcu121-cp311-cp311-linux_x86_64.whl", hash = "sha256:00" },
]
`

const lockCPU = `version = 1
requires-python = ">=3.11"

[[package]]
name = "torch"
version = "2.5.1+cpu"
source = { registry = "https://download.pytorch.org/whl/cpu" }
`

const lockTransitive = `version = 1
requires-python = ">=3.11"

[[package]]
name = "unsloth"
version = "2024.11.1"
source = { registry = "https://pypi.org/simple" }
dependencies = [{ name = "torch" }]

[[package]]
name = "torch"
version = "2.5.1"
source = { registry = "https://pypi.org/simple" }
`

func project(t *testing.T, pyproject, lock string) (Project, string) {
	t.Helper()
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "pyproject.toml"), []byte(pyproject), 0o644)
	if lock != "" {
		os.WriteFile(filepath.Join(dir, "uv.lock"), []byte(lock), 0o644)
	}
	env := filepath.Join(dir, ".venv")
	os.MkdirAll(env, 0o755)
	p, ok := FindProject(env)
	if !ok {
		t.Fatal("project not found")
	}
	return p, env
}

func TestWillReplaceTorch(t *testing.T) {
	direct := "[project]\nname = \"p\"\nversion = \"0\"\ndependencies = [\"torch>=2.0\"]\n"
	tests := []struct {
		name, pyproject, lock, platform string
		risk                            string
	}{
		{"split lock on linux is safe", direct, lockSplit, "linux", ""},
		{"split lock on windows takes PyPI", direct, lockSplit, "windows", "from PyPI, a CPU-only build"},
		{"lock pins +cpu", direct, lockCPU, "linux", "torch 2.5.1+cpu for linux"},
		{"transitive from PyPI on windows", "[project]\nname = \"p\"\nversion = \"0\"\ndependencies = [\"unsloth\"]\n", lockTransitive, "windows", "only a dependency of a dependency"},
		{"transitive from PyPI on linux is CUDA", "[project]\nname = \"p\"\nversion = \"0\"\ndependencies = [\"unsloth\"]\n", lockTransitive, "linux", ""},
		{"no lock, unpinned, windows", direct, "", "windows", "next `uv lock` resolves it from PyPI"},
		{"no lock, linux", direct, "", "linux", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, _ := project(t, tt.pyproject, tt.lock)
			info, err := ReadProject(p)
			if err != nil {
				t.Fatal(err)
			}
			risks := WillReplaceTorch(info, tt.platform, true)
			if tt.risk == "" {
				if len(risks) != 0 {
					t.Errorf("risks = %+v", risks)
				}
				return
			}
			if len(risks) != 1 || !strings.Contains(risks[0].Reason, tt.risk) {
				t.Errorf("risks = %+v, want one with %q", risks, tt.risk)
			}
			if got := WillReplaceTorch(info, tt.platform, false); len(got) != 0 {
				t.Errorf("a CPU torch installed now cannot be replaced by a CPU one: %+v", got)
			}
		})
	}
}

func TestReadProject(t *testing.T) {
	p, _ := project(t, "[project]\nname = \"p\"\nversion = \"0\"\ndependencies = [\"torch\"]\n\n[tool.uv.sources]\ntorch = [{ index = \"pytorch-cu121\", marker = \"sys_platform == 'linux'\" }]\n", lockSplit)
	info, err := ReadProject(p)
	if err != nil {
		t.Fatal(err)
	}
	if !info.Direct || info.Pinned != "pytorch-cu121" || len(info.Torch) != 2 {
		t.Fatalf("info = %+v", info)
	}
	if info.Torch[1].Registry != "https://download.pytorch.org/whl/cu121" || strings.Join(info.Torch[1].Platforms, ",") != "linux" || strings.Join(info.Torch[0].Platforms, ",") != "windows" {
		t.Errorf("torch entries = %+v", info.Torch)
	}
	bad, _ := project(t, "[project]\nname = \"p\"\n", "version = [")
	if _, err := ReadProject(bad); err == nil || !strings.Contains(err.Error(), "uv.lock") {
		t.Errorf("malformed lock: %v", err)
	}
}

func TestFindProjectWalksUp(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "pyproject.toml"), []byte("[project]\n"), 0o644)
	env := filepath.Join(dir, "envs", "gpu", ".venv")
	os.MkdirAll(env, 0o755)
	if p, ok := FindProject(env); !ok || p.Dir != dir || p.Lock != "" {
		t.Errorf("FindProject = %+v, %v", p, ok)
	}
	if _, ok := FindProject(filepath.Join(t.TempDir(), ".venv")); ok {
		t.Error("found a project where there is none")
	}
}
