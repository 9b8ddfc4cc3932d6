package fix

import (
	"github.com/gpucanary/gpucanary/monitor/finding"
	"github.com/gpucanary/gpucanary/monitor/gpu"
	"github.com/gpucanary/gpucanary/monitor/health"
	"github.com/gpucanary/gpucanary/monitor/pyenv"
)

// Reinstallable is the check a repair is chosen and verified by
// (Service.Verify): the error findings a repair fixes (a torch reinstall
// or llama-cpp-python's, finding.Repaired) that the health rules, with
// o, raise about env on the GPU g. The rules sit below the runner, which
// asks them directly.
func Reinstallable(o health.Options) func(env *pyenv.Env, g gpu.State) []finding.Finding {
	return func(env *pyenv.Env, g gpu.State) []finding.Finding {
		var out []finding.Finding
		for _, f := range health.CheckEnv(env, g, o) {
			if f.Severity == finding.SeverityError && finding.Repaired(f.Code) {
				out = append(out, f)
			}
		}
		return out
	}
}

// lines are findings as a repair's result records them ("CODE:
// message", Result.Remaining's JSON).
func lines(fs []finding.Finding) []string {
	var out []string
	for _, f := range fs {
		out = append(out, f.Code+": "+f.Message)
	}
	return out
}
