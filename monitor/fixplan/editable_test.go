package fixplan_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gpucanary/gpucanary/monitor/fixplan"
	"github.com/gpucanary/gpucanary/monitor/gpu/gputest"
	"github.com/gpucanary/gpucanary/monitor/pyenv"
	"github.com/gpucanary/gpucanary/monitor/pyenv/pyenvtest"
)

// editableEnv writes a venv whose torch 2.5.1+cpu dist-info carries the
// direct_url.json given, as `pip install -e` (PEP 610) writes it.
func editableEnv(t *testing.T, directURL string) *pyenv.Env {
	t.Helper()
	root := filepath.Join(t.TempDir(), "venv")
	if err := pyenvtest.Write(root, pyenvtest.Spec{Torch: &pyenvtest.Torch{DistVersion: "2.5.1+cpu", Installer: "pip"}}); err != nil {
		t.Fatal(err)
	}
	dists, _ := filepath.Glob(filepath.Join(root, "lib", "python3.11", "site-packages", "torch-*.dist-info"))
	if len(dists) != 1 {
		t.Fatalf("torch dist-infos: %v", dists)
	}
	if err := os.WriteFile(filepath.Join(dists[0], "direct_url.json"), []byte(directURL), 0o644); err != nil {
		t.Fatal(err)
	}
	env, err := pyenv.Inspect(root)
	if err != nil {
		t.Fatal(err)
	}
	return env
}

// TestPlanSaysItReplacesAnEditableTorch: pip uninstalls an editable
// install before it installs a wheel of that name, so a plan over `pip
// install -e ~/src/pytorch` says that the checkout is no longer what
// import loads, naming it, and that it is not deleted; an install from a
// folder that is not editable says nothing of the kind.
func TestPlanSaysItReplacesAnEditableTorch(t *testing.T) {
	src := filepath.Join(t.TempDir(), "my src", "pytorch")
	url := "file://" + strings.ReplaceAll(filepath.ToSlash(src), " ", "%20")

	env := editableEnv(t, `{"dir_info": {"editable": true}, "url": "`+url+`"}`)
	if tor := env.Torch(); !tor.Editable || tor.SourceDir() != src {
		t.Fatalf("torch Editable %v, SourceDir %q; want true, %q", tor.Editable, tor.SourceDir(), src)
	}
	p, err := fixplan.NewPlan(fixplan.Request{Env: env, GPU: gputest.A100Only, LookPath: anyPath})
	if err != nil || p.Blocked != "" || len(p.Argv) == 0 {
		t.Fatalf("plan = %+v, %v", p, err)
	}
	all := strings.Join(p.Consequences, " | ")
	for _, want := range []string{"torch is an editable install of " + src, "the repair uninstalls it", "the torch " + p.Packages[0].Version + " wheel is put in its place",
		"`import torch` no longer loads your checkout", "The checkout itself is not deleted"} {
		if !strings.Contains(all, want) {
			t.Errorf("Consequences = %q\nlack %q", all, want)
		}
	}

	plain := editableEnv(t, `{"dir_info": {}, "url": "`+url+`"}`)
	p, err = fixplan.NewPlan(fixplan.Request{Env: plain, GPU: gputest.A100Only, LookPath: anyPath})
	if err != nil || len(p.Consequences) > 0 {
		t.Errorf("a folder install that is not editable: Consequences %q, %v", p.Consequences, err)
	}
}
