//go:build !windows

package pyenv_test

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gpucanary/gpucanary/monitor/pyenv"
	"github.com/gpucanary/gpucanary/monitor/pyenv/pyenvtest"
	"github.com/gpucanary/gpucanary/monitor/wheeltest"
)

// TestFIFOsNeverBlock: FIFOs planted where version.py, METADATA,
// INSTALLER and pyvenv.cfg belong, and where site-packages belongs, are
// read as problems at once, never waited on.
func TestFIFOsNeverBlock(t *testing.T) {
	root := filepath.Join(t.TempDir(), ".venv")
	if err := pyenvtest.Write(root, pyenvtest.Spec{Torch: &pyenvtest.Torch{DistVersion: "2.5.1+cu121", CUDA: "12.1", Installer: "pip\n"}}); err != nil {
		t.Fatal(err)
	}
	sp, err := filepath.Glob(filepath.Join(root, "lib", "python3*", "site-packages"))
	if err != nil || len(sp) != 1 {
		t.Fatalf("site-packages: %v %v", sp, err)
	}
	dist, _ := filepath.Glob(filepath.Join(sp[0], "torch-*.dist-info"))
	for _, p := range []string{filepath.Join(sp[0], "torch", "version.py"), filepath.Join(dist[0], "METADATA"), filepath.Join(dist[0], "INSTALLER")} {
		if err := os.Remove(p); err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		if err := syscall.Mkfifo(p, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	done := make(chan *pyenv.Env, 1)
	go func() {
		env, err := pyenv.Inspect(root)
		if err != nil {
			t.Error(err)
		}
		done <- env
	}()
	select {
	case env := <-done:
		if env == nil {
			return
		}
		var all []string
		for _, p := range env.Problems {
			all = append(all, p.Message)
		}
		if tp := env.Torch(); tp != nil {
			for _, p := range tp.Problems {
				all = append(all, p.Message)
			}
		}
		if !strings.Contains(strings.Join(all, "\n"), "a FIFO") {
			t.Errorf("the FIFOs are not reported: %q", all)
		}
	case <-time.After(time.Minute):
		t.Fatal("Inspect blocked on a FIFO")
	}

	// The whole environment folder's pyvenv.cfg as a FIFO, and a FIFO
	// given where an environment is expected.
	cfg := filepath.Join(root, "pyvenv.cfg")
	os.Remove(cfg)
	if err := syscall.Mkfifo(cfg, 0o644); err != nil {
		t.Fatal(err)
	}
	fifoEnv := filepath.Join(t.TempDir(), "fifo-env")
	if err := syscall.Mkfifo(fifoEnv, 0o644); err != nil {
		t.Fatal(err)
	}
	done2 := make(chan struct{})
	go func() {
		defer close(done2)
		pyenv.Inspect(root)
		if _, err := pyenv.Inspect(fifoEnv); err == nil {
			t.Error("a FIFO inspected as an environment")
		}
	}()
	select {
	case <-done2:
	case <-time.After(time.Minute):
		t.Fatal("Inspect blocked on a FIFO pyvenv.cfg or a FIFO path")
	}
}

// inspectInTime inspects root, failing if a read blocks.
func inspectInTime(t *testing.T, root string) *pyenv.Env {
	t.Helper()
	type result struct {
		env *pyenv.Env
		err error
	}
	done := make(chan result, 1)
	go func() {
		env, err := pyenv.InspectWith(root, noUser(t.TempDir()))
		done <- result{env, err}
	}()
	select {
	case r := <-done:
		must(t, r.err)
		return r.env
	case <-time.After(time.Minute):
		t.Fatal("Inspect blocked on a FIFO")
	}
	return nil
}

// allProblems lists the problems of the environment and its packages.
func allProblems(env *pyenv.Env) []pyenv.Problem {
	out := append([]pyenv.Problem(nil), env.Problems...)
	for _, p := range env.Packages {
		out = append(out, p.Problems...)
	}
	return out
}

func mkfifo(t *testing.T, path string) {
	t.Helper()
	must(t, os.RemoveAll(path))
	must(t, syscall.Mkfifo(path, 0o644))
}

// TestFIFOsAreNamed: a FIFO where a file or a folder of an environment
// belongs is reported as a FIFO that GPU Canary did not read, with what
// that means and what repairs it, never as missing.
func TestFIFOsAreNamed(t *testing.T) {
	site := func(root string) string { return filepath.Join(root, "lib", "python3.11", "site-packages") }
	dist := func(root string) string { return filepath.Join(site(root), "torch-2.5.1+cu121.dist-info") }
	for _, tt := range []struct {
		name string
		fifo func(root string) string
		want []string // in one problem's message, with the path
		not  string   // in none
	}{
		{"pyvenv.cfg", func(root string) string { return filepath.Join(root, "pyvenv.cfg") },
			[]string{"pyvenv.cfg is a FIFO, not a regular file: GPU Canary did not read it", "blocks at start-up", "python3 -m venv"}, "no pyvenv.cfg"},
		{"torch/version.py", func(root string) string { return filepath.Join(site(root), "torch", "version.py") },
			[]string{"version.py is a FIFO, not a regular file: GPU Canary did not read it", "No module named 'torch.version'", "reinstalling torch replaces it"}, "missing"},
		{"the torch folder", func(root string) string { return filepath.Join(site(root), "torch") },
			[]string{"torch is a FIFO, not a folder", "delete it, then reinstall torch"}, "gone"},
		{"torch/lib", func(root string) string { return filepath.Join(site(root), "torch", "lib") },
			[]string{"lib is a FIFO, not a folder: GPU Canary did not read it"}, "missing"},
		{"the dist-info", dist,
			[]string{"dist-info is a FIFO, not a folder: GPU Canary did not read it"}, "has no METADATA"},
		{"METADATA", func(root string) string { return filepath.Join(dist(root), "METADATA") },
			[]string{"METADATA is a FIFO, not a regular file: GPU Canary did not read it"}, "has no METADATA"},
		{"site-packages", site,
			[]string{"site-packages is a FIFO, not a folder: GPU Canary did not read it"}, "no site-packages folder"},
		{"lib", func(root string) string { return filepath.Join(root, "lib") },
			[]string{"lib is a FIFO, not a folder: GPU Canary did not read it"}, "no site-packages folder"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			root := filepath.Join(t.TempDir(), ".venv")
			must(t, pyenvtest.Write(root, pyenvtest.Spec{Torch: &pyenvtest.Torch{DistVersion: "2.5.1+cu121", CUDA: "12.1", Installer: "pip\n"}}))
			fifo := tt.fifo(root)
			mkfifo(t, fifo)
			if !pyenv.IsEnv(root) {
				t.Fatal("IsEnv: false")
			}
			env := inspectInTime(t, root)
			found := false
			for _, p := range allProblems(env) {
				if tt.not != "" && strings.Contains(p.Message, tt.not) {
					t.Errorf("reported as %q: %s", tt.not, p.Message)
				}
				all := p.Path == fifo && strings.Contains(p.Message, fifo)
				for _, w := range tt.want {
					all = all && strings.Contains(p.Message, w)
				}
				found = found || all
			}
			if !found {
				t.Errorf("no problem on %s says %q: %+v", fifo, tt.want, allProblems(env))
			}
		})
	}
}

// TestFIFOPth: a .pth file that is a FIFO (Python blocks at start-up
// opening it) and an editable finder module that is one are problems
// said as such; the rest of the environment is read.
func TestFIFOPth(t *testing.T) {
	root := filepath.Join(t.TempDir(), ".venv")
	must(t, pyenvtest.Write(root, pyenvtest.Spec{Torch: &pyenvtest.Torch{DistVersion: "2.5.1+cu121", CUDA: "12.1", Installer: "pip\n"}}))
	site := filepath.Join(root, "lib", "python3.11", "site-packages")
	pth := filepath.Join(site, "evil.pth")
	mkfifo(t, pth)
	finder := filepath.Join(site, "__editable___x_1_0_finder.py")
	writeFile(t, site, "__editable__.x-1.0.pth", "import __editable___x_1_0_finder; __editable___x_1_0_finder.install()\n")
	mkfifo(t, finder)
	env := inspectInTime(t, root)
	var pthSaid, finderSaid bool
	for _, p := range env.Problems {
		pthSaid = pthSaid || p.Path == pth && p.Kind == pyenv.ProblemUnreadable && strings.Contains(p.Message, "evil.pth is a FIFO, not a regular file: GPU Canary did not read it") && strings.Contains(p.Message, "waits there for a writer")
		finderSaid = finderSaid || p.Path == finder && strings.Contains(p.Message, "is a FIFO, not a regular file")
	}
	if !pthSaid || !finderSaid {
		t.Errorf("the FIFO .pth (%v) or finder (%v) is not said: %+v", pthSaid, finderSaid, env.Problems)
	}
	if tor := env.Torch(); tor == nil || tor.Version != "2.5.1+cu121" || len(tor.Problems) > 0 {
		t.Errorf("torch = %+v", tor)
	}
}

// TestFIFOReinstall checks the fixes the FIFO messages give with real
// pip: `pip install --force-reinstall --no-deps torch==V`, the command a
// reinstall plan runs for the build that is installed (its NVIDIA runtime
// complete), replaces a FIFO torch/version.py; over a FIFO where the
// torch folder belongs it fails, and after deleting the FIFO it succeeds.
func TestFIFOReinstall(t *testing.T) {
	py := wheeltest.Python(t)
	links := t.TempDir()
	if _, err := wheeltest.Write(links, wheeltest.Torch("2.5.1", "cu121")); err != nil {
		t.Fatal(err)
	}
	venv := filepath.Join(t.TempDir(), "venv")
	wheeltest.NewVenv(t, py, venv)
	reinstall := func() ([]byte, error) {
		return wheeltest.PipCommand(py, venv, "install", "--no-index", "--find-links", links, "--force-reinstall", "--no-deps", "torch==2.5.1+cu121").CombinedOutput()
	}
	// Installed with its requirements: the NVIDIA runtime a CUDA torch
	// cannot import without.
	wheeltest.Pip(t, py, venv, "install", "--no-index", "--find-links", links, "torch==2.5.1+cu121")
	site := wheeltest.SitePackages(t, venv)
	healthy := func() {
		t.Helper()
		env := inspectInTime(t, venv)
		if tor := env.Torch(); tor == nil || tor.Version != "2.5.1+cu121" || len(allProblems(env)) > 0 {
			t.Fatalf("after the reinstall: torch %+v, problems %+v", tor, allProblems(env))
		}
	}

	version := filepath.Join(site, "torch", "version.py")
	mkfifo(t, version)
	if ps := allProblems(inspectInTime(t, venv)); len(ps) != 1 || !strings.Contains(ps[0].Message, "reinstalling torch replaces it") {
		t.Fatalf("problems %+v", ps)
	}
	if out, err := reinstall(); err != nil {
		t.Fatalf("the reinstall over a FIFO version.py failed: %v\n%s", err, out)
	}
	healthy()

	folder := filepath.Join(site, "torch")
	mkfifo(t, folder)
	if ps := allProblems(inspectInTime(t, venv)); len(ps) != 1 || !strings.Contains(ps[0].Message, "delete it, then reinstall torch") {
		t.Fatalf("problems %+v", ps)
	}
	if out, err := reinstall(); err == nil {
		t.Fatalf("pip reinstalled over a FIFO torch folder: the message says it fails\n%s", out)
	}
	must(t, os.Remove(folder))
	if out, err := reinstall(); err != nil {
		t.Fatalf("the reinstall after deleting the FIFO failed: %v\n%s", err, out)
	}
	healthy()
}

// TestFIFOCore: a FIFO where torch's compiled core belongs is a damaged
// torch (import fails), not an intact one.
func TestFIFOCore(t *testing.T) {
	root := t.TempDir()
	must(t, pyenvtest.Write(root, pyenvtest.Spec{Torch: &pyenvtest.Torch{DistVersion: "2.5.1+cu121", CUDA: "12.1", Installer: "pip\n"}}))
	mkfifo(t, filepath.Join(root, "lib", "python3.11", "site-packages", "torch", "_C.cpython-311-x86_64-linux-gnu.so"))
	env, err := pyenv.InspectWith(root, noUser(t.TempDir()))
	must(t, err)
	tor := env.Torch()
	if tor == nil || len(tor.Problems) != 1 || tor.Problems[0].Kind != pyenv.ProblemDamagedFile ||
		!strings.Contains(tor.Problems[0].Message, "_C.cpython-311-x86_64-linux-gnu.so is a FIFO, not a regular file") {
		t.Fatalf("torch %+v; want one damaged-file problem naming the FIFO core", tor)
	}
}
