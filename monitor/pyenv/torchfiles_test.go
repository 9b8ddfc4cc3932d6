package pyenv_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gpucanary/gpucanary/monitor/pyenv"
	"github.com/gpucanary/gpucanary/monitor/pyenv/pyenvtest"
)

// TestTorchFiles: what a listing by name takes on trust is judged by
// type and size: a torch/lib library import loads that is a dangling
// link (conda-forge links them into $PREFIX/lib), empty, not the size
// its RECORD gives, or not a file; a missing torch/__init__.py; a
// compiled core (or, without one, a wheel) for another Python; a
// version.py and METADATA that disagree on the release or the build.
// What import does not need (a distribution's optional libraries), a
// PyPI wheel's untagged METADATA and a core for this Python are not
// problems.
func TestTorchFiles(t *testing.T) {
	cuda := func(l pyenv.Layout) pyenvtest.Spec {
		return pyenvtest.Spec{Layout: l, Torch: &pyenvtest.Torch{DistVersion: "2.5.1+cu121", CUDA: "12.1", Installer: "pip\n"}}
	}
	// versions is a torch whose METADATA says dist and version.py vpy.
	versions := func(dist, vpy, cuda string) func(pyenv.Layout) pyenvtest.Spec {
		return func(pyenv.Layout) pyenvtest.Spec {
			return pyenvtest.Spec{Torch: &pyenvtest.Torch{DistVersion: dist, VersionPy: vpy, CUDA: cuda, Installer: "pip\n"}}
		}
	}
	condaForge := func(pyenv.Layout) pyenvtest.Spec {
		return pyenvtest.Spec{Manager: "conda", CondaTorchBuild: "cuda126_generic_py311_h1234567_201",
			Torch: &pyenvtest.Torch{DistVersion: "2.6.0", CUDA: "12.6", Installer: "conda\n", NoDeps: true}}
	}
	// linkLibs makes torch/lib's libraries links into root/lib, as
	// conda-forge installs them; with keep the targets are there.
	linkLibs := func(keep bool) func(t *testing.T, root, site string) {
		return func(t *testing.T, root, site string) {
			dir := filepath.Join(site, "torch", "lib")
			ents, err := os.ReadDir(dir)
			must(t, err)
			for _, e := range ents {
				target := filepath.Join(root, "lib", e.Name())
				if keep {
					writeFile(t, root, "lib/"+e.Name(), "\x7fELF the real library")
				}
				relink(t, target, filepath.Join(dir, e.Name()))
			}
		}
	}
	libFile := func(name, content string) func(t *testing.T, root, site string) {
		return func(t *testing.T, root, site string) { writeFile(t, site, "torch/lib/"+name, content) }
	}
	setWheel := func(tag string) func(t *testing.T, root, site string) {
		return func(t *testing.T, root, site string) {
			dists, err := filepath.Glob(filepath.Join(site, "torch-*.dist-info"))
			must(t, err)
			writeFile(t, dists[0], "WHEEL", "Wheel-Version: 1.0\nGenerator: bdist_wheel (0.44.0)\nRoot-Is-Purelib: false\nTag: "+tag+"\n")
		}
	}
	// emptyInRecord makes a torch/lib file empty, as the wheel's RECORD
	// says it is.
	emptyInRecord := func(name string) func(t *testing.T, root, site string) {
		return func(t *testing.T, root, site string) {
			writeFile(t, site, "torch/lib/"+name, "")
			dists, err := filepath.Glob(filepath.Join(site, "torch-*.dist-info"))
			must(t, err)
			rec := filepath.Join(dists[0], "RECORD")
			data, err := os.ReadFile(rec)
			must(t, err)
			var out []string
			for line := range strings.Lines(string(data)) {
				if strings.HasPrefix(line, "torch/lib/"+name+",") {
					line = "torch/lib/" + name + ",sha256=47DEQpj8HBSa-_TImW-5JCeuQeRkm5NMpJWZG3hSuFU,0\n"
				}
				out = append(out, line)
			}
			must(t, os.WriteFile(rec, []byte(strings.Join(out, "")), 0o644))
		}
	}
	// addRecord adds lines to torch's RECORD.
	addRecord := func(lines ...string) func(t *testing.T, root, site string) {
		return func(t *testing.T, root, site string) {
			dists, err := filepath.Glob(filepath.Join(site, "torch-*.dist-info"))
			must(t, err)
			f, err := os.OpenFile(filepath.Join(dists[0], "RECORD"), os.O_APPEND|os.O_WRONLY, 0)
			must(t, err)
			defer f.Close()
			_, err = f.WriteString(strings.Join(lines, "\n") + "\n")
			must(t, err)
		}
	}
	both := func(fs ...func(t *testing.T, root, site string)) func(t *testing.T, root, site string) {
		return func(t *testing.T, root, site string) {
			for _, f := range fs {
				f(t, root, site)
			}
		}
	}
	tests := []struct {
		name   string
		layout pyenv.Layout
		spec   func(pyenv.Layout) pyenvtest.Spec
		mutate func(t *testing.T, root, site string)
		kinds  []string // torch's problem kinds, sorted
		says   string
	}{
		{name: "conda-forge links into $PREFIX/lib, which are gone", spec: condaForge, mutate: linkLibs(false),
			kinds: []string{pyenv.ProblemHalfDeleted}, says: "libtorch_cuda.so is a link to "},
		{name: "conda-forge links into $PREFIX/lib, which are there", spec: condaForge, mutate: linkLibs(true)},
		{name: "an empty libtorch_cuda", spec: cuda, mutate: libFile("libtorch_cuda.so", ""),
			kinds: []string{pyenv.ProblemDamagedFile}, says: "libtorch_cuda.so is empty (0 bytes)"},
		{name: "an empty file the wheel's RECORD lists as empty", spec: cuda, mutate: emptyInRecord("libc10.so")},
		{name: "a truncated libtorch_cuda", spec: cuda, mutate: libFile("libtorch_cuda.so", "\x7fELF"),
			kinds: []string{pyenv.ProblemDamagedFile}, says: "libtorch_cuda.so is 4 bytes where its RECORD says 29"},
		{name: "a folder where libc10_cuda belongs", spec: cuda,
			mutate: func(t *testing.T, root, site string) {
				p := filepath.Join(site, "torch", "lib", "libc10_cuda.so")
				must(t, os.Remove(p))
				must(t, os.Mkdir(p, 0o755))
			},
			kinds: []string{pyenv.ProblemDamagedFile}, says: "libc10_cuda.so is a folder, not a regular file"},
		{name: "a link to an empty library", spec: cuda,
			mutate: func(t *testing.T, root, site string) {
				writeFile(t, root, "elsewhere/libtorch_cuda.so", "")
				relink(t, filepath.Join(root, "elsewhere", "libtorch_cuda.so"), filepath.Join(site, "torch", "lib", "libtorch_cuda.so"))
			},
			kinds: []string{pyenv.ProblemDamagedFile}, says: "elsewhere/libtorch_cuda.so, which is empty (0 bytes)"},
		{name: "a dangling link to a library import does not load (Debian's libcaffe2_*)", spec: cuda,
			mutate: func(t *testing.T, root, site string) {
				must(t, os.Symlink("/nonexistent/libcaffe2_observers.so.1.13", filepath.Join(site, "torch", "lib", "libcaffe2_observers.so")))
			}},
		{name: "windows: an empty torch_cuda.dll", layout: pyenv.LayoutWindows, spec: cuda, mutate: libFile("torch_cuda.dll", ""),
			kinds: []string{pyenv.ProblemDamagedFile}, says: "torch_cuda.dll is empty"},
		{name: "torch/__init__.py deleted", spec: cuda,
			mutate: func(t *testing.T, root, site string) { must(t, os.Remove(filepath.Join(site, "torch", "__init__.py"))) },
			kinds:  []string{pyenv.ProblemHalfDeleted}, says: "torch/__init__.py is missing: Python imports torch as an empty namespace package"},
		{name: "a core and a wheel for Python 3.10 in a 3.11 venv", spec: cuda,
			mutate: both(libFile("../_C.cpython-310-x86_64-linux-gnu.so", "\x7fELF"), setWheel("cp310-cp310-linux_x86_64")),
			kinds:  []string{pyenv.ProblemWrongPython}, says: "torch/_C.cpython-310-x86_64-linux-gnu.so is built for Python 3.10, but the environment runs Python 3.11"},
		{name: "windows: a core for Python 3.10", layout: pyenv.LayoutWindows, spec: cuda, mutate: libFile("../_C.cp310-win_amd64.pyd", "MZ"),
			kinds: []string{pyenv.ProblemWrongPython}, says: "_C.cp310-win_amd64.pyd is built for Python 3.10"},
		{name: "no core file, a wheel for Python 3.10", spec: cuda, mutate: setWheel("cp310-cp310-linux_x86_64"),
			kinds: []string{pyenv.ProblemWrongPython}, says: "wheel is built for Python 3.10 (WHEEL: Tag: cp310-cp310-linux_x86_64), but the environment runs Python 3.11"},
		{name: "the core for this Python decides over the WHEEL", spec: cuda,
			mutate: both(libFile("../_C.cpython-311-x86_64-linux-gnu.so", "\x7fELF"), setWheel("cp310-cp310-linux_x86_64"))},
		{name: "a core for any Python", spec: cuda, mutate: libFile("../_C.abi3.so", "\x7fELF")},
		{name: "METADATA 2.5.1+cu121, version.py 2.4.0+cu121: a mixed overwrite", spec: versions("2.5.1+cu121", "2.4.0+cu121", "12.1"),
			kinds: []string{pyenv.ProblemMixedRelease}, says: "torch-2.5.1+cu121.dist-info/METADATA says Version: 2.5.1+cu121 but "},
		{name: "a +cpu dist-info with a CUDA version.py", spec: versions("2.5.1+cpu", "2.5.1+cu121", "12.1"),
			kinds: []string{pyenv.ProblemBuildMismatch}, says: "says Version: 2.5.1+cpu (CPU build) but "},
		{name: "a +cu121 dist-info with a CUDA 12.4 version.py", spec: versions("2.5.1+cu121", "2.5.1+cu124", "12.4"),
			kinds: []string{pyenv.ProblemBuildMismatch}, says: "(CUDA 12.1 build) but "},
		{name: "a PyPI wheel: no local tag in METADATA, +cu124 in version.py", spec: versions("2.5.1", "2.5.1+cu124", "12.4")},
		{name: "libc10.so deleted (its RECORD lists it)", spec: cuda,
			mutate: func(t *testing.T, root, site string) {
				must(t, os.Remove(filepath.Join(site, "torch", "lib", "libc10.so")))
			},
			kinds: []string{pyenv.ProblemHalfDeleted}, says: "libc10.so is missing (torch's RECORD lists it)"},
		{name: "two libraries RECORD lists are absent", spec: cuda, mutate: addRecord("torch/lib/libtorch_cuda_linalg.so,sha256=x,10", "torch/lib/libgomp-a34b3233.so.1,sha256=x,10"),
			kinds: []string{pyenv.ProblemHalfDeleted}, says: "libgomp-a34b3233.so.1 is missing (torch's RECORD lists it); libtorch_cuda_linalg.so is missing"},
		{name: "an empty core", spec: cuda, mutate: libFile("../_C.cpython-311-x86_64-linux-gnu.so", ""),
			kinds: []string{pyenv.ProblemDamagedFile}, says: "_C.cpython-311-x86_64-linux-gnu.so is empty (0 bytes)"},
		{name: "a dangling link as the core", spec: cuda,
			mutate: func(t *testing.T, root, site string) {
				must(t, os.Symlink(filepath.Join(root, "gone.so"), filepath.Join(site, "torch", "_C.cpython-311-x86_64-linux-gnu.so")))
			},
			kinds: []string{pyenv.ProblemHalfDeleted}, says: "gone.so, which does not exist"},
		{name: "the core RECORD lists is gone", spec: cuda, mutate: addRecord("torch/_C.cpython-311-x86_64-linux-gnu.so,sha256=x,2000"),
			kinds: []string{pyenv.ProblemHalfDeleted}, says: "_C.cpython-311-x86_64-linux-gnu.so is missing (torch's RECORD lists it)"},
		{name: "a core of the size its RECORD gives", spec: cuda,
			mutate: both(libFile("../_C.cpython-311-x86_64-linux-gnu.so", "\x7fELF"), addRecord("torch/_C.cpython-311-x86_64-linux-gnu.so,sha256=x,4"))},
		{name: "a CUDA wheel as installed", spec: cuda},
		{name: "windows: a CUDA wheel as installed", layout: pyenv.LayoutWindows, spec: cuda},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			must(t, pyenvtest.Write(root, tt.spec(tt.layout)))
			if tt.mutate != nil {
				tt.mutate(t, root, sitePackages(root, tt.layout))
			}
			env, err := pyenv.InspectWith(root, noUser(t.TempDir()))
			must(t, err)
			tor := env.Torch()
			if tor == nil {
				t.Fatal("no torch read")
			}
			if got := kinds(tor.Problems); !slices.Equal(got, tt.kinds) {
				t.Fatalf("torch problems %+v; want kinds %v", tor.Problems, tt.kinds)
			}
			if tt.says == "" {
				return
			}
			var msgs []string
			for _, p := range tor.Problems {
				msgs = append(msgs, filepath.ToSlash(p.Message))
			}
			if !strings.Contains(strings.Join(msgs, "\n"), tt.says) {
				t.Errorf("problems say %q; want %q in them", msgs, tt.says)
			}
		})
	}
}

// TestDebianTorchIntact: Debian's python3-torch in /usr has torch/lib
// links to libraries other packages ship (libcaffe2_*, dangling when
// those are not installed) and a PKG-INFO version with a local tag its
// version.py lacks (1.13.0a0+gitunknown against 1.13.0a0); import torch
// works, so none of that is a problem.
func TestDebianTorchIntact(t *testing.T) {
	if _, err := os.Stat("/usr/lib/python3/dist-packages/torch/__init__.py"); err != nil {
		t.Skip("no Debian python3-torch in /usr")
	}
	env, err := pyenv.InspectWith("/usr", noUser(t.TempDir()))
	must(t, err)
	tor := env.Torch()
	if tor == nil {
		t.Fatal("no torch read from /usr")
	}
	if len(tor.Problems) > 0 || len(env.Problems) > 0 {
		t.Errorf("torch problems %+v, environment problems %+v; want none", tor.Problems, env.Problems)
	}
}
