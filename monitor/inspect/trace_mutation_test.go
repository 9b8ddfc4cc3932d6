package inspect_test

import (
	"bytes"
	"context"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/gpucanary/gpucanary/monitor"
	"github.com/gpucanary/gpucanary/monitor/fatbin"
	"github.com/gpucanary/gpucanary/monitor/fatbin/fatbintest"
	"github.com/gpucanary/gpucanary/monitor/filefacts"
	"github.com/gpucanary/gpucanary/monitor/fstrace"
	"github.com/gpucanary/gpucanary/monitor/gpu"
	"github.com/gpucanary/gpucanary/monitor/health"
	"github.com/gpucanary/gpucanary/monitor/inspect"
	"github.com/gpucanary/gpucanary/monitor/pyenv"
	"github.com/gpucanary/gpucanary/monitor/pyenv/envsearch"
	"github.com/gpucanary/gpucanary/monitor/pyenv/pyenvtest"
	"github.com/gpucanary/gpucanary/monitor/pyenv/uvproject"
	"github.com/gpucanary/gpucanary/output/jsonout"
)

// traceFixture is a tree a read's trace must cover: an environment at
// env (relative to the tree's root; HOME is its folder home), built by
// build.
type traceFixture struct {
	name, env, via string
	build          func(root string) error
	// extra are mutations beyond the ones every path gets (a missing
	// environment made).
	extra []mutation
}

// mutation changes the tree at rel, and undoes it.
type mutation struct {
	rel, what string
	do        func(p string) (undo func() error, err error)
}

// TestTraceCoversTheRead proves the read's trace complete on real
// environments: for every file, folder and link of each fixture, removed,
// edited in place (same size, its time set back) or added to (a
// distribution, a .pth file, a pyproject.toml), a read whose report
// changes is one whose trace no longer holds. A look at the disk that
// bypassed the trace shows here as a changed report with a trace that
// still holds.
func TestTraceCoversTheRead(t *testing.T) {
	fixtures := []traceFixture{
		{name: "pip venv with CUDA torch", env: "env", via: "argument", build: pipFixture},
		{name: "conda env under a user site", env: "env", via: "argument", build: func(root string) error {
			if _, err := pyenvtest.UserSite(filepath.Join(root, "home"), pyenvtest.Spec{Torch: &pyenvtest.Torch{DistVersion: "2.4.0", Installer: "pip\n"}}); err != nil {
				return err
			}
			return pyenvtest.Write(filepath.Join(root, "env"), pyenvtest.Spec{Manager: "conda",
				Torch: &pyenvtest.Torch{DistVersion: "2.5.1", CUDA: "12.1"}, CondaTorchBuild: "py3.11_cuda12.1_cudnn9.1.0_0"})
		}},
		{name: "venv with .pth files, an egg and an egg-link", env: "env", via: "argument", build: pthFixture},
		{name: "uv project beside its .venv", env: "proj/.venv", via: "argument", build: uvFixture},
		{name: "Debian-like prefix", env: "usr", via: "system", build: debianFixture},
		{name: "missing environment", env: "env", via: "argument", build: func(root string) error { return nil },
			extra: []mutation{{rel: "env", what: "made a venv", do: func(p string) (func() error, error) {
				err := pyenvtest.WriteFile(p, "pyvenv.cfg", pyenvtest.CfgVenv)
				return func() error { return os.RemoveAll(p) }, err
			}}}},
	}
	g := gpu.State{Driver: "550.54.15", CUDADriver: "12.4", Devices: []gpu.Device{{Name: "NVIDIA A100-SXM4-40GB", ComputeCapability: "8.0"}}}
	total, changedTotal := 0, 0
	for _, fx := range fixtures {
		t.Run(fx.name, func(t *testing.T) {
			root := t.TempDir()
			// HOME is below the tree's root, so that the search for a uv
			// project goes on above the environment's folder (and the
			// pass's Finder remembers what it found empty there).
			if err := os.MkdirAll(filepath.Join(root, "home"), 0o755); err != nil {
				t.Fatal(err)
			}
			t.Setenv("HOME", filepath.Join(root, "home"))
			t.Setenv("USERPROFILE", filepath.Join(root, "home")) // os.UserHomeDir's on Windows
			t.Setenv("PYTHONUSERBASE", "")
			t.Setenv("PYTHONNOUSERSITE", "")
			if err := fx.build(root); err != nil {
				t.Fatal(err)
			}
			found := envsearch.Found{Path: filepath.Join(root, fx.env), Via: fx.via}
			// One Finder for every traced read: the folders above the
			// project are found empty once, their looks replayed after.
			finderCtx := uvproject.WithFinder(context.Background())
			traced := func() ([]byte, *fstrace.Trace) {
				t.Helper()
				if err := pyenvtest.DateBack(root, time.Hour); err != nil {
					t.Fatal(err)
				}
				tr := fstrace.New()
				js := reportJSON(t, inspect.InspectTraced(finderCtx, found, g, health.Options{}, tr))
				if ok, why := tr.Keepable(time.Now()); !ok {
					t.Fatalf("the read of a dated-back %s cannot be kept: %s", fx.name, why)
				}
				if !fstrace.NewChecker().Holds(tr.Seen()) {
					t.Fatalf("the trace of an unchanged %s does not hold", fx.name)
				}
				return js, tr
			}
			want, _ := traced()
			muts := mutationsOf(t, root)
			if testing.Short() {
				muts = every(muts, 3)
			}
			muts = append(muts, fx.extra...)
			changed := 0
			for _, m := range muts {
				js, tr := traced()
				if !bytes.Equal(js, want) {
					t.Fatalf("reading %s again, unchanged, gives another report:\n%s\nwant\n%s", fx.name, js, want)
				}
				p := filepath.Join(root, m.rel)
				undo, err := m.do(p)
				if err != nil {
					t.Fatalf("%s %s: %v", m.what, m.rel, err)
				}
				after := freshReport(t, found, g)
				if !bytes.Equal(after, want) {
					changed++
					if fstrace.NewChecker().Holds(tr.Seen()) {
						t.Errorf("%s %s changes the report, but the trace still holds: the read looked at it other than through the trace\nreport now:\n%s\nwas:\n%s", m.what, m.rel, after, want)
					}
				}
				if err := undo(); err != nil {
					t.Fatalf("undoing %s %s: %v", m.what, m.rel, err)
				}
			}
			t.Logf("%s: %d mutations, %d changed the report", fx.name, len(muts), changed)
			if changed == 0 {
				t.Errorf("no mutation of %s changed its report: the test proves nothing", fx.name)
			}
			total += len(muts)
			changedTotal += changed
		})
	}
	t.Logf("%d fixtures, %d mutations, %d changed the report", len(fixtures), total, changedTotal)
}

// freshReport is the report of a read without a trace, with no fact
// kept from an earlier read (filefacts, fatbin's cache): what the tree
// says now, which a fact kept on a stamp that ignores the change time
// would not.
func freshReport(t *testing.T, found envsearch.Found, g gpu.State) []byte {
	t.Helper()
	facts, kernels := filefacts.Shared, pyenv.KernelsReader
	filefacts.Shared, pyenv.KernelsReader = &filefacts.Store{}, (&fatbin.Cache{}).ReadFile
	defer func() { filefacts.Shared, pyenv.KernelsReader = facts, kernels }()
	return reportJSON(t, inspect.InspectOne(context.Background(), found, g, health.Options{}))
}

// pipFixture is a pip venv with a CUDA torch and its runtime wheels,
// torchvision, bitsandbytes, llama-cpp-python with a real CUDA library,
// and a package GPU Canary knows nothing of whose RECORD lists a real
// CUDA library (found only through its RECORD).
func pipFixture(root string) error {
	spec := pyenvtest.Spec{Torch: &pyenvtest.Torch{DistVersion: "2.5.1+cu124", CUDA: "12.4", Installer: "pip\n"},
		Vision: &pyenvtest.Companion{Version: "0.20.1+cu124", CUDA: "12.4"},
		BNB:    &pyenvtest.BNB{Version: "0.44.1", CUDALibs: []string{"124"}},
		Llama:  &pyenvtest.Llama{Version: "0.3.16", Backends: []string{"cuda"}}}
	env := filepath.Join(root, "env")
	if err := pyenvtest.Write(env, spec); err != nil {
		return err
	}
	lib := fatbintest.MustLoad(fatbintest.LinuxGGML)
	if _, err := pyenvtest.PutRealLibrary(env, spec, "llama_cpp/lib/libggml-cuda.so", lib); err != nil {
		return err
	}
	site := pyenvtest.SitePackages(env, spec)
	if err := pyenvtest.WriteFile(site, "my_ext-1.0.dist-info/METADATA", "Metadata-Version: 2.1\nName: my-ext\nVersion: 1.0\n"); err != nil {
		return err
	}
	if err := pyenvtest.WriteFile(site, "my_ext-1.0.dist-info/RECORD", "my_ext/__init__.py,,\nmy_ext/_C.so,,\nmy_ext-1.0.dist-info/RECORD,,\n"); err != nil {
		return err
	}
	if err := pyenvtest.WriteFile(site, "my_ext/__init__.py", ""); err != nil {
		return err
	}
	return lib.WriteSparse(filepath.Join(site, "my_ext", "_C.so"))
}

// reportJSON is the report as `check --json` writes it.
func reportJSON(t *testing.T, rep monitor.EnvReport) []byte {
	t.Helper()
	b, err := jsonout.EnvJSON(rep)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// pthFixture is a venv whose site has an editable torch (setuptools'
// finder .pth and its MAPPING, the code in root/pytorch), a develop
// install (easy-install.pth naming root/src, an .egg-link) and an egg.
func pthFixture(root string) error {
	env := filepath.Join(root, "env")
	if err := pyenvtest.Write(env, pyenvtest.Spec{}); err != nil {
		return err
	}
	site := pyenvtest.SitePackages(env, pyenvtest.Spec{})
	src := filepath.Join(root, "pytorch")
	if err := pyenvtest.WriteTorch(src, "2.5.1+cu121", "12.1"); err != nil {
		return err
	}
	dist := "torch-2.5.1+cu121.dist-info"
	if err := os.Rename(filepath.Join(src, dist), filepath.Join(site, dist)); err != nil {
		return err
	}
	mod := "__editable___torch_2_5_1_finder"
	files := map[string]string{
		dist + "/direct_url.json":              `{"dir_info": {"editable": true}, "url": "file://` + root + `"}`,
		mod + ".py":                            "import sys\n\nMAPPING: dict[str, str] = {'torch': '" + filepath.Join(src, "torch") + "'}\nNAMESPACES: dict[str, list[str]] = {}\n\ndef install():\n    pass\n",
		"__editable__.torch-2.5.1+cu121.pth":   "import " + mod + "; " + mod + ".install()",
		"easy-install.pth":                     "# written by setuptools\n" + filepath.Join(root, "src") + "\n./bar-1.0-py3.11.egg\n",
		"foo.egg-link":                         filepath.Join(root, "src") + "\n.",
		"bar-1.0-py3.11.egg/EGG-INFO/PKG-INFO": "Metadata-Version: 2.1\nName: bar\nVersion: 1.0\n",
		"bar-1.0-py3.11.egg/bar/__init__.py":   "",
	}
	for rel, content := range files {
		if err := pyenvtest.WriteFile(site, rel, content); err != nil {
			return err
		}
	}
	if err := pyenvtest.WriteFile(root, "src/foo.egg-info/PKG-INFO", "Metadata-Version: 2.1\nName: foo\nVersion: 0.3\n"); err != nil {
		return err
	}
	return pyenvtest.WriteFile(root, "src/foo/__init__.py", "")
}

// uvFixture is a uv project pinned to the CUDA index, its lock, and its
// .venv with a CUDA torch.
func uvFixture(root string) error {
	lock, err := os.ReadFile(filepath.Join("..", "pyenv", "uvproject", "testdata", "lock", "split.lock"))
	if err != nil {
		return err
	}
	proj := filepath.Join(root, "proj")
	if err := pyenvtest.WriteFile(proj, "pyproject.toml", "[project]\nname = \"p\"\nversion = \"0\"\ndependencies = [\"torch>=2.0\"]\n\n"+
		"[[tool.uv.index]]\nname = \"pytorch-cu121\"\nurl = \"https://download.pytorch.org/whl/cu121\"\nexplicit = true\n\n"+
		"[tool.uv.sources]\ntorch = [{ index = \"pytorch-cu121\", marker = \"sys_platform == 'linux'\" }]\n"); err != nil {
		return err
	}
	if err := pyenvtest.WriteFile(proj, "uv.lock", string(lock)); err != nil {
		return err
	}
	return pyenvtest.Write(filepath.Join(proj, ".venv"), pyenvtest.Spec{Manager: "uv",
		Torch: &pyenvtest.Torch{DistVersion: "2.5.1+cu121", CUDA: "12.1", Installer: "uv"}})
}

// debianFixture is a prefix laid out as Debian's /usr with python3-torch:
// no site-packages, lib/python3/dist-packages holding an egg-info torch,
// and the interpreter marked EXTERNALLY-MANAGED.
func debianFixture(root string) error {
	usr := filepath.Join(root, "usr")
	if _, err := pyenvtest.WritePrefix(usr, "3.11"); err != nil {
		return err
	}
	if err := os.RemoveAll(filepath.Join(usr, "lib", "python3.11", "site-packages")); err != nil {
		return err
	}
	for rel, content := range map[string]string{
		"lib/python3.11/EXTERNALLY-MANAGED":                                     "[externally-managed]\nError=use apt\n",
		"lib/python3/dist-packages/torch-1.13.0a0+gitunknown.egg-info/PKG-INFO": "Metadata-Version: 2.1\nName: torch\nVersion: 1.13.0a0+gitunknown\n",
		"lib/python3/dist-packages/torch/version.py":                            "__version__ = '1.13.0a0'\ndebug = False\ncuda = None\ngit_version = 'Unknown'\nhip = None\n",
		"lib/python3/dist-packages/torch/lib/libtorch_cpu.so":                   "\x7fELF",
	} {
		if err := pyenvtest.WriteFile(usr, rel, content); err != nil {
			return err
		}
	}
	return os.MkdirAll(filepath.Join(usr, "local", "lib", "python3.11", "dist-packages"), 0o755)
}

// every keeps one mutation in n.
func every(ms []mutation, n int) []mutation {
	var out []mutation
	for i, m := range ms {
		if i%n == 0 {
			out = append(out, m)
		}
	}
	return out
}

// mutationsOf lists every mutation of every path under root: removed
// (moved aside, and back); a file edited in place keeping its size and
// time; a folder given a distribution, a .pth file and a pyproject.toml.
func mutationsOf(t *testing.T, root string) []mutation {
	t.Helper()
	aside := t.TempDir()
	var out []mutation
	err := filepath.WalkDir(root, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		if rel != "." {
			out = append(out, mutation{rel, "removing", func(p string) (func() error, error) {
				to := filepath.Join(aside, "x")
				return func() error { return os.Rename(to, p) }, os.Rename(p, to)
			}})
		}
		switch {
		case e.Type().IsRegular() && runtime.GOOS != "windows":
			// Windows gives no change time without opening the file
			// (fstrace.Stamp): an edit that keeps size and time is not
			// seen there, by design.
			out = append(out, mutation{rel, "editing in place", editInPlace})
		case e.IsDir():
			for _, add := range []struct{ name, content string }{
				{"zz_extra-1.0.dist-info/METADATA", "Metadata-Version: 2.1\nName: zz-extra\nVersion: 1.0\n"},
				{"zz.pth", "import zz_extra\n"},
				// a uv project that pins torch to the CPU index: beside a CUDA
				// torch, a finding
				{"pyproject.toml", "[project]\nname = \"zz\"\nversion = \"0\"\ndependencies = [\"torch\"]\n\n" +
					"[[tool.uv.index]]\nname = \"cpu\"\nurl = \"https://download.pytorch.org/whl/cpu\"\n\n[tool.uv.sources]\ntorch = { index = \"cpu\" }\n"},
			} {
				out = append(out, mutation{rel, "adding " + add.name + " to", func(p string) (func() error, error) {
					first, _, _ := strings.Cut(add.name, "/")
					if _, err := os.Lstat(filepath.Join(p, first)); err == nil {
						return func() error { return nil }, nil // there already: nothing added
					}
					err := pyenvtest.WriteFile(p, add.name, add.content)
					return func() error { return os.RemoveAll(filepath.Join(p, first)) }, err
				}})
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// editInPlace changes a file's first bytes (64 KiB at most: a library
// is a large sparse file), keeping its size, inode and modification
// time: digits turned, else letters' case swapped, else the first byte
// flipped (an empty file is left as it is).
func editInPlace(p string) (func() error, error) {
	fi, err := os.Stat(p)
	if err != nil {
		return nil, err
	}
	f, err := os.Open(p)
	if err != nil {
		return nil, err
	}
	old := make([]byte, min(fi.Size(), 64<<10))
	_, err = io.ReadFull(f, old)
	f.Close()
	if err != nil || len(old) == 0 {
		return func() error { return nil }, err
	}
	b := bytes.Clone(old)
	switch {
	case bytes.ContainsAny(b, "0123456789"):
		for i, c := range b {
			if '0' <= c && c <= '9' {
				b[i] = '0' + (c-'0'+1)%10
			}
		}
	case bytes.ContainsFunc(b, func(r rune) bool { return 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' }):
		for i, c := range b {
			switch {
			case 'a' <= c && c <= 'z':
				b[i] = c - 'a' + 'A'
			case 'A' <= c && c <= 'Z':
				b[i] = c - 'A' + 'a'
			}
		}
	default:
		b[0] ^= 1
	}
	put := func(data []byte) error {
		f, err := os.OpenFile(p, os.O_WRONLY, 0)
		if err != nil {
			return err
		}
		if _, err := f.WriteAt(data, 0); err != nil {
			f.Close()
			return err
		}
		if err := f.Close(); err != nil {
			return err
		}
		return os.Chtimes(p, fi.ModTime(), fi.ModTime())
	}
	return func() error { return put(old) }, put(b)
}
