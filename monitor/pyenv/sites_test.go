package pyenv_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/gpucanary/gpucanary/monitor/pyenv"
	"github.com/gpucanary/gpucanary/monitor/pyenv/pyenvtest"
)

// writePrefix lays out an interpreter's own installation
// (pyenvtest.WritePrefix) and returns its site-packages folder.
func writePrefix(t testing.TB, prefix, py string) string {
	t.Helper()
	site, err := pyenvtest.WritePrefix(prefix, py)
	must(t, err)
	return site
}

// writeTorch writes a torch into a site folder as a wheel install leaves
// it (pyenvtest.WriteTorch).
func writeTorch(t testing.TB, site, version, cuda string) {
	t.Helper()
	must(t, pyenvtest.WriteTorch(site, version, cuda))
}

// noUser inspects as a user whose home is home and who sets nothing.
func noUser(home string) pyenv.InspectOptions {
	return pyenv.InspectOptions{Home: home, Getenv: func(string) string { return "" }}
}

// TestInheritedSites: a venv made with --system-site-packages imports its
// own packages first, then the user site, then the base interpreter's
// (CPython's site.py order, checked with python3.11 -c 'import sys;
// print(sys.path)' in such a venv); the torch that import loads is the
// one read, and its evidence says which site held it.
func TestInheritedSites(t *testing.T) {
	base := t.TempDir()
	home := t.TempDir()
	baseSite := writePrefix(t, filepath.Join(base, "py"), "3.11")
	writeTorch(t, baseSite, "2.5.1+cpu", "")
	userSite := filepath.Join(home, ".local", "lib", "python3.11", "site-packages")
	cfg := func(system bool) string {
		return "home = " + filepath.Join(base, "py", "bin") + "\ninclude-system-site-packages = " + map[bool]string{true: "true", false: "false"}[system] +
			"\nversion = 3.11.7\nexecutable = " + filepath.Join(base, "py", "bin", "python3.11") + "\ncommand = " + filepath.Join(base, "py", "bin", "python3") + " -m venv --system-site-packages /x\n"
	}
	tests := []struct {
		name      string
		system    bool
		ownTorch  string // torch version in the venv's own site-packages
		userTorch string // torch version in the user site
		want      string // torch version read; "" none
		from      string // the site it comes from: "own", "user", "base"
	}{
		{name: "isolated venv sees no base torch", want: ""},
		{name: "system site: the base's CPU torch", system: true, want: "2.5.1+cpu", from: "base"},
		{name: "own torch comes before the base's", system: true, ownTorch: "2.5.1+cu124", want: "2.5.1+cu124", from: "own"},
		{name: "the user site comes before the base", system: true, userTorch: "2.4.0+cu121", want: "2.4.0+cu121", from: "user"},
		{name: "an isolated venv has no user site", userTorch: "2.4.0+cu121", want: ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			must(t, os.RemoveAll(filepath.Join(home, ".local")))
			root := filepath.Join(t.TempDir(), "venv")
			must(t, pyenvtest.Write(root, pyenvtest.Spec{}))
			writeFile(t, root, "pyvenv.cfg", cfg(tt.system))
			ownSite := filepath.Join(root, "lib", "python3.11", "site-packages")
			if tt.ownTorch != "" {
				writeTorch(t, ownSite, tt.ownTorch, "12.4")
			}
			if tt.userTorch != "" {
				writeTorch(t, userSite, tt.userTorch, "12.1")
			}
			env, err := pyenv.InspectWith(root, noUser(home))
			must(t, err)
			got := ""
			if tor := env.Torch(); tor != nil {
				got = tor.Version
			}
			if got != tt.want {
				t.Fatalf("torch = %q, want %q (sites %v)", got, tt.want, env.Sites)
			}
			if tt.want == "" {
				return
			}
			wantSite := map[string]string{"own": ownSite, "user": userSite, "base": baseSite}[tt.from]
			if env.Torch().Site != wantSite {
				t.Errorf("torch read from %s, want %s", env.Torch().Site, wantSite)
			}
			if env.SitePackages != ownSite {
				t.Errorf("SitePackages = %s, want the venv's own %s", env.SitePackages, ownSite)
			}
			if tt.from != "own" && !hasEvidence(env.Torch().Evidence, wantSite, "loads this copy") {
				t.Errorf("evidence does not say which site: %+v", env.Torch().Evidence)
			}
			if tt.system && tt.from != "base" && !hasEvidence(env.Torch().Evidence, baseSite, "shadowed") {
				t.Errorf("evidence does not name the shadowed base torch: %+v", env.Torch().Evidence)
			}
		})
	}
}

func hasEvidence(ev []pyenv.Evidence, file, says string) bool {
	for _, e := range ev {
		if e.File == file && strings.Contains(e.Says, says) {
			return true
		}
	}
	return false
}

// TestPrefixEnvironments: an interpreter's own installation reads as an
// environment of kind prefix: a pyenv version, a Debian-style /usr with
// dist-packages, the user base; the user site comes before the prefix's
// own sites.
func TestPrefixEnvironments(t *testing.T) {
	t.Run("pyenv version with a user-site torch", func(t *testing.T) {
		home := t.TempDir()
		prefix := filepath.Join(home, ".pyenv", "versions", "3.11.7")
		site := writePrefix(t, prefix, "3.11")
		writeTorch(t, site, "2.5.1+cu124", "12.4")
		userSite := filepath.Join(home, ".local", "lib", "python3.11", "site-packages")
		writeTorch(t, userSite, "2.5.1+cpu", "")
		env, err := pyenv.InspectWith(prefix, noUser(home))
		must(t, err)
		if env.Kind != pyenv.KindPrefix || env.Python != "3.11" || env.SitePackages != site {
			t.Errorf("Kind, Python, SitePackages = %s, %s, %s", env.Kind, env.Python, env.SitePackages)
		}
		if tor := env.Torch(); tor == nil || tor.Version != "2.5.1+cpu" || tor.Site != userSite {
			t.Errorf("torch = %+v, want the user site's CPU torch (Python puts the user site first)", tor)
		}
	})
	t.Run("Debian layout: dist-packages and an egg-info", func(t *testing.T) {
		usr := filepath.Join(t.TempDir(), "usr")
		writePrefix(t, usr, "3.11")
		must(t, os.RemoveAll(filepath.Join(usr, "lib", "python3.11", "site-packages"))) // Debian has none there
		must(t, os.MkdirAll(filepath.Join(usr, "local", "lib", "python3.11", "dist-packages"), 0o755))
		dist := filepath.Join(usr, "lib", "python3", "dist-packages")
		// python3-torch 1.13 is built with setup.py: an egg-info, no RECORD
		writeFile(t, dist, "torch-1.13.0a0+gitunknown.egg-info/PKG-INFO", "Metadata-Version: 2.1\nName: torch\nVersion: 1.13.0a0+gitunknown\n")
		writeFile(t, dist, "torch/version.py", "__version__ = '1.13.0a0'\ndebug = False\ncuda = None\ngit_version = 'Unknown'\nhip = None\n")
		writeFile(t, dist, "torch/lib/libtorch_cpu.so", "\x7fELF")
		env, err := pyenv.InspectWith(usr, noUser(t.TempDir()))
		must(t, err)
		tor := env.Torch()
		if env.Kind != pyenv.KindPrefix || tor == nil || tor.Version != "1.13.0a0" || tor.Build != pyenv.BuildCPU || tor.Site != dist {
			t.Errorf("Kind %s, torch %+v", env.Kind, tor)
		}
	})
	t.Run("the user base", func(t *testing.T) {
		home := t.TempDir()
		userSite := filepath.Join(home, ".local", "lib", "python3.12", "site-packages")
		writeTorch(t, userSite, "2.6.0+cu126", "12.6")
		writeFile(t, home, ".local/bin/torchrun", "#!/usr/bin/python3\n")
		env, err := pyenv.InspectWith(filepath.Join(home, ".local"), noUser(home))
		must(t, err)
		if env.Kind != pyenv.KindPrefix || env.Python != "3.12" || env.Torch() == nil || env.Torch().Site != userSite {
			t.Errorf("Kind %s, Python %s, torch %+v", env.Kind, env.Python, env.Torch())
		}
		if len(env.Sites) != 1 {
			t.Errorf("Sites = %v, want the user site once", env.Sites)
		}
	})
}

// TestDebianPython3Torch reads Debian's python3-torch (scripts/deps.sh
// test installs it) from /usr without Python, and compares with what
// Debian's own interpreter says `import torch` loads.
func TestDebianPython3Torch(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("Debian's python3-torch is a Linux package")
	}
	if _, err := os.Stat("/usr/bin/python3"); err != nil {
		t.Skip("no /usr/bin/python3")
	}
	out, err := exec.Command("/usr/bin/python3", "-c", "import torch; print(torch.__version__, torch.__file__)").CombinedOutput()
	if err != nil {
		t.Fatalf("/usr/bin/python3 cannot import torch (install python3-torch: scripts/deps.sh test): %v\n%s", err, out)
	}
	fields := strings.Fields(string(out))
	if len(fields) != 2 {
		t.Fatalf("unexpected output %q", out)
	}
	wantVersion, wantFile := fields[0], fields[1]
	env, err := pyenv.InspectWith("/usr", noUser(t.TempDir()))
	must(t, err)
	tor := env.Torch()
	if tor == nil {
		t.Fatalf("no torch read from /usr (sites %v)", env.Sites)
	}
	if tor.Version != wantVersion || filepath.Join(tor.Site, "torch", "__init__.py") != wantFile {
		t.Errorf("read torch %s from %s; python3 imports %s from %s", tor.Version, tor.Site, wantVersion, wantFile)
	}
	if tor.Build != pyenv.BuildCPU || env.Kind != pyenv.KindPrefix {
		t.Errorf("Build %s, Kind %s; want Debian's CPU build in a prefix", tor.Build, env.Kind)
	}
	// A venv made with --system-site-packages from Debian's Python imports
	// the same torch.
	venv := filepath.Join(t.TempDir(), "venv")
	if out, err := exec.Command("/usr/bin/python3", "-m", "venv", "--without-pip", "--system-site-packages", venv).CombinedOutput(); err != nil {
		t.Skipf("python3 -m venv: %v\n%s", err, out)
	}
	venvEnv, err := pyenv.InspectWith(venv, noUser(t.TempDir()))
	must(t, err)
	if vt := venvEnv.Torch(); vt == nil || vt.Version != wantVersion || vt.Site != tor.Site {
		t.Errorf("--system-site-packages venv: torch %+v, want %s from %s", vt, wantVersion, tor.Site)
	}
}
