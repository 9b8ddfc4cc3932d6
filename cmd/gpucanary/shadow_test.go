package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/gpucanary/gpucanary/monitor/pyenv/pyenvtest"
)

// TestCheckUserSiteShadow: `gpucanary check ENV` for a conda env whose
// CUDA torch is hidden by a CPU torch in the user site says, under
// torch, that it is loaded from the user site, names that folder and the
// torch it hides in the finding, and proposes removing it (pip's
// uninstall as the env's interpreter), never a reinstall into the env;
// `fix --dry-run` shows that plan.
func TestCheckUserSiteShadow(t *testing.T) {
	t.Setenv("NO_COLOR", "1")
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("PYTHONUSERBASE", "")
	t.Setenv("PYTHONNOUSERSITE", "")
	if _, err := pyenvtest.UserSite(home, pyenvtest.Spec{Torch: &pyenvtest.Torch{DistVersion: "2.5.1+cpu", Installer: "pip\n"}}); err != nil {
		t.Fatal(err)
	}
	env := filepath.Join(t.TempDir(), "envs", "gpu")
	if err := writeSpec(env, pyenvtest.Spec{Manager: "conda", Torch: &pyenvtest.Torch{DistVersion: "2.5.1", CUDA: "12.1"}, CondaTorchBuild: "py3.11_cuda12.1_cudnn9.1.0_0"}); err != nil {
		t.Fatal(err)
	}
	sim := simFile(t, simA100)
	out, stderr, code := runCLI(t, "--gpu-sim", sim, "check", env)
	uninstall := filepath.Join(env, "bin", "python") + " -m pip uninstall -y torch"
	for _, want := range []string{
		"  torch             2.5.1+cpu              CPU only\n                    loaded from ~/.local/lib/python3.11/site-packages (the user site, searched before the environment's own site-packages)\n",
		"This torch is loaded from " + filepath.Join(home, ".local", "lib", "python3.11", "site-packages") + " (the user site",
		"it hides torch 2.5.1 (CUDA 12.1) in " + filepath.Join(env, "lib", "python3.11", "site-packages"),
		"      fix: " + uninstall + "\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("check does not say %q: exit %d, stderr %s\n%s", want, code, stderr, out)
		}
	}
	if code != 1 || strings.Contains(out, "pip install") {
		t.Errorf("check: exit %d\n%s", code, out)
	}
	out, _, code = runCLI(t, "--gpu-sim", sim, "fix", "--dry-run", env)
	if code != 0 || !strings.Contains(out, "  removes:   torch 2.5.1+cpu from "+filepath.Join(home, ".local", "lib", "python3.11", "site-packages")+"\n") ||
		!strings.Contains(out, "  imports:   torch 2.5.1 (CUDA 12.1) once it is gone\n") || !strings.Contains(out, "  command:   "+uninstall+"\n") {
		t.Errorf("fix --dry-run: exit %d\n%s", code, out)
	}
}
