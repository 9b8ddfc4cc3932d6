package pyenv_test

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gpucanary/gpucanary/monitor/pyenv"
	"github.com/gpucanary/gpucanary/monitor/pyenv/pyenvtest"
)

// pyvenv.cfg as each tool writes it (the key order and spellings are the
// tools' own: CPython 3.11's venv, virtualenv 20.26, uv 0.5).
const (
	cfgVenv = "home = /usr/bin\ninclude-system-site-packages = false\nversion = 3.11.7\n" +
		"executable = /usr/bin/python3.11\ncommand = /usr/bin/python3 -m venv /home/me/proj/.venv\n"
	cfgVirtualenv = "home = /usr/bin\nimplementation = CPython\nversion_info = 3.11.7.final.0\nvirtualenv = 20.26.6\n" +
		"include-system-site-packages = false\nbase-prefix = /usr\nbase-exec-prefix = /usr\nbase-executable = /usr/bin/python3.11\n"
	cfgUV = "home = /usr/bin\nimplementation = CPython\nuv = 0.5.11\nversion_info = 3.11.7\n" +
		"include-system-site-packages = false\nprompt = proj\n"
	cfgVenvWindows = "home = C:\\Users\\me\\AppData\\Local\\Programs\\Python\\Python311\r\ninclude-system-site-packages = false\r\n" +
		"version = 3.11.7\r\nexecutable = C:\\Users\\me\\AppData\\Local\\Programs\\Python\\Python311\\python.exe\r\n" +
		"command = C:\\Users\\me\\AppData\\Local\\Programs\\Python\\Python311\\python.exe -m venv C:\\Users\\me\\proj\\.venv\r\n"
)

// writeFile writes content at root/rel, creating folders.
func writeFile(t testing.TB, root, rel, content string) {
	t.Helper()
	p := filepath.Join(root, filepath.FromSlash(rel))
	must(t, os.MkdirAll(filepath.Dir(p), 0o755))
	must(t, os.WriteFile(p, []byte(content), 0o644))
}

// writeDist writes a dist-info as an installer leaves it: METADATA,
// INSTALLER (when installer is not ""), the package's __init__.py and a
// RECORD that lists them with their sha256.
func writeDist(t testing.TB, site, name, version, installer string) {
	t.Helper()
	dist := strings.ReplaceAll(name, "-", "_") + "-" + version + ".dist-info"
	files := map[string]string{
		dist + "/METADATA": fmt.Sprintf("Metadata-Version: 2.1\nName: %s\nVersion: %s\n", name, version),
		strings.ReplaceAll(name, "-", "_") + "/__init__.py": "",
	}
	if installer != "" {
		files[dist+"/INSTALLER"] = installer
	}
	var record strings.Builder
	for _, rel := range slices.Sorted(func(yield func(string) bool) {
		for k := range files {
			if !yield(k) {
				return
			}
		}
	}) {
		sum := sha256.Sum256([]byte(files[rel]))
		fmt.Fprintf(&record, "%s,sha256=%s,%d\n", rel, base64.RawURLEncoding.EncodeToString(sum[:]), len(files[rel]))
		writeFile(t, site, rel, files[rel])
	}
	fmt.Fprintf(&record, "%s/RECORD,,\n", dist)
	writeFile(t, site, dist+"/RECORD", record.String())
}

// TestInspectInstaller is installer detection: which manager Env.Installer
// names, from the markers each tool writes and the INSTALLER files its
// installs leave.
func TestInspectInstaller(t *testing.T) {
	torch := func(installer string) *pyenvtest.Torch {
		return &pyenvtest.Torch{DistVersion: "2.5.1+cu121", CUDA: "12.1", Installer: installer}
	}
	// bitsandbytes and llama-cpp-python are read with their INSTALLER
	// ("pip" as pyenvtest writes them); writeDist replaces bitsandbytes's.
	bnb := &pyenvtest.BNB{Version: "0.45.0", CUDALibs: []string{"124"}}
	llama := &pyenvtest.Llama{Version: "0.3.4", Backends: []string{"cuda"}}
	tests := []struct {
		name   string
		spec   pyenvtest.Spec
		cfg    string // replaces pyvenv.cfg when set
		mutate func(t *testing.T, root, site string)
		kind   string
		want   string
	}{
		{name: "venv, torch installed by pip", spec: pyenvtest.Spec{Torch: torch("pip\n")}, cfg: cfgVenv,
			kind: pyenv.KindVenv, want: pyenv.InstallerPip},
		{name: "virtualenv, torch installed by uv pip", spec: pyenvtest.Spec{Torch: torch("uv")}, cfg: cfgVirtualenv,
			kind: pyenv.KindVenv, want: pyenv.InstallerUV},
		{name: "Windows venv, torch installed by pip", spec: pyenvtest.Spec{Layout: pyenv.LayoutWindows, Torch: torch("pip\r\n")}, cfg: cfgVenvWindows,
			kind: pyenv.KindVenv, want: pyenv.InstallerPip},
		{name: "uv venv claims its env whatever torch's INSTALLER says", spec: pyenvtest.Spec{Manager: "uv", Torch: torch("pip\n")}, cfg: cfgUV,
			kind: pyenv.KindVenv, want: pyenv.InstallerUV},
		{name: "uv venv without torch", spec: pyenvtest.Spec{Manager: "uv"}, cfg: cfgUV,
			kind: pyenv.KindVenv, want: pyenv.InstallerUV},
		{name: "venv, no INSTALLER anywhere", spec: pyenvtest.Spec{Torch: torch("")}, cfg: cfgVenv,
			kind: pyenv.KindVenv, want: pyenv.InstallerUnknown},
		{name: "venv, torch without INSTALLER: the first package by name decides", spec: pyenvtest.Spec{Torch: torch(""), BNB: bnb, Llama: llama}, cfg: cfgVenv,
			mutate: func(t *testing.T, root, site string) { writeDist(t, site, "bitsandbytes", "0.45.0", "uv") },
			kind:   pyenv.KindVenv, want: pyenv.InstallerUV},
		{name: "venv, torch's INSTALLER beats the other packages'", spec: pyenvtest.Spec{Torch: torch("pip\n"), BNB: bnb}, cfg: cfgVenv,
			mutate: func(t *testing.T, root, site string) { writeDist(t, site, "bitsandbytes", "0.45.0", "uv") },
			kind:   pyenv.KindVenv, want: pyenv.InstallerPip},
		{name: "venv: conda's INSTALLER names no venv's manager", spec: pyenvtest.Spec{Torch: torch("conda\n")}, cfg: cfgVenv,
			kind: pyenv.KindVenv, want: pyenv.InstallerUnknown},
		{name: "venv: an installer not in the table is unknown", spec: pyenvtest.Spec{Torch: torch("poetry\n")}, cfg: cfgVenv,
			kind: pyenv.KindVenv, want: pyenv.InstallerUnknown},
		{name: "conda env with conda's torch", spec: pyenvtest.Spec{Manager: "conda", Torch: torch(""), CondaTorchBuild: "py3.11_cuda12.1_cudnn8.9.2_0"},
			kind: pyenv.KindConda, want: pyenv.InstallerConda},
		{name: "conda env claims its env over a pip-installed torch", spec: pyenvtest.Spec{Manager: "conda", Torch: torch("pip\n")},
			kind: pyenv.KindConda, want: pyenv.InstallerConda},
		{name: "conda-meta beside a plain pyvenv.cfg is conda's", spec: pyenvtest.Spec{Manager: "conda", Torch: torch("pip\n")},
			mutate: func(t *testing.T, root, site string) { writeFile(t, root, "pyvenv.cfg", cfgVenv) },
			kind:   pyenv.KindConda, want: pyenv.InstallerConda},
		{name: "a conda-meta link to a folder counts", spec: pyenvtest.Spec{Torch: torch("pip\n")}, cfg: cfgVenv,
			mutate: func(t *testing.T, root, site string) {
				must(t, os.Remove(filepath.Join(root, "pyvenv.cfg")))
				meta := filepath.Join(t.TempDir(), "conda-meta")
				writeFile(t, meta, "history", "==> 2024-11-20 10:00:00 <==\n")
				must(t, os.Symlink(meta, filepath.Join(root, "conda-meta")))
			},
			kind: pyenv.KindConda, want: pyenv.InstallerConda},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := filepath.Join(t.TempDir(), "env")
			must(t, pyenvtest.Write(root, tt.spec))
			if tt.cfg != "" {
				writeFile(t, root, "pyvenv.cfg", tt.cfg)
			}
			if tt.mutate != nil {
				tt.mutate(t, root, sitePackages(root, tt.spec.Layout))
			}
			env, err := pyenv.Inspect(root)
			if err != nil {
				t.Fatal(err)
			}
			if env.Kind != tt.kind || env.Installer != tt.want {
				t.Errorf("Kind, Installer = %q, %q; want %q, %q", env.Kind, env.Installer, tt.kind, tt.want)
			}
		})
	}
}

// managerFixtures writes, for each manager in the table, an environment
// as that tool makes it. A manager added to the table without one fails
// TestManagerMarkers.
var managerFixtures = map[string]func(t *testing.T, root string){
	pyenv.InstallerUV: func(t *testing.T, root string) {
		must(t, pyenvtest.Write(root, pyenvtest.Spec{Manager: "uv", Torch: &pyenvtest.Torch{DistVersion: "2.5.1", Installer: "uv"}}))
		writeFile(t, root, "pyvenv.cfg", cfgUV)
	},
	pyenv.InstallerConda: func(t *testing.T, root string) {
		must(t, pyenvtest.Write(root, pyenvtest.Spec{Manager: "conda",
			Torch: &pyenvtest.Torch{DistVersion: "2.5.1", CUDA: "12.1"}, CondaTorchBuild: "py3.11_cuda12.1_cudnn8.9.2_0"}))
	},
	pyenv.InstallerPip: func(t *testing.T, root string) {
		must(t, pyenvtest.Write(root, pyenvtest.Spec{Torch: &pyenvtest.Torch{DistVersion: "2.5.1", Installer: "pip\n"}}))
		writeFile(t, root, "pyvenv.cfg", cfgVirtualenv)
	},
}

// TestManagerMarkers checks every table entry against a fixture of its
// tool's own files: the folder is an environment, the walk finds it, and
// Inspect gives it the manager's Kind and Name; without its marker it is
// none of these.
func TestManagerMarkers(t *testing.T) {
	names := map[string]bool{}
	for _, m := range pyenv.Managers() {
		if m.Name == "" || names[m.Name] {
			t.Fatalf("manager name %q is empty or not unique", m.Name)
		}
		names[m.Name] = true
		if m.Marker.Name == "" {
			continue // known by its places (TestManagerDefaultPlaces), not by a marker
		}
		t.Run(m.Name, func(t *testing.T) {
			if m.Kind != pyenv.KindVenv && m.Kind != pyenv.KindConda {
				t.Errorf("Kind = %q, want a Kind Inspect knows", m.Kind)
			}
			write, ok := managerFixtures[m.Name]
			if !ok {
				t.Fatalf("no fixture of %s's environment in managerFixtures", m.Name)
			}
			home := t.TempDir()
			root := filepath.Join(home, "proj", "env")
			write(t, root)
			if !pyenv.IsEnv(root) {
				t.Errorf("IsEnv = false for %s's environment", m.Name)
			}
			found := discover(context.Background(), pyenv.DiscoverOptions{System: []string{}, Home: home, Cwd: t.TempDir(), Getenv: func(string) string { return "" }})
			if !slices.Contains(found, pyenv.Found{Path: root, Via: "home"}) {
				t.Errorf("Discover = %v, want %s via home", found, root)
			}
			env, err := pyenv.Inspect(root)
			if err != nil {
				t.Fatal(err)
			}
			if env.Kind != m.Kind || env.Installer != m.Name {
				t.Errorf("Inspect: Kind, Installer = %q, %q; want %q, %q", env.Kind, env.Installer, m.Kind, m.Name)
			}
			must(t, os.RemoveAll(filepath.Join(root, m.Marker.Name)))
			if pyenv.IsEnv(root) {
				t.Errorf("IsEnv = true without %s", m.Marker.Name)
			}
			if _, err := pyenv.Inspect(root); err == nil {
				t.Errorf("Inspect without %s: no error", m.Marker.Name)
			}
		})
	}
}

func TestIsEnvMarkerTypes(t *testing.T) {
	tests := []struct {
		name  string
		setup func(t *testing.T, dir string)
		want  bool
	}{
		{"pyvenv.cfg file", func(t *testing.T, dir string) { writeFile(t, dir, "pyvenv.cfg", cfgVenv) }, true},
		{"pyvenv.cfg folder", func(t *testing.T, dir string) { must(t, os.MkdirAll(filepath.Join(dir, "pyvenv.cfg"), 0o755)) }, false},
		{"conda-meta folder", func(t *testing.T, dir string) {
			writeFile(t, dir, "conda-meta/history", "==> 2024-11-20 10:00:00 <==\n")
		}, true},
		{"conda-meta file", func(t *testing.T, dir string) { writeFile(t, dir, "conda-meta", "") }, false},
		{"conda-meta link to a folder", func(t *testing.T, dir string) {
			target := t.TempDir()
			must(t, os.Symlink(target, filepath.Join(dir, "conda-meta")))
		}, true},
		{"neither", func(t *testing.T, dir string) { writeFile(t, dir, "bin/python", "\x7fELF") }, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			tt.setup(t, dir)
			if got := pyenv.IsEnv(dir); got != tt.want {
				t.Errorf("IsEnv = %v, want %v", got, tt.want)
			}
		})
	}
}

// TestManagerPlaces covers the places conda's config names: its folders
// under home and the environments its environments.txt lists, wherever
// they are; Places counts those outside home as searched.
func TestManagerPlaces(t *testing.T) {
	base := t.TempDir()
	home := filepath.Join(base, "home")
	conda := func(p string) string {
		must(t, pyenvtest.Write(p, pyenvtest.Spec{Manager: "conda"}))
		return p
	}
	forgeBase := conda(filepath.Join(home, "miniforge3"))
	forgeEnv := conda(filepath.Join(home, "miniforge3", "envs", "train"))
	elsewhere := conda(filepath.Join(base, "opt", "envs", "shared"))
	listedInHome := conda(filepath.Join(home, "work", "prefix-env"))
	// conda appends every env it creates to environments.txt, base included
	writeFile(t, home, ".conda/environments.txt", forgeBase+"\n"+elsewhere+"\n\n"+listedInHome+"\nrelative/ignored\n"+filepath.Join(base, "gone")+"\n")

	o := pyenv.DiscoverOptions{System: []string{}, Home: home, Cwd: filepath.Join(base, "cwd"), Getenv: func(string) string { return "" }, MaxDepth: 1}
	got := discover(context.Background(), o)
	usual := "conda's usual folder " + filepath.Join(home, "miniforge3")
	want := []pyenv.Found{ // the folders in condaHomes' order, then the list sorted
		{Path: forgeBase, Via: "conda", From: usual},
		{Path: forgeEnv, Via: "conda", From: usual},
		{Path: listedInHome, Via: "conda", From: "~/.conda/environments.txt"},
		{Path: elsewhere, Via: "conda", From: "~/.conda/environments.txt"},
	}
	if !slices.Equal(got, want) {
		t.Errorf("Discover =\n%v\nwant\n%v", got, want)
	}
	places := o.Places()
	// the folders under home add nothing; what the list names outside it
	// does, when it is there
	wantPlaces := []string{filepath.Join(base, "cwd"), home, elsewhere}
	if !slices.Equal(places, wantPlaces) {
		t.Errorf("Places =\n%v\nwant\n%v", places, wantPlaces)
	}
}

// TestWalkNested: the walk enters the folders a manager nests its
// environments in (a conda base's envs/) and no other folder of an
// environment.
func TestWalkNested(t *testing.T) {
	root := t.TempDir()
	condaBase := filepath.Join(root, "opt", "conda")
	must(t, pyenvtest.Write(condaBase, pyenvtest.Spec{Manager: "conda"}))
	nested := filepath.Join(condaBase, "envs", "ml")
	must(t, pyenvtest.Write(nested, pyenvtest.Spec{Manager: "conda"}))
	venv := filepath.Join(root, "proj", ".venv")
	must(t, pyenvtest.Write(venv, pyenvtest.Spec{Manager: "uv"}))
	inVenv := filepath.Join(venv, "envs", "x")
	must(t, pyenvtest.Write(inVenv, pyenvtest.Spec{}))

	got := paths(discover(context.Background(), pyenv.DiscoverOptions{System: []string{},
		Roots: []string{root}, Home: filepath.Join(root, "nohome"), Cwd: filepath.Join(root, "nocwd"), Getenv: func(string) string { return "" }}))
	want := map[string]string{condaBase: "root", nested: "root", venv: "root"}
	if !mapsEqual(got, want) {
		t.Errorf("Discover found\n%v\nwant\n%v", got, want)
	}
}

func TestActiveVarsFromTable(t *testing.T) {
	base := t.TempDir()
	venv := filepath.Join(base, "v")
	must(t, pyenvtest.Write(venv, pyenvtest.Spec{Manager: "uv"}))
	condaEnv := filepath.Join(base, "c")
	must(t, pyenvtest.Write(condaEnv, pyenvtest.Spec{Manager: "conda"}))
	env := map[string]string{"VIRTUAL_ENV": venv, "CONDA_PREFIX": condaEnv}
	got := discover(context.Background(), pyenv.DiscoverOptions{System: []string{}, Cwd: filepath.Join(base, "nocwd"), Home: filepath.Join(base, "nohome"),
		Getenv: func(k string) string { return env[k] }})
	want := []pyenv.Found{{Path: venv, Via: "VIRTUAL_ENV"}, {Path: condaEnv, Via: "CONDA_PREFIX"}}
	if !slices.Equal(got, want) {
		t.Errorf("Discover = %v, want %v", got, want)
	}
	if tv := pyenv.TargetVars(); !slices.Equal(tv, []string{"VIRTUAL_ENV", "UV_PROJECT_ENVIRONMENT", "CONDA_PREFIX"}) {
		t.Errorf("TargetVars = %v", tv)
	}
}
