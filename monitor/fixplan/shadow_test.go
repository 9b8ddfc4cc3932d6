package fixplan

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gpucanary/gpucanary/monitor/gpu"
	"github.com/gpucanary/gpucanary/monitor/pyenv"
	"github.com/gpucanary/gpucanary/monitor/pyenv/pyenvtest"
)

var shadowGPU = gpu.State{Driver: "550.54.15", CUDADriver: "12.4", Devices: []gpu.Device{{Name: "NVIDIA A100-SXM4-40GB", ComputeCapability: "8.0"}}}

// userSite writes spec's packages into home's user site and returns it.
func userSite(t *testing.T, home string, spec pyenvtest.Spec) string {
	t.Helper()
	site, err := pyenvtest.UserSite(home, spec)
	must(t, err)
	return site
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestRemovalPlan: a torch loaded from before the environment's own
// site-packages is never repaired by installing into the environment.
// From the user site, above a CUDA torch that runs here, the plan is
// pip's uninstall of it and its companions there, run as the env's
// interpreter, and what is imported then is the torch it hides; the
// rollback installs them back with --user. Everything else is blocked
// with what to do by hand.
func TestRemovalPlan(t *testing.T) {
	cpu := pyenvtest.Spec{Torch: &pyenvtest.Torch{DistVersion: "2.5.1+cpu"}, Vision: &pyenvtest.Companion{Version: "0.20.1+cpu"}}
	conda := func(t *testing.T, cuda, build string) string {
		root := filepath.Join(t.TempDir(), "env")
		must(t, pyenvtest.Write(root, pyenvtest.Spec{Manager: "conda", Torch: &pyenvtest.Torch{DistVersion: "2.5.1", CUDA: cuda}, CondaTorchBuild: build}))
		return root
	}
	plan := func(t *testing.T, root, home string) Plan {
		env, err := pyenv.InspectWith(root, pyenv.InspectOptions{Home: home, Getenv: func(string) string { return "" }})
		must(t, err)
		if !env.AheadOfOwn(env.Torch()) {
			t.Fatalf("torch %+v is not ahead of the env's own (sites %+v)", env.Torch(), env.Sites)
		}
		p, err := NewPlan(Request{Env: env, GPU: shadowGPU, IndexBase: "https://mirror.example/whl/", LookPath: func(string) (string, error) { return "/usr/bin/python3", nil }})
		must(t, err)
		return p
	}

	t.Run("user site above a conda env's CUDA torch", func(t *testing.T) {
		home := t.TempDir()
		user := userSite(t, home, cpu)
		root := conda(t, "12.1", "py3.11_cuda12.1_cudnn9.1.0_0")
		p := plan(t, root, home)
		want := []string{filepath.Join(root, "bin", "python"), "-m", "pip", "uninstall", "-y", "torch", "torchvision"}
		if p.Blocked != "" || !slices.Equal(p.Argv, want) || p.Installer != pyenv.InstallerPip {
			t.Fatalf("plan %+v, want argv %q", p, want)
		}
		if p.RemoveFrom != user || len(p.Removes) != 2 || p.Removes[0] != (Pin{"torch", "2.5.1+cpu"}) || p.Removes[1] != (Pin{"torchvision", "0.20.1+cpu"}) {
			t.Errorf("removes %+v from %s", p.Removes, p.RemoveFrom)
		}
		if len(p.Packages) != 1 || p.Packages[0] != (Pin{"torch", "2.5.1"}) || p.CUDA != "12.1" || p.Variant != "" {
			t.Errorf("what it leaves imported: %+v, CUDA %s, variant %s", p.Packages, p.CUDA, p.Variant)
		}
		if got, want := RestoreCommand(p), filepath.Join(root, "bin", "python")+" -m pip install --user --no-deps torch==2.5.1+cpu torchvision==0.20.1+cpu --index-url https://mirror.example/whl/cpu"; got != want {
			t.Errorf("rollback\n  %s\nwant\n  %s", got, want)
		}
	})
	t.Run("an editable torch in the user site", func(t *testing.T) {
		home := t.TempDir()
		user := userSite(t, home, cpu)
		src := filepath.Join(t.TempDir(), "pytorch")
		must(t, os.WriteFile(filepath.Join(user, "torch-2.5.1+cpu.dist-info", "direct_url.json"), []byte(`{"dir_info": {"editable": true}, "url": "file://`+filepath.ToSlash(src)+`"}`), 0o644))
		p := plan(t, conda(t, "12.1", "py3.11_cuda12.1_cudnn9.1.0_0"), home)
		if p.Blocked != "" || len(p.Consequences) != 1 || !strings.Contains(p.Consequences[0], "torch is an editable install of "+src+" (pip install -e): the repair uninstalls it and nothing of it stays in this environment") {
			t.Errorf("plan %+v: Consequences do not say the editable torch is uninstalled", p)
		}
	})
	for _, tt := range []struct {
		name, blocked string
		lay           func(t *testing.T, home string) string
	}{
		{"the torch it hides is a CPU build", "would not do either: it is a CPU only build", func(t *testing.T, home string) string {
			userSite(t, home, cpu)
			return conda(t, "", "py3.11_cpu_0")
		}},
		{"no torch of its own under it", "the environment has no torch of its own under it. Remove the copy (`/usr/bin/python3 -m pip --python", func(t *testing.T, home string) string {
			userSite(t, home, cpu)
			root := filepath.Join(t.TempDir(), "py")
			must(t, os.MkdirAll(filepath.Join(root, "lib", "python3.11", "site-packages"), 0o755))
			must(t, os.WriteFile(filepath.Join(root, "lib", "python3.11", "os.py"), nil, 0o644))
			return root
		}},
		{"an externally managed interpreter", "--break-system-packages", func(t *testing.T, home string) string {
			userSite(t, home, cpu)
			root := conda(t, "12.1", "py3.11_cuda12.1_cudnn9.1.0_0")
			must(t, os.WriteFile(filepath.Join(root, "lib", "python3.11", "EXTERNALLY-MANAGED"), []byte("[externally-managed]\n"), 0o644))
			return root
		}},
		{"a folder a .pth line puts in front", "pip removes nothing there for this environment. Delete that line", func(t *testing.T, home string) string {
			front := filepath.Join(t.TempDir(), "front")
			must(t, pyenvtest.Write(front, cpu))
			root := filepath.Join(t.TempDir(), "venv")
			must(t, pyenvtest.Write(root, pyenvtest.Spec{Torch: &pyenvtest.Torch{DistVersion: "2.5.1+cu121", CUDA: "12.1"}}))
			pth := "import sys; sys.path.insert(0, '" + filepath.ToSlash(filepath.Join(front, "lib", "python3.11", "site-packages")) + "')\n"
			must(t, os.WriteFile(filepath.Join(root, "lib", "python3.11", "site-packages", "front.pth"), []byte(pth), 0o644))
			return root
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			home := t.TempDir()
			p := plan(t, tt.lay(t, home), home)
			if !strings.Contains(p.Blocked, tt.blocked) || len(p.Argv) > 0 {
				t.Errorf("plan %+v, want it blocked saying %q", p, tt.blocked)
			}
		})
	}
}
