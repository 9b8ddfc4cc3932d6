package fixplan

import (
	"fmt"

	"github.com/gpucanary/gpucanary/monitor/pyenv"
	"github.com/gpucanary/gpucanary/monitor/shell"
)

// interpreterPlan is the blocked plan for a venv whose interpreter is
// missing or runs another Python than its packages' (pyenv's
// ProblemInterpreterMissing, ProblemPythonMismatch), and false for one
// whose interpreter can run. Every installer a plan could name starts
// that interpreter: pip as `ENV/bin/python -m pip`, the host's pip with
// `--python ENV/bin/python`, `uv pip install --python ENV`. One that is
// gone runs nothing; one of another Python installs for that Python,
// into a folder the packages are not in. So the plan says what is wrong
// and gives the command that makes the environment again over its
// packages, the fix of the ENV_INTERPRETER_MISSING and
// ENV_PYTHON_MISMATCH findings, to run before a reinstall can.
func interpreterPlan(env *pyenv.Env) (Plan, bool) {
	r, ok := env.Recreate()
	if !ok {
		return Plan{}, false
	}
	cmd := r.Command(shell.Join)
	what := "is missing"
	if r.Kind == pyenv.ProblemPythonMismatch {
		what = "runs another Python than its packages'"
	}
	p := Plan{Env: env.Path, Recreate: cmd}
	p.Blocked = fmt.Sprintf("the environment's interpreter %s: %s. pip and uv both run that interpreter, so no reinstall can work here; make the environment again over its packages first, with `%s` (the packages stay), then run `gpucanary fix %s` again if check still finds torch wrong",
		what, r.Why, cmd, shell.Quote(env.Path))
	p.Reasons = append(p.Reasons, "pip and uv run the environment's interpreter, which "+what)
	return p, true
}
