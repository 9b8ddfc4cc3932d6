package envsearch_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/gpucanary/gpucanary/monitor/pyenv"
	"github.com/gpucanary/gpucanary/monitor/pyenv/envsearch"
	"github.com/gpucanary/gpucanary/monitor/pyenv/managers"
	"github.com/gpucanary/gpucanary/monitor/pyenv/pyenvtest"
)

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
	for _, m := range managers.Managers() {
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
			found := discover(context.Background(), envsearch.Options{System: []string{}, Home: home, Cwd: t.TempDir(), Getenv: func(string) string { return "" }})
			if !slices.Contains(found, envsearch.Found{Path: root, Via: "home"}) {
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

	o := envsearch.Options{System: []string{}, Home: home, Cwd: filepath.Join(base, "cwd"), Getenv: func(string) string { return "" }, MaxDepth: 1}
	got := discover(context.Background(), o)
	usual := "conda's usual folder " + filepath.Join(home, "miniforge3")
	want := []envsearch.Found{ // the folders in condaHomes' order, then the list sorted
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

	got := paths(discover(context.Background(), envsearch.Options{System: []string{},
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
	got := discover(context.Background(), envsearch.Options{System: []string{}, Cwd: filepath.Join(base, "nocwd"), Home: filepath.Join(base, "nohome"),
		Getenv: func(k string) string { return env[k] }})
	want := []envsearch.Found{{Path: venv, Via: "VIRTUAL_ENV"}, {Path: condaEnv, Via: "CONDA_PREFIX"}}
	if !slices.Equal(got, want) {
		t.Errorf("Discover = %v, want %v", got, want)
	}
	if tv := managers.TargetVars(); !slices.Equal(tv, []string{"VIRTUAL_ENV", "UV_PROJECT_ENVIRONMENT", "CONDA_PREFIX"}) {
		t.Errorf("TargetVars = %v", tv)
	}
}
