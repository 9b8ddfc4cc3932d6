package pyenv_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/gpucanary/gpucanary/monitor/pyenv"
	"github.com/gpucanary/gpucanary/monitor/pyenv/pyenvtest"
)

// TestUserSiteShadow: a user-site torch is searched before a conda env's
// own site-packages, so it hides the conda torch: it is the torch judged,
// said to be ahead of the environment's own, and the conda torch it
// hides is read as what it shadows. In a venv with the system's site
// packages the user site comes after the venv's own; an isolated venv
// never sees it.
func TestUserSiteShadow(t *testing.T) {
	home := t.TempDir()
	userSite := filepath.Join(home, ".local", "lib", "python3.11", "site-packages")
	writeTorch(t, userSite, "2.5.1+cpu", "")
	t.Run("conda env", func(t *testing.T) {
		root := filepath.Join(t.TempDir(), "env")
		must(t, pyenvtest.Write(root, pyenvtest.Spec{Manager: "conda", Torch: &pyenvtest.Torch{DistVersion: "2.5.1", CUDA: "12.1"}, CondaTorchBuild: "py3.11_cuda12.1_cudnn9.1.0_0"}))
		env, err := pyenv.InspectWith(root, noUser(home))
		must(t, err)
		tor := env.Torch()
		if tor == nil || tor.Site != userSite || tor.Build != pyenv.BuildCPU {
			t.Fatalf("torch = %+v, want the user site's CPU torch", tor)
		}
		if !env.AheadOfOwn(tor) || !env.Borrowed(tor) {
			t.Errorf("AheadOfOwn %v, Borrowed %v: the user site comes before a conda env's own", env.AheadOfOwn(tor), env.Borrowed(tor))
		}
		folder, says, ok := env.Origin(tor)
		if !ok || folder != userSite || says != "the user site, searched before the environment's own site-packages" {
			t.Errorf("Origin = %q, %q, %v", folder, says, ok)
		}
		sh := tor.Shadows
		if sh == nil || sh.Site != env.SitePackages || sh.Build != pyenv.BuildCUDA || sh.CUDA != "12.1" || sh.Installer != pyenv.InstallerConda || sh.Shadows != nil {
			t.Errorf("Shadows = %+v, want the conda env's CUDA 12.1 torch", sh)
		}
		if _, _, ok := env.Origin(sh); ok {
			t.Error("the env's own torch has an Origin")
		}
	})
	t.Run("venv with the system's site packages", func(t *testing.T) {
		root := filepath.Join(t.TempDir(), "venv")
		must(t, pyenvtest.Write(root, pyenvtest.Spec{}))
		writeFile(t, root, "pyvenv.cfg", "home = /nowhere/bin\ninclude-system-site-packages = true\nversion = 3.11.7\n")
		env, err := pyenv.InspectWith(root, noUser(home))
		must(t, err)
		tor := env.Torch()
		if tor == nil || tor.Site != userSite || env.AheadOfOwn(tor) || !env.Borrowed(tor) {
			t.Fatalf("torch %+v, AheadOfOwn %v: the user site comes after the venv's own", tor, env.AheadOfOwn(tor))
		}
		if _, says, _ := env.Origin(tor); !strings.HasSuffix(says, "searched after the environment's own site-packages") {
			t.Errorf("Origin says %q", says)
		}
	})
	t.Run("isolated venv", func(t *testing.T) {
		root := filepath.Join(t.TempDir(), "venv")
		must(t, pyenvtest.Write(root, pyenvtest.Spec{Torch: &pyenvtest.Torch{DistVersion: "2.5.1+cu121", CUDA: "12.1"}}))
		env, err := pyenv.InspectWith(root, noUser(home))
		must(t, err)
		if tor := env.Torch(); tor == nil || tor.Build != pyenv.BuildCUDA || env.Borrowed(tor) || tor.Shadows != nil {
			t.Errorf("torch = %+v", tor)
		}
	})
}
