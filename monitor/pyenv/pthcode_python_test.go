package pyenv_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gpucanary/gpucanary/monitor/pyenv"
)

// realVenv makes a venv with the host's Python and returns it with its
// site-packages; the test is skipped when the host cannot make one.
func realVenv(t *testing.T, dir string) (venv, site string) {
	t.Helper()
	py := hostPython(t)
	venv = filepath.Join(dir, "venv")
	if out, err := exec.Command(py, "-m", "venv", "--without-pip", venv).CombinedOutput(); err != nil {
		t.Skipf("%s -m venv: %v\n%s", py, err, out)
	}
	sites, _ := filepath.Glob(filepath.Join(venv, "lib", "python3*", "site-packages"))
	if len(sites) != 1 {
		t.Fatalf("site-packages of %s: %v", venv, sites)
	}
	return venv, sites[0]
}

// writeEgg lays out an egg folder as easy_install left one in site: the
// package folder and EGG-INFO/PKG-INFO, and returns its path.
func writeEgg(t *testing.T, site, name, version, cuda string) string {
	t.Helper()
	egg := filepath.Join(site, name+"-"+version+"-py3.11-linux-x86_64.egg")
	writeTorch(t, egg, version, cuda)
	must(t, os.RemoveAll(filepath.Join(egg, "torch-"+version+".dist-info")))
	writeFile(t, egg, "EGG-INFO/PKG-INFO", "Metadata-Version: 2.1\nName: "+name+"\nVersion: "+version+"\n")
	return egg
}

// eggBlock is the easy-install.pth setuptools writes for the path lines.
func eggBlock(lines ...string) string {
	return "import sys; sys.__plen = len(sys.path)\n" + strings.Join(lines, "\n") +
		"\nimport sys; new = sys.path[sys.__plen:]; del sys.path[sys.__plen:]; p = getattr(sys, '__egginsert', 0); sys.path[p:p] = new; sys.__egginsert = p + len(new)\n"
}

// TestPthCodeOrderMatchesPython: the .pth import lines GPU Canary follows
// (sys.path.insert and append of a literal folder, setuptools'
// easy_install block) put folders where the venv's own Python puts them,
// and torch is read where Python finds it: a CPU torch that a .pth line
// puts in front of the venv's CUDA torch is the one judged.
func TestPthCodeOrderMatchesPython(t *testing.T) {
	for _, tt := range []struct {
		name string
		// lay writes the .pth files into site; dir is a scratch folder
		// beside the venv. It returns the folder torch is read from.
		lay func(t *testing.T, dir, site string) string
	}{
		{"sys.path.insert(0) of a CPU site", func(t *testing.T, dir, site string) string {
			cpu := filepath.Join(dir, "cpu_site")
			writeTorch(t, cpu, "2.5.1+cpu", "")
			writeFile(t, site, "zz_front.pth", "import sys; sys.path.insert(0, '"+cpu+"')\n")
			return cpu
		}},
		{"easy_install eggs in front", func(t *testing.T, dir, site string) string {
			egg := writeEgg(t, site, "torch", "2.5.1", "")
			return filepath.Dir(filepath.Join(egg, "torch"))
		}},
		{"two easy_install files, inserts and appends", func(t *testing.T, dir, site string) string {
			for _, d := range []string{"e1.egg", "e2.egg", "e3.egg", "ins1", "insneg", "app", "pathline"} {
				must(t, os.MkdirAll(filepath.Join(dir, d), 0o755))
			}
			egg := writeEgg(t, site, "torch", "2.5.1", "")
			d := func(n string) string { return filepath.Join(dir, n) }
			writeFile(t, site, "easy-install.pth", eggBlock("./"+filepath.Base(egg), d("e1.egg"), d("missing.egg")))
			writeFile(t, site, "more-eggs.pth", eggBlock(d("e2.egg"), d("e3.egg")))
			writeFile(t, site, "zz-code.pth", d("pathline")+"\nimport sys; sys.path.insert(1, '"+d("ins1")+"')\n"+
				"import sys, os; sys.path.append(\""+d("app")+"\"); sys.path.insert(-1, '"+d("insneg")+"')  # a comment\n"+
				"import sys; sys.path.insert(0, '"+d("missing")+"')\n")
			return egg
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			home := filepath.Join(dir, "home")
			venv, site := realVenv(t, dir)
			writeTorch(t, site, "2.5.1+cu121", "12.1")
			from := tt.lay(t, dir, site)
			if tt.name == "easy_install eggs in front" {
				writeFile(t, site, "easy-install.pth", eggBlock("./"+filepath.Base(from)))
			}
			want, origin := pythonImportPath(t, venv, home, dir)
			env, err := pyenv.InspectWith(venv, noUser(home))
			must(t, err)
			var have []string
			for _, s := range env.Sites {
				have = append(have, s.Path)
			}
			if !slices.Equal(have, want) {
				t.Errorf("GPU Canary's import path:\n  %s\nPython's sys.path (folders site added):\n  %s",
					strings.Join(have, "\n  "), strings.Join(want, "\n  "))
			}
			checkOrigin(t, env, origin)
			tor := env.Torch()
			if tor == nil || tor.Site != from || tor.Build != pyenv.BuildCPU || tor.Version != "2.5.1+cpu" && tor.Version != "2.5.1" {
				t.Fatalf("torch = %+v, want the CPU torch in %s", tor, from)
			}
			if len(tor.Problems) > 0 || strings.HasSuffix(from, ".egg") && (tor.DistInfo != filepath.Join(from, "EGG-INFO") || tor.DistVersion != "2.5.1") {
				t.Errorf("torch read with problems %+v, metadata %s %s", tor.Problems, tor.DistInfo, tor.DistVersion)
			}
			if tor.Shadows == nil || tor.Shadows.Site != site || tor.Shadows.Build != pyenv.BuildCUDA {
				t.Errorf("the torch it shadows = %+v, want the venv's CUDA torch", tor.Shadows)
			}
			if !env.AheadOfOwn(tor) || len(env.PathCode) > 0 {
				t.Errorf("AheadOfOwn %v, PathCode %+v", env.AheadOfOwn(tor), env.PathCode)
			}
		})
	}
}
