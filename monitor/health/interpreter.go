package health

import (
	"fmt"
	"path/filepath"
	"slices"

	"github.com/gpucanary/gpucanary/monitor/finding"
	"github.com/gpucanary/gpucanary/monitor/pyenv"
	"github.com/gpucanary/gpucanary/monitor/shell"
)

// runnable reports whether the environment's interpreter can run a
// command: not when it is missing or runs another Python than the
// packages' (a `bin/python -m pip …` fix would fail or install for the
// wrong Python).
func runnable(env *pyenv.Env) bool {
	return !slices.ContainsFunc(env.Problems, func(p pyenv.Problem) bool {
		return p.Kind == pyenv.ProblemInterpreterMissing || p.Kind == pyenv.ProblemPythonMismatch
	})
}

// KernelGone is the finding on a Jupyter kernel whose interpreter does
// not exist (kernelJSON names exe, env is where its environment was): the
// kernel cannot start. A warning, not an error: there is no environment
// left whose torch could be wrong, only a kernel that fails to start.
func KernelGone(env, kernelJSON, exe string) finding.Finding {
	name := filepath.Base(filepath.Dir(kernelJSON))
	return finding.Finding{Code: finding.CodeEnvInterpreterMissing, Severity: finding.SeverityWarning, Env: env,
		Fix:      shell.Join([]string{"jupyter", "kernelspec", "remove", "-y", name}),
		Evidence: []pyenv.Evidence{{File: kernelJSON, Says: "argv[0] = " + exe}},
		Message: fmt.Sprintf("The Jupyter kernel %q (%s) runs %s, which does not exist: the kernel cannot start, and its environment is gone. Remove the kernel, or make the environment again and register it (python -m ipykernel install --user --name %s).",
			name, kernelJSON, exe, name)}
}
