package fixplan

import (
	"fmt"

	"github.com/gpucanary/gpucanary/monitor/pyenv"
	"github.com/gpucanary/gpucanary/monitor/shell"
)

// distroBlock blocks a plan for a torch the operating system's package
// manager installed (pyenv.DistroManaged): pip refuses to install into
// an externally managed Python (PEP 668), apt would undo whatever it
// forced, and the system's own programs may depend on that torch. The
// advice is the distribution's way (apt reinstalls its own build), or a
// virtual environment for the CUDA build p chose; never a pip command
// into the system's prefix.
func distroBlock(p *Plan, env *pyenv.Env, site string) {
	pins := make([]string, len(p.Packages))
	for i, pin := range p.Packages {
		pins[i] = pin.Name + "==" + pin.Version
	}
	venv := "~/.venvs/torch"
	py := "python3"
	if env.Python != "" {
		py = "python" + env.Python
	}
	install := venv + "/bin/python -m pip install " + shell.Join(pins) + " --index-url " + shell.Quote(p.ShownIndex())
	p.Blocked = fmt.Sprintf("torch in %s is the distribution's package (Debian's and Ubuntu's python3-torch), in a Python the system manages (EXTERNALLY-MANAGED): pip refuses to change it, and apt owns its files. "+
		"To repair the distribution's build: sudo apt install --reinstall python3-torch. For a CUDA build, make a virtual environment and install it there: %s -m venv %s && %s",
		site, py, venv, install)
	p.Argv, p.Installer = nil, ""
	p.Reasons = append(p.Reasons, "GPU Canary never runs pip in a Python the system manages")
}
