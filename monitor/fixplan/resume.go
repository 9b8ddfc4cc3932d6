package fixplan

import (
	"fmt"
	"slices"
	"time"

	"github.com/gpucanary/gpucanary/monitor/pyenv"
	"github.com/gpucanary/gpucanary/monitor/pyenv/managers"
)

// Resume finishes the repair a journal recorded (its plan as written
// down, done; the journal's path and when the repair started), in an environment whose
// torch it left uninstalled: an installer stopped between removing the
// old torch and installing the new one leaves no torch (and pip's ~orch
// stash), so nothing is left to plan from but the journal, which knows
// what was being installed. The same pins are installed from the same
// variant of the index as configured now (the journal's index is
// redacted), and pip's stash is removed once that is verified.
func Resume(r Request, done Plan, journal string, started time.Time) (Plan, bool) {
	rp := done
	if r.Env.Torch() != nil || rp.Variant == "" || len(rp.Packages) == 0 || len(rp.Removes) > 0 ||
		!slices.ContainsFunc(rp.Packages, func(p Pin) bool { return p.Name == pyenv.Torch }) {
		return Plan{}, false
	}
	p := Plan{Env: r.Env.Path, Packages: rp.Packages, Variant: rp.Variant, CUDA: rp.CUDA, Cleanup: stashes(r.Env), Resumes: journal}
	p.Index = indexBase(r) + "/" + p.Variant
	p.Reasons = append(p.Reasons, fmt.Sprintf("torch is not installed: the repair started %s (journal %s) was interrupted after the installer removed torch and before it installed %s; this finishes it",
		started.Local().Format("2006-01-02 15:04"), journal, pins(p.Packages)))
	// Whoever installed the torch that is gone installs its successor:
	// the environment's own manager decides, as for an installed torch.
	installer(&p, r, &pyenv.Package{Installer: rp.Installer}, managers.FormInstall)
	return p, true
}

// pins is "torch==2.5.1+cu124 torchvision==0.20.1+cu124".
func pins(ps []Pin) string {
	out := ""
	for i, p := range ps {
		if i > 0 {
			out += " "
		}
		out += p.Name + "==" + p.Version
	}
	return out
}
