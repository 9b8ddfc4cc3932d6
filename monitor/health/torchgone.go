package health

import (
	"fmt"
	"path/filepath"

	"github.com/gpucanary/gpucanary/monitor/finding"
	"github.com/gpucanary/gpucanary/monitor/pyenv"
	"github.com/gpucanary/gpucanary/monitor/shell"
)

// torchGone reports a torch that an install removed and did not put back:
// no torch, and pip's stash of the old one (~orch) beside where it was.
// pip moves the old version aside, installs the new one and only then
// deletes the stash; stopped in between (Ctrl-C, a closed terminal, a
// killed repair) it leaves no torch at all, so import torch fails. That
// is an error, not the warning a stash beside a working torch is. It
// returns whether it reported one, for the stash's problem to be
// reported once.
func (c *envCheck) torchGone(p pyenv.Problem) bool {
	if p.Kind != pyenv.ProblemPipStash || c.env.Torch() != nil || pyenv.StashOwner(filepath.Base(p.Path)) != pyenv.Torch {
		return false
	}
	if !c.gone {
		c.gone = true
		// The fix is the planner's: a plan from pip's stash, the release
		// it names in the CUDA build this GPU needs, which is what
		// `gpucanary fix` runs when no journal of its own says what an
		// interrupted repair was installing.
		c.add(finding.CodeTorchInstallBroken, finding.SeverityError,
			fmt.Sprintf("torch is not installed: an install was stopped after pip moved the old torch aside (%s) and before it installed the new one, so import torch fails (No module named 'torch'). `gpucanary fix %s` installs the CUDA build of the torch pip moved aside (or finishes a repair GPU Canary started, as its journal says), verifies it and then removes pip's leftovers of torch.",
				p.Path, shell.Quote(c.env.Path)),
			c.reinstall(), []pyenv.Evidence{{File: p.Path, Says: p.Kind}})
	}
	return true
}
