package fixplan

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gpucanary/gpucanary/monitor/finding"
	"github.com/gpucanary/gpucanary/monitor/pyenv"
	"github.com/gpucanary/gpucanary/monitor/pyenv/pyenvtest"
)

// stashAsPip moves a package's folders aside as pip's uninstall does
// before an install (StashedUninstallPathSet over AdjacentTempDirectory):
// each top-level folder is renamed in place, its first character replaced
// by "~". from are the names in site-packages.
func stashAsPip(t *testing.T, site string, from ...string) {
	t.Helper()
	for _, n := range from {
		if err := os.Rename(filepath.Join(site, n), filepath.Join(site, "~"+n[1:])); err != nil {
			t.Fatal(err)
		}
	}
}

// TestPlanFromPipsStash: torch is gone because the user's own pip was
// stopped between its uninstall and its install. With no journal to say
// what was being installed, the plan installs the CUDA build of the
// release the stash names, for the GPU, removes torch's stash and
// nothing else once verified, and is the command the rules show.
func TestPlanFromPipsStash(t *testing.T) {
	for _, tc := range []struct {
		name    string
		stash   []string // what pip moved aside
		spec    pyenvtest.Spec
		want    string // the command, ENV for the environment; "" with blocked
		blocked string
		cleanup []string
		noTorch bool     // ErrNoTorch: no stash names a torch
		remove  []string // deleted before pip's stash is made
	}{
		{
			name:    "a CPU torch stashed",
			spec:    pyenvtest.Spec{Torch: &pyenvtest.Torch{DistVersion: "2.5.1+cpu", Installer: "pip"}},
			stash:   []string{"torch", "torch-2.5.1+cpu.dist-info"},
			want:    "ENV/bin/python -m pip install torch==2.5.1+cu124 --index-url https://download.pytorch.org/whl/cu124",
			cleanup: []string{"~orch", "~orch-2.5.1+cpu.dist-info"},
		},
		{
			name: "torchvision's own stash is not torch's to remove",
			spec: pyenvtest.Spec{Torch: &pyenvtest.Torch{DistVersion: "2.4.1+cu118", CUDA: "11.8", Installer: "pip"},
				Vision: &pyenvtest.Companion{Version: "0.19.1+cu118", CUDA: "11.8"}},
			stash:   []string{"torch", "torch-2.4.1+cu118.dist-info", "torchvision", "torchvision-0.19.1+cu118.dist-info"},
			want:    "ENV/bin/python -m pip install torch==2.4.1+cu124 --index-url https://download.pytorch.org/whl/cu124",
			cleanup: []string{"~orch", "~orch-2.4.1+cu118.dist-info"},
		},
		{
			name:    "only the folder stashed: no version to plan from",
			spec:    pyenvtest.Spec{Torch: &pyenvtest.Torch{DistVersion: "2.5.1+cpu", Installer: "pip"}},
			remove:  []string{"torch-2.5.1+cpu.dist-info"},
			stash:   []string{"torch"},
			noTorch: true,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := filepath.Join(t.TempDir(), ".venv")
			env := pyenvtest.Inspect(t, root, tc.spec)
			site := env.SitePackages
			for _, n := range tc.remove {
				if err := os.RemoveAll(filepath.Join(site, n)); err != nil {
					t.Fatal(err)
				}
			}
			stashAsPip(t, site, tc.stash...)
			env, err := pyenv.Inspect(root)
			if err != nil {
				t.Fatal(err)
			}
			if env.Torch() != nil {
				t.Fatalf("torch read after pip moved it aside: %+v", env.Torch())
			}
			p, err := NewPlan(Request{Env: env, GPU: a100Driver550, LookPath: noLook})
			advice := Advice{LookPath: noLook}.Fix(env, a100Driver550, finding.CodeTorchCPUBuild)
			if tc.noTorch {
				if !errors.Is(err, ErrNoTorch) || advice != "" {
					t.Fatalf("plan %+v, %v, advice %q; want ErrNoTorch and no advice", p, err, advice)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.ReplaceAll(p.Command(), root, "ENV"); got != tc.want || p.Blocked != "" {
				t.Errorf("command %q (blocked %q), want %q", got, p.Blocked, tc.want)
			}
			if advice != p.Command() {
				t.Errorf("the rules' advice %q is not the plan's command %q", advice, p.Command())
			}
			var cleanup []string
			for _, c := range p.Cleanup {
				if filepath.Dir(c) != site {
					t.Errorf("cleanup outside site-packages: %s", c)
				}
				cleanup = append(cleanup, filepath.Base(c))
			}
			if !slices.Equal(cleanup, tc.cleanup) {
				t.Errorf("cleanup %q, want %q", cleanup, tc.cleanup)
			}
			if want := filepath.Join(site, tc.cleanup[1]); p.Restores != want {
				t.Errorf("restores %q, want %q", p.Restores, want)
			}
			if !slices.ContainsFunc(p.Reasons, func(r string) bool { return strings.Contains(r, "pip moved torch") }) {
				t.Errorf("the reasons do not say the release came from pip's stash: %q", p.Reasons)
			}
		})
	}
}

// TestPlanFromStashesOfTwoReleases: two interrupted installs left two
// stashed torches of different releases; which one was installed cannot
// be told, so nothing is planned, and the rules show no command.
func TestPlanFromStashesOfTwoReleases(t *testing.T) {
	root := filepath.Join(t.TempDir(), ".venv")
	env := pyenvtest.Inspect(t, root, pyenvtest.Spec{Torch: &pyenvtest.Torch{DistVersion: "2.5.1+cpu", Installer: "pip"}})
	site := env.SitePackages
	stashAsPip(t, site, "torch", "torch-2.5.1+cpu.dist-info")
	if err := os.Mkdir(filepath.Join(site, "~-rch-2.4.0.dist-info"), 0o755); err != nil {
		t.Fatal(err)
	}
	env, err := pyenv.Inspect(root)
	if err != nil {
		t.Fatal(err)
	}
	p, err := NewPlan(Request{Env: env, GPU: a100Driver550, LookPath: noLook})
	if err != nil || !strings.Contains(p.Blocked, "~-rch-2.4.0.dist-info, ~orch-2.5.1+cpu.dist-info") || len(p.Argv) > 0 {
		t.Fatalf("plan %+v, %v: want blocked, naming both stashes", p, err)
	}
	if a := (Advice{LookPath: noLook}).Fix(env, a100Driver550, finding.CodeTorchCPUBuild); a != "" {
		t.Errorf("advice %q for a blocked plan", a)
	}
}

func TestStashedVersion(t *testing.T) {
	for name, want := range map[string]string{
		"~orch-2.5.1+cu121.dist-info": "2.5.1+cu121",
		"~-rch-2.5.1.dist-info":       "2.5.1",
		"~orch-2.5.1.DIST-INFO":       "2.5.1",
		"~orch":                       "",
		"~orch.dist-info":             "",
	} {
		if got := stashedVersion(name); got != want {
			t.Errorf("stashedVersion(%q) = %q, want %q", name, got, want)
		}
	}
}

// noLook finds every program where it is asked for (advice shown to a
// person assumes uv is on PATH).
func noLook(name string) (string, error) { return name, nil }
