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
		c.add(finding.CodeTorchInstallBroken, finding.SeverityError,
			fmt.Sprintf("torch is not installed: an install was stopped after pip moved the old torch aside (%s) and before it installed the new one, so import torch fails (No module named 'torch'). `gpucanary fix %s` finishes a repair GPU Canary started (its journal says what it was installing) and then removes pip's leftovers; otherwise install torch again and delete them.",
				p.Path, shell.Quote(c.env.Path)),
			"", []pyenv.Evidence{{File: p.Path, Says: p.Kind}})
	}
	return true
}
