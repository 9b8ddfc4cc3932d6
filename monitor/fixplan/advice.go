package fixplan

import (
	"github.com/gpucanary/gpucanary/monitor/gpu"
	"github.com/gpucanary/gpucanary/monitor/pyenv"
)

// Advice writes the fix commands findings show: the command of the plan
// `gpucanary fix` would make, so the advice and the repair never disagree.
// The health rules write their fix commands with it (health.Options.Advice).
type Advice struct {
	// IndexBase replaces DefaultIndexBase (a mirror).
	IndexBase string
	// LookPath finds uv; nil assumes it is on PATH, which is right for
	// advice shown to a person (a run looks again).
	LookPath func(string) (string, error)
}

// Reinstall is the command that reinstalls the right CUDA torch in env for
// the GPU g, or "" when none can be proposed (no torch, or a plan that is
// blocked).
func (a Advice) Reinstall(env *pyenv.Env, g gpu.State) string {
	look := a.LookPath
	if look == nil {
		look = func(name string) (string, error) { return name, nil }
	}
	p, err := NewPlan(Request{Env: env, GPU: g, IndexBase: a.IndexBase, LookPath: look})
	if err != nil || p.Blocked != "" {
		return ""
	}
	return p.Command()
}
