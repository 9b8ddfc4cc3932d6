package guard_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gpucanary/gpucanary/monitor/guard"
	"github.com/gpucanary/gpucanary/monitor/pyenv"
	"github.com/gpucanary/gpucanary/monitor/pyenv/pyenvtest"
)

var cudaTorch = &pyenvtest.Torch{DistVersion: "2.5.1+cu121", CUDA: "12.1", Installer: "pip\n"}

func write(t *testing.T, dir string, s pyenvtest.Spec) string {
	t.Helper()
	if err := pyenvtest.Write(dir, s); err != nil {
		t.Fatal(err)
	}
	return dir
}

// prefix turns a venv written by pyenvtest into an interpreter's own
// installation: no pyvenv.cfg, a standard library, the interpreter at the
// top (Windows, as an embedded Python lays it out) or in bin/.
func prefix(t *testing.T, dir string, layout pyenv.Layout) string {
	t.Helper()
	write(t, dir, pyenvtest.Spec{Layout: layout, Torch: cudaTorch})
	os.Remove(filepath.Join(dir, "pyvenv.cfg"))
	files := map[string]string{"lib/python3.11/os.py": "", "bin/python3": "\x7fELF"}
	if layout == pyenv.LayoutWindows {
		files = map[string]string{"Lib/os.py": "", "python.exe": "MZ", "python311.dll": "MZ"}
	}
	for n, c := range files {
		p := filepath.Join(dir, filepath.FromSlash(n))
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(c), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestGuardWritesEachManagersFiles: what each manager's guard writes,
// that each says who wrote it and how to undo it, and that unguard gives
// the environment back byte for byte.
func TestGuardWritesEachManagersFiles(t *testing.T) {
	cases := []struct {
		name string
		make func(t *testing.T, dir string) string
		// pre are files there before the guard (relative path -> content).
		pre map[string]string
		// want are files after the guard and what each must hold.
		want map[string][]string
	}{
		{name: "venv", make: func(t *testing.T, d string) string { return write(t, d, pyenvtest.Spec{Torch: cudaTorch}) },
			want: map[string][]string{"pip.conf": {"[install]\n", "constraint = "}, guard.ConstraintsName: {"\ntorch==2.5.1+cu121\n"}}},
		{name: "windows venv: pip.ini", make: func(t *testing.T, d string) string {
			return write(t, d, pyenvtest.Spec{Layout: pyenv.LayoutWindows, Torch: cudaTorch, Vision: &pyenvtest.Companion{Version: "0.20.1+cu121", CUDA: "12.1"}})
		},
			want: map[string][]string{"pip.ini": {"[install]\r\n"}, guard.ConstraintsName: {"\r\ntorch==2.5.1+cu121\r\ntorchvision==0.20.1+cu121\r\n"}}},
		{name: "embedded Python prefix: pip.ini at its top", make: func(t *testing.T, d string) string { return prefix(t, d, pyenv.LayoutWindows) },
			want: map[string][]string{"pip.ini": {"constraint = "}, guard.ConstraintsName: {"torch==2.5.1+cu121"}}},
		{name: "ComfyUI portable's python_embeded", make: func(t *testing.T, d string) string {
			env, err := pyenvtest.ComfyUIPortable(d, pyenvtest.Spec{Layout: pyenv.LayoutWindows, Torch: cudaTorch})
			if err != nil {
				t.Fatal(err)
			}
			if e, err := pyenv.Inspect(env); err != nil || e.Kind != pyenv.KindEmbedded {
				t.Fatalf("fixture: %v %v", e, err)
			}
			return env
		},
			want: map[string][]string{"pip.ini": {"[install]\r\n", "constraint = "}, guard.ConstraintsName: {"torch==2.5.1+cu121"}}},
		{name: "POSIX prefix", make: func(t *testing.T, d string) string { return prefix(t, d, pyenv.LayoutPOSIX) },
			want: map[string][]string{"pip.conf": {"constraint = "}}},
		{name: "their pip.conf kept", make: func(t *testing.T, d string) string { return write(t, d, pyenvtest.Spec{Torch: cudaTorch}) },
			pre:  map[string]string{"pip.conf": "[global]\nindex-url = https://mirror.example/simple\n\n[install]\nno-warn-script-location = true\n"},
			want: map[string][]string{"pip.conf": {"[global]\nindex-url = https://mirror.example/simple\n\n[install]\n# Written by GPU Canary", "constraint = ", "\nno-warn-script-location = true\n"}}},
		{name: "conda: pinned and pip.conf", make: func(t *testing.T, d string) string {
			return write(t, d, pyenvtest.Spec{Manager: "conda", Torch: &pyenvtest.Torch{DistVersion: "2.5.1", CUDA: "12.1"}, CondaTorchBuild: "py3.11_cuda12.1_cudnn8.9.2_0"})
		},
			want: map[string][]string{"conda-meta/pinned": {"# Written by GPU Canary", "gpucanary unguard", "\npytorch ==2.5.1 py3.11_cuda12.1_cudnn8.9.2_0\n"}, "pip.conf": {"constraint = "}}},
		{name: "conda: their pinned kept", make: func(t *testing.T, d string) string {
			return write(t, d, pyenvtest.Spec{Manager: "conda", Torch: &pyenvtest.Torch{DistVersion: "2.5.1", CUDA: "12.1"}, CondaTorchBuild: "py3.11_cuda12.1_cudnn8.9.2_0"})
		},
			pre:  map[string]string{"conda-meta/pinned": "numpy 1.26.*"},
			want: map[string][]string{"conda-meta/pinned": {"numpy 1.26.*\n# Written by GPU Canary", "pytorch ==2.5.1 py3.11"}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			env := c.make(t, filepath.Join(t.TempDir(), "env"))
			for n, s := range c.pre {
				if err := os.WriteFile(filepath.Join(env, filepath.FromSlash(n)), []byte(s), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			before := tree(t, env)
			k := guard.Keeper{StateDir: t.TempDir()}
			if _, err := k.Guard(env); err != nil {
				t.Fatal(err)
			}
			for n, wants := range c.want {
				b, err := os.ReadFile(filepath.Join(env, filepath.FromSlash(n)))
				if err != nil {
					t.Fatal(err)
				}
				for _, w := range append(wants, "GPU Canary", "gpucanary unguard "+env) {
					if !strings.Contains(string(b), w) {
						t.Errorf("%s lacks %q:\n%s", n, w, b)
					}
				}
			}
			if st := k.Read(env); !st.Guarded {
				t.Errorf("Read after guard: %+v", st)
			}
			// A second guard sets it again, over its own files.
			if _, err := k.Guard(env); err != nil {
				t.Fatal(err)
			}
			if _, err := k.Unguard(env, false); err != nil {
				t.Fatal(err)
			}
			if d := diffTrees(before, tree(t, env)); len(d) > 0 {
				t.Errorf("not restored byte for byte:\n%s", strings.Join(d, "\n"))
			}
			if _, err := k.Unguard(env, false); !errors.Is(err, guard.ErrNotGuarded) {
				t.Errorf("a second unguard: %v", err)
			}
		})
	}
}

// TestGuardRefuses: environments a guard cannot hold, each with a reason,
// and nothing written.
func TestGuardRefuses(t *testing.T) {
	cases := []struct {
		name string
		spec pyenvtest.Spec
		user bool // make it a user base: no interpreter
		want string
	}{
		{name: "CPU torch", spec: pyenvtest.Spec{Torch: &pyenvtest.Torch{DistVersion: "2.5.1+cpu"}}, want: "repair it first"},
		{name: "no torch", spec: pyenvtest.Spec{}, want: "no torch"},
		{name: "uv venv outside a project", spec: pyenvtest.Spec{Manager: "uv", Torch: cudaTorch}, want: "uv pip install` reads no pip config"},
		{name: "prefix without interpreter", spec: pyenvtest.Spec{Torch: cudaTorch}, user: true, want: "holds no interpreter"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			env := write(t, filepath.Join(t.TempDir(), "env"), c.spec)
			if c.user {
				os.Remove(filepath.Join(env, "pyvenv.cfg"))
				os.Remove(filepath.Join(env, "bin", "python"))
				os.WriteFile(filepath.Join(env, "lib", "python3.11", "os.py"), nil, 0o644)
			}
			before := tree(t, env)
			_, err := guard.Keeper{StateDir: t.TempDir()}.Guard(env)
			var r *guard.Refused
			if !errors.As(err, &r) || !strings.Contains(r.Reason, c.want) {
				t.Fatalf("got %v; want a refusal saying %q", err, c.want)
			}
			if d := diffTrees(before, tree(t, env)); len(d) > 0 {
				t.Errorf("a refused guard changed the environment:\n%s", strings.Join(d, "\n"))
			}
		})
	}
}

// TestUVProjectGuard: a uv project's pyproject.toml gets the CUDA index
// pin and constraint-dependencies, and gets back its bytes on unguard.
func TestUVProjectGuard(t *testing.T) {
	dir := t.TempDir()
	py := "[project]\nname = \"app\"\nversion = \"0.1.0\"\ndependencies = [\"torch>=2.5\"]\n\n[tool.uv]\ndev-dependencies = []\n"
	if err := os.WriteFile(filepath.Join(dir, "pyproject.toml"), []byte(py), 0o644); err != nil {
		t.Fatal(err)
	}
	env := write(t, filepath.Join(dir, ".venv"), pyenvtest.Spec{Manager: "uv", Torch: &pyenvtest.Torch{DistVersion: "2.5.1+cu124", CUDA: "12.4", Installer: "uv"}})
	k := guard.Keeper{StateDir: t.TempDir(), IndexBase: "https://mirror.example/whl"}
	res, err := k.Guard(env)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(filepath.Join(dir, "pyproject.toml"))
	for _, w := range []string{"[tool.uv]\n# Written by GPU Canary", "constraint-dependencies = [\n    \"torch==2.5.1+cu124; sys_platform == 'linux' or sys_platform == 'win32'\",\n]\ndev-dependencies = []\n",
		`url = "https://mirror.example/whl/cu124"`, "[tool.uv.sources]\ntorch = "} {
		if !strings.Contains(string(b), w) {
			t.Errorf("pyproject.toml lacks %q:\n%s", w, b)
		}
	}
	if len(res.Pins) != 1 {
		t.Errorf("pins: %v", res.Pins)
	}
	if _, err := k.Unguard(env, false); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "pyproject.toml")); string(b) != py {
		t.Errorf("pyproject.toml after unguard:\n%s", b)
	}
}

// TestWindowsPaths: the pip.ini route's names for a Windows environment,
// whatever the host: pip.ini beside the interpreter, and a constraints
// path with a space written as a file: URL (pip splits the value on
// whitespace).
func TestWindowsPaths(t *testing.T) {
	cases := []struct{ env, conf, ref string }{
		{`C:\ComfyUI_windows_portable\python_embeded`, `C:\ComfyUI_windows_portable\python_embeded\pip.ini`,
			`C:\ComfyUI_windows_portable\python_embeded\gpucanary-constraints.txt`},
		{`C:\Users\John Smith\ComfyUI\python_embeded`, `C:\Users\John Smith\ComfyUI\python_embeded\pip.ini`,
			`file:///C:/Users/John%20Smith/ComfyUI/python_embeded/gpucanary-constraints.txt`},
		{`D:\venvs\sd\`, `D:\venvs\sd\pip.ini`, `D:\venvs\sd\gpucanary-constraints.txt`},
	}
	for _, c := range cases {
		if got := guard.PipConfigPath(c.env, pyenv.LayoutWindows); got != c.conf {
			t.Errorf("PipConfigPath(%s) = %s; want %s", c.env, got, c.conf)
		}
		cons := strings.TrimSuffix(guard.PipConfigPath(c.env, pyenv.LayoutWindows), "pip.ini") + guard.ConstraintsName
		if got := guard.ConstraintRef(cons); got != c.ref {
			t.Errorf("ConstraintRef(%s) = %s; want %s", cons, got, c.ref)
		}
	}
	if got := guard.ConstraintRef("/home/me/my env/.venv/x.txt"); got != "file:///home/me/my%20env/.venv/x.txt" {
		t.Errorf("POSIX path with a space: %s", got)
	}
}

// TestMalformedRecord: a guard record that cannot be read is reported
// as a change (the user hears of it), and no second guard is set over it.
func TestMalformedRecord(t *testing.T) {
	env := write(t, filepath.Join(t.TempDir(), "env"), pyenvtest.Spec{Torch: cudaTorch})
	k := guard.Keeper{StateDir: t.TempDir()}
	if _, err := k.Guard(env); err != nil {
		t.Fatal(err)
	}
	recs, _ := filepath.Glob(filepath.Join(k.StateDir, "guard", "*", "record.json"))
	if len(recs) != 1 {
		t.Fatalf("records: %v", recs)
	}
	if err := os.WriteFile(recs[0], []byte("{not json"), 0o600); err != nil {
		t.Fatal(err)
	}
	if st := k.Read(env); st.Guarded || len(st.Changed) != 1 || !strings.Contains(st.Changed[0], "malformed") {
		t.Errorf("Read: %+v", st)
	}
	conf, _ := os.ReadFile(filepath.Join(env, "pip.conf"))
	if _, err := k.Guard(env); err == nil || !strings.Contains(err.Error(), "malformed") {
		t.Errorf("Guard over a malformed record: %v", err)
	}
	if after, _ := os.ReadFile(filepath.Join(env, "pip.conf")); string(after) != string(conf) {
		t.Errorf("pip.conf changed:\n%s", after)
	}
}

// TestAny: no records' folder, no guard anywhere; one there (or one that
// cannot be looked at), maybe.
func TestAny(t *testing.T) {
	if (guard.Keeper{}).Any() {
		t.Fatal("a keeper without a state folder says a guard may exist")
	}
	k := guard.Keeper{StateDir: t.TempDir()}
	if k.Any() {
		t.Fatal("a state folder without records says a guard may exist")
	}
	if err := os.MkdirAll(filepath.Join(k.StateDir, "guard"), 0o700); err != nil {
		t.Fatal(err)
	}
	if !k.Any() {
		t.Fatal("the records' folder is there, and Any says no guard can exist")
	}
}
