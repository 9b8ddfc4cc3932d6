package pyenv_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/gpucanary/gpucanary/monitor/pyenv"
)

// TestPthEditableInstalledByPip: torch installed with real `pip install
// -e` (setuptools' PEP 660 backend, offline: no build isolation) in both
// of setuptools' forms, a path .pth for a src layout and an editable
// finder for a flat one, is read where the venv's Python finds it: the
// editable copy in an isolated venv, the system's torch (when it has
// one) in a venv with --system-site-packages, since the finder comes
// after sys.path.
func TestPthEditableInstalledByPip(t *testing.T) {
	py := hostPython(t)
	out, err := exec.Command(py, "-c", "import setuptools, pip; print(setuptools.__version__)").Output()
	if err != nil {
		t.Skipf("%s has no pip and setuptools: %v", py, err)
	}
	if major, _ := strconv.Atoi(strings.SplitN(strings.TrimSpace(string(out)), ".", 2)[0]); major < 64 {
		t.Skipf("setuptools %s predates PEP 660 editable installs (64)", out)
	}
	for _, layout := range []struct{ name, pkgDir, toml string }{
		{"src layout: a path .pth", "src/torch", ""},
		{"flat layout: the editable finder", "torch", "[tool.setuptools]\npackages = [\"torch\"]\n"},
	} {
		t.Run(layout.name, func(t *testing.T) {
			dir := t.TempDir()
			proj := filepath.Join(dir, "pytorch")
			writeFile(t, proj, "pyproject.toml", "[build-system]\nrequires = [\"setuptools>=64\"]\nbuild-backend = \"setuptools.build_meta\"\n\n"+
				"[project]\nname = \"torch\"\nversion = \"2.5.1+cu121\"\n\n"+layout.toml)
			pkg := filepath.Join(proj, filepath.FromSlash(layout.pkgDir))
			writeFile(t, pkg, "__init__.py", "from .version import __version__\n")
			writeFile(t, pkg, "version.py", "__version__ = '2.5.1+cu121'\ndebug = False\ncuda = '12.1'\ngit_version = 'Unknown'\nhip = None\n")
			writeFile(t, pkg, "lib/libtorch_cpu.so", "\x7fELF")
			writeFile(t, pkg, "lib/libtorch_cuda.so", "\x7fELF")
			venv := filepath.Join(dir, "venv")
			if out, err := exec.Command(py, "-m", "venv", "--without-pip", "--system-site-packages", venv).CombinedOutput(); err != nil {
				t.Skipf("%s -m venv: %v\n%s", py, err, out)
			}
			pip := exec.Command(py, "-m", "pip", "--python", filepath.Join(venv, "bin", "python"), "--disable-pip-version-check", "--no-input", "-q",
				"install", "--no-index", "--no-build-isolation", "--no-deps", "-e", proj)
			pip.Env = append(os.Environ(), "PIP_CONFIG_FILE=/dev/null", "PIP_NO_CACHE_DIR=1", "HOME="+dir)
			if out, err := pip.CombinedOutput(); err != nil {
				t.Fatalf("pip install -e: %v\n%s", err, out)
			}
			for _, system := range []bool{true, false} {
				if !system {
					cfg := filepath.Join(venv, "pyvenv.cfg")
					data, err := os.ReadFile(cfg)
					must(t, err)
					must(t, os.WriteFile(cfg, []byte(strings.Replace(string(data), "include-system-site-packages = true", "include-system-site-packages = false", 1)), 0o644))
				}
				cmd := exec.Command(filepath.Join(venv, "bin", "python"), "-c", "import importlib.util as u; print(u.find_spec('torch').origin)")
				cmd.Env, cmd.Dir = []string{"HOME=" + dir, "PATH=" + os.Getenv("PATH")}, dir
				out, err := cmd.Output()
				if err != nil {
					t.Fatalf("the venv's python: %v", err)
				}
				origin := strings.TrimSpace(string(out))
				env, err := pyenv.InspectWith(venv, noUser(dir))
				must(t, err)
				tor := env.Torch()
				if tor == nil || filepath.Join(tor.Site, "torch", "__init__.py") != origin && filepath.Join(tor.Site, "__init__.py") != origin {
					t.Fatalf("system site %v: Python finds torch at %s; GPU Canary read %+v (sites %+v)", system, origin, tor, env.Sites)
				}
				if system {
					continue
				}
				if origin != filepath.Join(pkg, "__init__.py") {
					t.Fatalf("an isolated venv's Python finds torch at %s, not the editable one", origin)
				}
				if tor.Version != "2.5.1+cu121" || tor.Build != pyenv.BuildCUDA || tor.Installer != "pip" || !strings.HasSuffix(tor.DistInfo, "torch-2.5.1+cu121.dist-info") || len(tor.Problems) > 0 {
					t.Errorf("the editable torch read as %+v", tor)
				}
			}
		})
	}
}
