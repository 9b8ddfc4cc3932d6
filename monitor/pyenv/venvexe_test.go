package pyenv_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gpucanary/gpucanary/monitor/pyenv"
	"github.com/gpucanary/gpucanary/monitor/pyenv/pyenvtest"
)

// cudaVenv writes a venv (pyvenv.cfg home = /usr/bin, bin/python a copy)
// with a CUDA torch, in layout l.
func cudaVenv(t *testing.T, root string, l pyenv.Layout) string {
	t.Helper()
	must(t, pyenvtest.Write(root, pyenvtest.Spec{Layout: l, Torch: &pyenvtest.Torch{DistVersion: "2.5.1+cu121", CUDA: "12.1", Installer: "pip\n"}}))
	return root
}

// setCfg rewrites pyvenv.cfg's key (added when missing).
func setCfg(t *testing.T, root, key, value string) {
	t.Helper()
	p := filepath.Join(root, "pyvenv.cfg")
	data, err := os.ReadFile(p)
	must(t, err)
	var lines []string
	found := false
	for line := range strings.Lines(string(data)) {
		if k, _, ok := strings.Cut(line, "="); ok && strings.TrimSpace(k) == key {
			line, found = key+" = "+value+"\n", true
		}
		lines = append(lines, line)
	}
	if !found {
		lines = append(lines, key+" = "+value+"\n")
	}
	must(t, os.WriteFile(p, []byte(strings.Join(lines, "")), 0o644))
}

// relink makes path a link to target, whatever was there.
func relink(t *testing.T, target, path string) {
	t.Helper()
	must(t, os.RemoveAll(path))
	must(t, os.Symlink(target, path))
}

// problemOf returns the environment's problem of kind, or nil.
func problemOf(env *pyenv.Env, kind string) *pyenv.Problem {
	for i := range env.Problems {
		if env.Problems[i].Kind == kind {
			return &env.Problems[i]
		}
	}
	return nil
}

// TestInterpreterMissing: a venv whose interpreter is gone (a dangling
// bin/python after `uv python uninstall` or a pyenv/Homebrew upgrade, no
// bin/python at all, a copy whose installation was deleted, a Windows
// Scripts\python.exe missing or whose pyvenv.cfg home is gone) is a
// ProblemInterpreterMissing naming the file, and Recreate makes it
// again with the Python its packages were installed for, removing the
// links venv would keep. One whose interpreter is there is not.
func TestInterpreterMissing(t *testing.T) {
	tests := []struct {
		name   string
		layout pyenv.Layout
		mutate func(t *testing.T, root, tmp string)
		says   []string // in the problem's message; nil: no problem
		remove []string // Recreate's links, relative to root
		create []string // Recreate's command, ENV for root
	}{
		{
			name: "bin/python links into a deleted installation",
			mutate: func(t *testing.T, root, tmp string) {
				gone := filepath.Join(tmp, "gone", "bin")
				setCfg(t, root, "home", gone)
				relink(t, filepath.Join(gone, "python3.11"), filepath.Join(root, "bin", "python"))
				must(t, os.Symlink("python", filepath.Join(root, "bin", "python3")))
				must(t, os.Symlink("python", filepath.Join(root, "bin", "python3.11")))
			},
			says:   []string{"bin/python is a link to ", "gone/bin/python3.11, which does not exist", "Make the environment again with Python 3.11"},
			remove: []string{"bin/python", "bin/python3", "bin/python3.11"},
			create: []string{"python3.11", "-m", "venv", "--without-pip", "ENV"},
		},
		{
			name:   "no bin/python at all",
			mutate: func(t *testing.T, root, _ string) { must(t, os.Remove(filepath.Join(root, "bin", "python"))) },
			says:   []string{"bin/python does not exist"},
			create: []string{"python3.11", "-m", "venv", "--without-pip", "ENV"},
		},
		{
			name: "a copy whose installation is gone",
			mutate: func(t *testing.T, root, tmp string) {
				setCfg(t, root, "home", filepath.Join(tmp, "gone", "bin"))
				setCfg(t, root, "executable", filepath.Join(tmp, "gone", "bin", "python3.11"))
			},
			says:   []string{"bin/python is a copy of Python 3.11 whose installation is gone", "No module named 'encodings'"},
			create: []string{"python3.11", "-m", "venv", "--without-pip", "ENV"},
		},
		{
			name:   "a loop of links",
			mutate: func(t *testing.T, root, _ string) { relink(t, "python", filepath.Join(root, "bin", "python")) },
			says:   []string{"bin/python is a loop of links"},
			remove: []string{"bin/python"},
			create: []string{"python3.11", "-m", "venv", "--without-pip", "ENV"},
		},
		{
			name:   "windows: no Scripts\\python.exe",
			layout: pyenv.LayoutWindows,
			mutate: func(t *testing.T, root, _ string) { must(t, os.Remove(filepath.Join(root, "Scripts", "python.exe"))) },
			says:   []string{"python.exe does not exist"},
			create: []string{"py", "-3.11", "-m", "venv", "--without-pip", "ENV"},
		},
		{
			name:   "windows: pyvenv.cfg's home is gone",
			layout: pyenv.LayoutWindows,
			mutate: func(t *testing.T, root, tmp string) { setCfg(t, root, "home", filepath.Join(tmp, "Python311")) },
			says:   []string{"pyvenv.cfg's home, ", "Python311, does not exist", "No Python at '"},
			create: []string{"py", "-3.11", "-m", "venv", "--without-pip", "ENV"},
		},
		{
			name:   "windows: pyvenv.cfg's home has no python.exe",
			layout: pyenv.LayoutWindows,
			mutate: func(t *testing.T, root, tmp string) {
				writeFile(t, tmp, "Python311/python311.dll", "MZ")
				setCfg(t, root, "home", filepath.Join(tmp, "Python311"))
			},
			says:   []string{"Python311, has no python.exe"},
			create: []string{"py", "-3.11", "-m", "venv", "--without-pip", "ENV"},
		},
		{
			name: "bin/python links to an interpreter that is there",
			mutate: func(t *testing.T, root, tmp string) {
				base := filepath.Join(tmp, "py")
				writePrefix(t, base, "3.11")
				setCfg(t, root, "home", filepath.Join(base, "bin"))
				relink(t, filepath.Join(base, "bin", "python3"), filepath.Join(root, "bin", "python"))
			},
		},
		{
			name:   "a copy whose home is there",
			mutate: func(t *testing.T, root, tmp string) {},
		},
		{
			name:   "windows: home is there with python.exe",
			layout: pyenv.LayoutWindows,
			mutate: func(t *testing.T, root, tmp string) {
				writeFile(t, tmp, "Python311/python.exe", "MZ")
				writeFile(t, tmp, "Python311/python311.dll", "MZ")
				setCfg(t, root, "home", filepath.Join(tmp, "Python311"))
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tmp := t.TempDir()
			root := cudaVenv(t, filepath.Join(tmp, "venv"), tt.layout)
			tt.mutate(t, root, tmp)
			env, err := pyenv.InspectWith(root, noUser(tmp))
			must(t, err)
			p := problemOf(env, pyenv.ProblemInterpreterMissing)
			r, ok := env.Recreate()
			remove, create := r.Remove, r.Create
			if tt.says == nil {
				if p != nil || ok {
					t.Fatalf("problem %+v, Recreate ok %v; want none", p, ok)
				}
				return
			}
			if p == nil {
				t.Fatalf("no %s problem; problems %+v", pyenv.ProblemInterpreterMissing, env.Problems)
			}
			for _, s := range tt.says {
				if !strings.Contains(filepath.ToSlash(p.Message), s) {
					t.Errorf("message %q does not say %q", p.Message, s)
				}
			}
			if tor := env.Torch(); tor == nil || tor.Build != pyenv.BuildCUDA {
				t.Errorf("torch %+v; want the CUDA torch still read from its files", tor)
			}
			var rel []string
			for _, r := range remove {
				x, err := filepath.Rel(root, r)
				must(t, err)
				rel = append(rel, filepath.ToSlash(x))
			}
			slices.Sort(rel)
			want := slices.Clone(tt.create)
			want[len(want)-1] = root
			if !ok || !slices.Equal(rel, tt.remove) || !slices.Equal(create, want) {
				t.Errorf("Recreate = %v, %v, %v; want %v, %v", rel, create, ok, tt.remove, want)
			}
		})
	}
}

// fakeBase makes an interpreter's installation at base whose python3
// and python3.11 run this system's /usr/bin/python3.11, as an installed
// Python (uv's, pyenv's, Homebrew's) is linked; it skips the test when
// there is none.
func fakeBase(t *testing.T, base string) {
	t.Helper()
	if _, err := os.Stat("/usr/bin/python3.11"); err != nil {
		t.Skip("no /usr/bin/python3.11 to make real venvs with")
	}
	must(t, os.MkdirAll(filepath.Join(base, "bin"), 0o755))
	must(t, os.Symlink("/usr/bin/python3.11", filepath.Join(base, "bin", "python3.11")))
	must(t, os.Symlink("python3.11", filepath.Join(base, "bin", "python3")))
}

// realCUDAVenv runs `python -m venv --without-pip root` and moves into it the
// site-packages of a pyenvtest venv holding a CUDA torch, whose
// torch/__init__.py real Python imports.
func realCUDAVenv(t *testing.T, python, root string, args ...string) {
	t.Helper()
	cmd := exec.Command(python, append(append([]string{"-m", "venv", "--without-pip"}, args...), root)...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%v: %v\n%s", cmd.Args, err, out)
	}
	fixture := cudaVenv(t, filepath.Join(t.TempDir(), "fixture"), pyenv.LayoutPOSIX)
	site := filepath.Join(root, "lib", "python3.11", "site-packages")
	must(t, os.RemoveAll(site))
	must(t, os.Rename(filepath.Join(fixture, "lib", "python3.11", "site-packages"), site))
}

// TestInterpreterMissingRealVenv: real venvs made by Python 3.11 whose
// interpreter then went away: one linked to an installation that was
// deleted (as `uv python uninstall` leaves it), and one made with
// --copies whose copied interpreters were deleted. Python itself cannot
// start there; GPU Canary says so.
func TestInterpreterMissingRealVenv(t *testing.T) {
	t.Run("linked installation deleted", func(t *testing.T) {
		tmp := t.TempDir()
		base := filepath.Join(tmp, "cpython-3.11")
		fakeBase(t, base)
		venv := filepath.Join(tmp, "venv")
		realCUDAVenv(t, filepath.Join(base, "bin", "python3"), venv)
		must(t, os.RemoveAll(base))
		if err := exec.Command(filepath.Join(venv, "bin", "python"), "-c", "import torch").Run(); err == nil {
			t.Fatal("the venv's python still runs; the fixture is wrong")
		}
		env, err := pyenv.InspectWith(venv, noUser(tmp))
		must(t, err)
		p := problemOf(env, pyenv.ProblemInterpreterMissing)
		if p == nil || !strings.Contains(p.Message, base+"/bin/python3, which does not exist") {
			t.Fatalf("problem %+v; want bin/python's link to %s/bin/python3 named", p, base)
		}
		if r, _ := env.Recreate(); len(r.Remove) != 3 {
			t.Errorf("links to remove %v; want python, python3 and python3.11", r.Remove)
		}
	})
	t.Run("copies deleted", func(t *testing.T) {
		if _, err := os.Stat("/usr/bin/python3"); err != nil {
			t.Skip("no /usr/bin/python3")
		}
		venv := filepath.Join(t.TempDir(), "venv")
		realCUDAVenv(t, "/usr/bin/python3", venv, "--copies")
		for _, n := range []string{"python", "python3", "python3.11"} {
			must(t, os.Remove(filepath.Join(venv, "bin", n)))
		}
		env, err := pyenv.InspectWith(venv, noUser(t.TempDir()))
		must(t, err)
		if p := problemOf(env, pyenv.ProblemInterpreterMissing); p == nil || !strings.Contains(p.Message, "bin/python does not exist") {
			t.Fatalf("problem %+v; want bin/python said missing", p)
		}
	})
	t.Run("a real venv as made", func(t *testing.T) {
		if _, err := os.Stat("/usr/bin/python3"); err != nil {
			t.Skip("no /usr/bin/python3")
		}
		venv := filepath.Join(t.TempDir(), "venv")
		realCUDAVenv(t, "/usr/bin/python3", venv)
		env, err := pyenv.InspectWith(venv, noUser(t.TempDir()))
		must(t, err)
		if len(env.Problems) > 0 || env.Python != "3.11" {
			t.Errorf("Python %s, problems %+v; want 3.11 and none", env.Python, env.Problems)
		}
	})
}

// TestPythonUpgradedInPlace: a venv whose interpreter now runs another
// Python than the one whose lib/pythonX.Y/site-packages holds its
// packages (a base upgraded from 3.11 to 3.12 in place, read from the
// name bin/python leads to; a pyvenv.cfg of 3.12 over packages in
// lib/python3.11) is a ProblemPythonMismatch naming both versions, and
// env.Python is what runs. Python 3.12 never searches lib/python3.11.
func TestPythonUpgradedInPlace(t *testing.T) {
	// upgrade turns base (a 3.11 installation) into a 3.12 one in place:
	// python3 now links to python3.12, whose standard library replaces
	// 3.11's.
	upgrade := func(t *testing.T, base string) {
		writeFile(t, base, "bin/python3.12", "\x7fELF")
		writeFile(t, base, "lib/python3.12/os.py", "")
		relink(t, "python3.12", filepath.Join(base, "bin", "python3"))
		must(t, os.RemoveAll(filepath.Join(base, "lib", "python3.11")))
		must(t, os.RemoveAll(filepath.Join(base, "bin", "python3.11")))
	}
	tests := []struct {
		name   string
		setup  func(t *testing.T, tmp string) string // returns the venv
		python string                                // env.Python
		says   []string
	}{
		{
			name: "base upgraded: bin/python leads to python3.12",
			setup: func(t *testing.T, tmp string) string {
				base := filepath.Join(tmp, "base")
				writePrefix(t, base, "3.11")
				venv := cudaVenv(t, filepath.Join(tmp, "venv"), pyenv.LayoutPOSIX)
				setCfg(t, venv, "home", filepath.Join(base, "bin"))
				relink(t, filepath.Join(base, "bin", "python3"), filepath.Join(venv, "bin", "python"))
				upgrade(t, base)
				return venv
			},
			python: "3.12",
			says:   []string{"lib/python3.11/site-packages, for Python 3.11", "interpreter is Python 3.12", "base/bin/python3.12", "lib/python3.12/site-packages, which does not exist"},
		},
		{
			name: "a real venv whose base was upgraded",
			setup: func(t *testing.T, tmp string) string {
				base := filepath.Join(tmp, "base")
				fakeBase(t, base)
				venv := filepath.Join(tmp, "venv")
				realCUDAVenv(t, filepath.Join(base, "bin", "python3"), venv)
				upgrade(t, base)
				return venv
			},
			python: "3.12",
			says:   []string{"for Python 3.11", "interpreter is Python 3.12"},
		},
		{
			name: "pyvenv.cfg says 3.12, torch only in lib/python3.11",
			setup: func(t *testing.T, tmp string) string {
				venv := cudaVenv(t, filepath.Join(tmp, "venv"), pyenv.LayoutPOSIX)
				setCfg(t, venv, "version", "3.12.3")
				return venv
			},
			python: "3.12",
			says:   []string{"for Python 3.11", "interpreter is Python 3.12", "version = 3.12.3"},
		},
		{
			name: "the new Python's folder exists but torch is in the old one",
			setup: func(t *testing.T, tmp string) string {
				venv := cudaVenv(t, filepath.Join(tmp, "venv"), pyenv.LayoutPOSIX)
				setCfg(t, venv, "version", "3.12.3")
				must(t, os.MkdirAll(filepath.Join(venv, "lib", "python3.12", "site-packages"), 0o755))
				return venv
			},
			python: "3.12",
			says:   []string{"torch is installed in ", "lib/python3.11/site-packages, for Python 3.11", "searches ", "lib/python3.12/site-packages instead"},
		},
		{
			name: "a 3.12 venv as made",
			setup: func(t *testing.T, tmp string) string {
				venv := filepath.Join(tmp, "venv")
				must(t, pyenvtest.Write(venv, pyenvtest.Spec{Python: "3.12", Torch: &pyenvtest.Torch{DistVersion: "2.5.1+cu121", CUDA: "12.1", Installer: "pip\n"}}))
				return venv
			},
			python: "3.12",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tmp := t.TempDir()
			venv := tt.setup(t, tmp)
			env, err := pyenv.InspectWith(venv, noUser(tmp))
			must(t, err)
			if env.Python != tt.python {
				t.Errorf("Python %q, want %q", env.Python, tt.python)
			}
			p := problemOf(env, pyenv.ProblemPythonMismatch)
			if tt.says == nil {
				if p != nil || len(env.Problems) > 0 {
					t.Fatalf("problems %+v; want none", env.Problems)
				}
				if tor := env.Torch(); tor == nil || len(tor.Problems) > 0 {
					t.Fatalf("torch %+v; want one without problems", tor)
				}
				return
			}
			if p == nil {
				t.Fatalf("no %s problem; problems %+v", pyenv.ProblemPythonMismatch, env.Problems)
			}
			for _, s := range tt.says {
				if !strings.Contains(p.Message, s) {
					t.Errorf("message %q does not say %q", p.Message, s)
				}
			}
			if r, ok := env.Recreate(); !ok || r.Create[0] != "python3.11" {
				t.Errorf("Recreate's command %v, want python3.11's", r.Create)
			}
			if tor := env.Torch(); tor != nil && len(tor.Problems) > 0 {
				t.Errorf("torch problems %+v: the mismatch is said once, on the environment", tor.Problems)
			}
		})
	}
}
