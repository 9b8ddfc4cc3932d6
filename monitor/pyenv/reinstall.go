package pyenv

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
)

// ReinstallRequest is what a manager builds a reinstall command from.
type ReinstallRequest struct {
	Env *Env
	// Python is the environment's interpreter.
	Python string
	// Specs are the exact pins, in order: "torch==2.5.1+cu124".
	Specs []string
	// Index is the --index-url the pins come from, and CUDA the CUDA
	// version of its variant ("12.4"), for a refusal's advice.
	Index string
	CUDA  string
	// LookPath finds executables (uv, python3); nil means exec.LookPath.
	LookPath func(string) (string, error)
	// HostPython is the interpreter whose pip installs into an environment
	// that has none; "" means python3 from PATH.
	HostPython string
	// Quote renders one word of a command in advice a person pastes into
	// a POSIX shell; nil leaves words as they are.
	Quote func(string) string
}

func (r ReinstallRequest) lookPath(name string) (string, error) {
	if r.LookPath == nil {
		return exec.LookPath(name)
	}
	return r.LookPath(name)
}

func (r ReinstallRequest) quote(s string) string {
	if r.Quote == nil {
		return s
	}
	return r.Quote(s)
}

// Reinstall is one manager's answer: the command, and why it was chosen,
// or no command and why this manager cannot build one here.
type Reinstall struct {
	Argv   []string
	Reason string
}

// ReinstallChoice is who reinstalls a package and how, or why nobody may.
type ReinstallChoice struct {
	// Manager is the Name of the manager that runs Argv or refused.
	Manager string
	Argv    []string
	// Reasons says why, in the order the managers were asked.
	Reasons []string
	// Blocked, when set, is the refusal of the manager that installed the
	// package, with the command that would reinstall it right; Argv is empty.
	Blocked string
}

// lastResort reinstalls when the environment's manager cannot: pip, the
// environment's own or the host's aimed at it.
const lastResort = InstallerPip

// ReinstallCommand decides, from the table, who force-reinstalls pkg's
// pins in r.Env: the manager whose INSTALLER pkg carries may refuse (conda
// keeps records pip would leave wrong); otherwise the environment's manager
// builds the command (uv), and pip is the last resort.
func ReinstallCommand(pkg *Package, r ReinstallRequest) ReinstallChoice {
	for _, m := range managers {
		if m.Refuse != nil && pkg != nil && slices.Contains(m.Installed, pkg.Installer) {
			return ReinstallChoice{Manager: m.Name, Blocked: m.Refuse(r)}
		}
	}
	var c ReinstallChoice
	for _, name := range []string{r.Env.Installer, lastResort} {
		m, ok := managerNamed(name)
		if !ok || m.Reinstall == nil {
			continue
		}
		got := m.Reinstall(r)
		if got.Reason != "" {
			c.Reasons = append(c.Reasons, got.Reason)
		}
		if len(got.Argv) > 0 {
			c.Manager, c.Argv = m.Name, got.Argv
			return c
		}
	}
	return c
}

// uvReinstall: uv pip install --python ENV --reinstall --no-deps PINS.
func uvReinstall(r ReinstallRequest) Reinstall {
	uv, err := r.lookPath("uv")
	if err != nil {
		return Reinstall{Reason: "uv manages this environment but uv is not on PATH, so pip is used"}
	}
	argv := append([]string{uv, "pip", "install", "--python", r.Env.Path, "--reinstall", "--no-deps"}, r.Specs...)
	return Reinstall{Argv: append(argv, "--index-url", r.Index),
		Reason: "uv manages this environment, so uv reinstalls torch (--reinstall --no-deps keeps every other package as it is)"}
}

// pipReinstall: the environment's own pip with --force-reinstall
// --no-deps, or the host's pip aimed at it with --python.
func pipReinstall(r ReinstallRequest) Reinstall {
	var argv []string
	var reason string
	if hasPip(r.Env) {
		argv = append([]string{r.Python, "-m", "pip", "install", "--force-reinstall", "--no-deps"}, r.Specs...)
		reason = "the environment's own pip reinstalls torch (--force-reinstall --no-deps keeps every other package as it is)"
	} else {
		host := r.HostPython
		if host == "" {
			host = "python3"
			if found, err := r.lookPath("python3"); err == nil {
				host = found
			}
		}
		argv = append([]string{host, "-m", "pip", "--python", r.Python, "install", "--force-reinstall", "--no-deps"}, r.Specs...)
		reason = "the environment has no pip of its own, so the host's pip installs into it with --python (pip 22.3 or newer)"
	}
	return Reinstall{Argv: append(argv, "--index-url", r.Index), Reason: reason}
}

// hasPip reports whether the environment's site-packages holds pip.
func hasPip(env *Env) bool {
	if env.SitePackages == "" {
		return false
	}
	fi, err := os.Stat(filepath.Join(env.SitePackages, "pip"))
	return err == nil && fi.IsDir()
}

// condaRefusal: conda's records would be wrong after pip replaced its
// torch, so the advice is conda's own command.
func condaRefusal(r ReinstallRequest) string {
	return "torch in this environment was installed by conda; reinstalling it with pip would leave conda's records wrong. " +
		"Reinstall it with conda (for example `conda install -p " + r.quote(r.Env.Path) + " pytorch pytorch-cuda=" + r.CUDA +
		" -c pytorch -c nvidia`), or remove conda's torch first and let GPU Canary install the pip build"
}
