package fix

import (
	"slices"
	"testing"

	"github.com/gpucanary/gpucanary/monitor/fixjournal"
	"github.com/gpucanary/gpucanary/monitor/fixplan"
	"github.com/gpucanary/gpucanary/monitor/pyenv"
)

// TestUndoPlan: the undo of a repair installs the versions before from
// the index of their build, with the repair's own installer, and is
// verified by those versions whatever their build; a run that changed
// nothing, a removal from the user site and an undo have none.
func TestUndoPlan(t *testing.T) {
	p := fixplan.Plan{Env: "/e", Installer: "pip", Variant: "cu124", CUDA: "12.4", Index: "https://mirror.example/whl/cu124",
		Argv:     []string{"/e/bin/python", "-m", "pip", "install", "torch==2.5.1+cu124", "--index-url", "https://mirror.example/whl/cu124"},
		Packages: []fixplan.Pin{{Name: "torch", Version: "2.5.1+cu124"}}}
	res := fixjournal.Result{Fixed: true, Before: map[string]string{"torch": "2.5.1+cpu"}, After: map[string]string{"torch": "2.5.1+cu124"},
		Rollback: "pip install torch==2.5.1+cpu", Journal: "/state/journal/j.jsonl"}
	u, ok := UndoPlan(p, res)
	if !ok {
		t.Fatal("no undo")
	}
	want := []string{"/e/bin/python", "-m", "pip", "install", "torch==2.5.1+cpu", "--index-url", "https://mirror.example/whl/cpu"}
	if !slices.Equal(u.Argv, want) || u.Index != "https://mirror.example/whl/cpu" || u.Undoes != res.Journal || u.Env != p.Env ||
		!slices.Equal(u.Packages, []fixplan.Pin{{Name: "torch", Version: "2.5.1+cpu"}}) {
		t.Errorf("undo %+v", u)
	}
	cpu := &pyenv.Env{Packages: map[string]*pyenv.Package{"torch": {Version: "2.5.1+cpu", Build: pyenv.BuildCPU}}}
	if ok, why, _ := verify(u, cpu, RunOptions{}); !ok {
		t.Errorf("the CPU build put back is not verified: %s", why)
	}
	if ok, _, _ := verify(u, &pyenv.Env{Packages: map[string]*pyenv.Package{"torch": {Version: "2.5.1+cu124", Build: pyenv.BuildCUDA}}}, RunOptions{}); ok {
		t.Error("an undo that left the repair's build is verified")
	}
	for name, tc := range map[string]struct {
		p   fixplan.Plan
		res fixjournal.Result
	}{
		"nothing changed": {p, fixjournal.Result{Before: res.Before}},
		"a removal":       {fixplan.Plan{Env: "/e", Removes: []fixplan.Pin{{Name: "torch", Version: "2.5.1"}}, Argv: []string{"pip", "uninstall"}}, res},
		"an undo":         {u, res},
	} {
		if _, ok := UndoPlan(tc.p, tc.res); ok {
			t.Errorf("%s: has an undo", name)
		}
	}
}
