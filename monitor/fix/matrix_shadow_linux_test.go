package fix_test

import (
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/gpucanary/gpucanary/monitor/finding"
	"github.com/gpucanary/gpucanary/monitor/fixplan"
	"github.com/gpucanary/gpucanary/monitor/gpu"
	"github.com/gpucanary/gpucanary/monitor/pyenv"
	"github.com/gpucanary/gpucanary/monitor/wheeltest"
)

// TestShadowPlansClearTheirFindings is TestPlansClearTheirFindings'
// property for a torch that is not the environment's own: a CPU torch
// that real `pip install --user` put in the user site. Above an
// interpreter prefix's CUDA torch (a conda env's place on the import
// path), the plan removes it, and a reinstall into the prefix, which
// left pip's uninstall of the user copy and another build's dist-info
// beside the prefix's own, is never proposed; behind a venv that sees
// the system's site packages and has no torch of its own, a reinstall
// into the venv comes first and is the plan. It runs alone: the user
// site is HOME's, which fix.Run reads the environment with.
func TestShadowPlansClearTheirFindings(t *testing.T) {
	py := wheeltest.Python(t)
	idx := wheeltest.NewIndex(t.TempDir())
	for _, tag := range []string{"cpu", "cu121", "cu124"} {
		if err := idx.Add(tag, wheeltest.Torch("2.5.1", tag)); err != nil {
			t.Fatal(err)
		}
	}
	srv := httptest.NewServer(idx)
	defer srv.Close()
	look := func(name string) (string, error) {
		if name == "python3" {
			return py, nil
		}
		return "", exec.ErrNotFound
	}
	opts := rulesOptions(srv.URL, look)
	homes := map[string]string{} // an environment (or a copy) -> the HOME of its user site
	use := func(t *testing.T, dir string) {
		t.Setenv("HOME", homes[dir])
		t.Setenv("PYTHONUSERBASE", "")
		t.Setenv("PYTHONNOUSERSITE", "")
	}
	covered := map[string]bool{}
	judge := matrixJudge{index: srv.URL, look: look, opts: opts, cover: func(what string) { covered[what] = true },
		inspect: func(t *testing.T, dir string) *pyenv.Env {
			use(t, dir)
			return inspectPath(t, dir)
		},
		apply: func(t *testing.T, env *pyenv.Env, g gpu.State, p fixplan.Plan) string {
			dir, home := filepath.Join(t.TempDir(), "copy"), filepath.Join(t.TempDir(), "home")
			if out, err := exec.Command("cp", "-a", homes[env.Path], home).CombinedOutput(); err != nil {
				t.Fatalf("copying %s: %v\n%s", homes[env.Path], err, out)
			}
			homes[dir] = home
			use(t, dir)
			runEnv := append(os.Environ(), "PIP_CONFIG_FILE=/dev/null", "PIP_NO_CACHE_DIR=1", "PIP_DISABLE_PIP_VERSION_CHECK=1", "PIP_NO_INPUT=1")
			return applyToCopy(t, env, g, srv.URL, look, runEnv, dir, p, opts)
		}}
	userCPU := func(t *testing.T, dir string) {
		wheeltest.Pip(t, py, dir, "install", "--user", "--index-url", srv.URL+"/cpu", "torch==2.5.1+cpu")
	}
	for _, s := range []struct {
		name     string
		build    func(t *testing.T, dir string)
		machines []matrixMachine
	}{
		{"prefix: CPU torch in the user site above the prefix's cu121 torch", func(t *testing.T, dir string) {
			hostPrefix(t, py, dir)
			wheeltest.Pip(t, py, dir, "install", "--index-url", srv.URL+"/cu121", "torch==2.5.1+cu121")
			userCPU(t, dir)
		}, []matrixMachine{matrixMachines[0], matrixMachines[3]}},
		{"venv with the system's site packages: CPU torch in the user site, none of its own", func(t *testing.T, dir string) {
			if out, err := exec.Command(py, "-m", "venv", "--without-pip", "--system-site-packages", dir).CombinedOutput(); err != nil {
				t.Fatalf("python3 -m venv: %v\n%s", err, out)
			}
			userCPU(t, dir)
		}, matrixMachines[:1]},
	} {
		t.Run(s.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "env")
			homes[dir] = t.TempDir()
			use(t, dir)
			s.build(t, dir)
			env := inspectPath(t, dir)
			if tor := env.Torch(); tor == nil || tor.Build != pyenv.BuildCPU || !env.Borrowed(tor) {
				t.Fatalf("torch = %+v, want the user site's CPU torch (sites %+v)", tor, env.Sites)
			}
			judge.run(t, dir, s.machines)
		})
	}
	for _, want := range []string{"removal", "form/install", finding.CodeTorchCPUBuild + "/error", "no fix/" + finding.CodeTorchCPUBuild} {
		if !covered[want] {
			t.Errorf("never covered %s", want)
		}
	}
}

// hostPrefix makes dir an interpreter's own installation of py's
// version, not a venv: py's executable copied to bin/pythonX.Y (CPython
// finds its prefix from there, by lib/pythonX.Y/os.py), its standard
// library linked in entry by entry, without its site-packages or
// dist-packages and without EXTERNALLY-MANAGED (Debian's mark, which
// makes pip refuse to install).
func hostPrefix(t *testing.T, py, dir string) {
	t.Helper()
	const script = `import os, sys, shutil, sysconfig
dst, ver = sys.argv[1], "python%d.%d" % sys.version_info[:2]
std = sysconfig.get_path("stdlib")
os.makedirs(os.path.join(dst, "bin"))
os.makedirs(os.path.join(dst, "lib", ver))
shutil.copy2(os.path.realpath(sys.executable), os.path.join(dst, "bin", ver))
os.symlink(ver, os.path.join(dst, "bin", "python3"))
os.symlink(ver, os.path.join(dst, "bin", "python"))
for e in os.listdir(std):
    if e not in ("site-packages", "dist-packages", "EXTERNALLY-MANAGED"):
        os.symlink(os.path.join(std, e), os.path.join(dst, "lib", ver, e))
`
	if out, err := exec.Command(py, "-c", script, dir).CombinedOutput(); err != nil {
		t.Fatalf("making a prefix of %s at %s: %v\n%s", py, dir, err, out)
	}
	if out, err := exec.Command(filepath.Join(dir, "bin", "python"), "-c", "import sys; assert sys.prefix == sys.argv[1], sys.prefix", dir).CombinedOutput(); err != nil {
		t.Skipf("the prefix made of %s does not run as its own: %v\n%s", py, err, out)
	}
}
