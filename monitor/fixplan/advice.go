package fixplan

import (
	"os/exec"

	"github.com/gpucanary/gpucanary/monitor/finding"
	"github.com/gpucanary/gpucanary/monitor/gpu"
	"github.com/gpucanary/gpucanary/monitor/pyenv"
)

// Advice writes the fix commands findings show: the command of the plan
// `gpucanary fix` would make, so the advice and the repair never disagree.
// The health rules write their fix commands with it (health.Options.Advice),
// and every view (check's text and JSON, the tray, the windows, the
// evidence bundle) shows the finding's command as the rules wrote it.
type Advice struct {
	// IndexBase replaces DefaultIndexBase (a mirror).
	IndexBase string
	// LlamaIndexBase replaces kb.LlamaIndexBase (a mirror of
	// llama-cpp-python's CUDA wheels).
	LlamaIndexBase string
	// LookPath finds uv and the host's Python; nil means exec.LookPath,
	// as the repair's plan looks: a command copied from check names uv
	// only where uv is found, since one that is not on PATH fails.
	LookPath func(string) (string, error)
}

// Fix is the one chooser of the command that fixes a finding with this
// code in env on the GPU g, "" when there is none: for the codes a
// torch reinstall fixes, the command of the plan `gpucanary fix` makes
// (NewPlan); for LLAMA_CPP_CPU_BUILD, that of its llama-cpp-python plan
// (NewLlamaPlan), or, where no CUDA wheel fits, the build from source
// the plan gives by hand (Plan.Manual); for an environment whose
// interpreter is missing or runs another Python, the command that makes
// it again (the blocked plan's Recreate).
func (a Advice) Fix(env *pyenv.Env, g gpu.State, code string) string {
	look := a.LookPath
	if look == nil {
		look = exec.LookPath
	}
	r := Request{Env: env, GPU: g, IndexBase: a.IndexBase, LlamaIndexBase: a.LlamaIndexBase, LookPath: look}
	switch {
	case code == finding.CodeEnvInterpreterMissing || code == finding.CodeEnvPythonMismatch:
		p, _ := interpreterPlan(env)
		return p.Recreate
	case code == finding.CodeLlamaCPPCPUBuild:
		p, err := NewLlamaPlan(r)
		switch {
		case err != nil || p.Recreate != "":
			return ""
		case p.Blocked != "":
			return p.Manual
		}
		return p.Command()
	case finding.FixedByReinstall(code):
		p, err := NewPlan(r)
		if err != nil || p.Blocked != "" {
			return ""
		}
		return p.Command()
	}
	return ""
}
