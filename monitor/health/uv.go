package health

import (
	"github.com/gpucanary/gpucanary/monitor/pyenv"
	"github.com/gpucanary/gpucanary/monitor/pyenv/uvproject"
	"github.com/gpucanary/gpucanary/monitor/shell"
)

// CheckUVProject raises UV_WILL_REPLACE_TORCH when the uv project around
// env would put a CPU torch in place of its CUDA one at the next
// `uv sync` or `uv run`: before it happens (incident 1).
func CheckUVProject(env *pyenv.Env, info uvproject.LockInfo) []Finding {
	t := env.Torch()
	if t == nil {
		return nil
	}
	platform := "linux"
	if env.Layout == pyenv.LayoutWindows {
		platform = "windows"
	}
	evidence := info.Project.Lock
	if evidence == "" {
		evidence = info.Project.Pyproject
	}
	var out []Finding
	for _, r := range uvproject.WillReplaceTorch(info, platform, t.Build == pyenv.BuildCUDA) {
		out = append(out, Finding{Code: CodeUVWillReplaceTorch, Severity: SeverityWarning, Env: env.Path,
			Message:  "torch " + t.Version + " is a CUDA build, but " + r.Reason + ". Pin torch to its CUDA index in " + info.Project.Pyproject + ".",
			Fix:      "gpucanary fix --pin-index " + shell.Quote(env.Path),
			Evidence: []pyenv.Evidence{{File: evidence, Says: r.Reason}}})
	}
	return out
}
