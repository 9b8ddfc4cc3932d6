package managers

import (
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"github.com/gpucanary/gpucanary/monitor/pyenv"
)

// ReinstallRequest is what a manager builds a reinstall command from.
type ReinstallRequest struct {
	Env *pyenv.Env
	// Python is the environment's interpreter.
	Python string
	// Specs are the exact pins, in order: "torch==2.5.1+cu124".
	Specs []string
	// What names what is reinstalled in the reasons ("" is torch).
	What string
	// Index is the --index-url the pins come from ("" is the
	// installer's default, PyPI), and CUDA the CUDA version of its
	// variant ("12.4"), for a refusal's advice.
	Index string
	CUDA  string
	// NoCache makes the installer build again rather than take a build
	// from its cache (pip --no-cache-dir, uv --no-cache): a build from
	// source with other options than the cached one's.
	NoCache bool
	// Form says what the installer does with what is installed: the
	// zero value, FormRepair, rewrites the pins and moves nothing else.
	Form InstallForm
	// LookPath finds executables (uv, python3); nil means exec.LookPath.
	LookPath func(string) (string, error)
	// HostPython is the interpreter whose pip installs into an environment
	// that has none; "" means the first of Launchers found on PATH.
	HostPython string
	// Launchers are the host interpreters to look for, in order, when
	// HostPython is ""; nil means this platform's (HostLaunchers).
	Launchers []Launcher
	// Quote renders one word of a command in advice a person pastes into
	// a POSIX shell; nil leaves words as they are.
	Quote func(string) string
}

// InstallForm is how a reinstall treats what is installed: the flags pip
// and uv get. The repair planner chooses it (monitor/fixplan).
type InstallForm int

const (
	// FormRepair rewrites the pins' files and touches nothing else (pip
	// --force-reinstall --no-deps, uv --reinstall --no-deps): a repair of
	// the very builds that are installed, which must move no dependency.
	FormRepair InstallForm = iota
	// FormInstall installs the pins and whatever they require that is
	// missing or at a version they do not allow, and leaves what is
	// satisfied alone (no flags, as pytorch.org's own install commands):
	// the exact pins make the installer replace a torch of another build
	// or release, and the index serves the NVIDIA runtime wheels a CUDA
	// torch requires (runtime.go).
	FormInstall
	// FormRepairAll rewrites the pins' files and installs their
	// requirements, reinstalling those already there (pip
	// --force-reinstall, uv --reinstall): a repair of broken files when
	// runtime wheels are missing too.
	FormRepairAll
)

// flags are the installer's flags for the form: pip's force, or uv's.
func (f InstallForm) flags(force string) []string {
	switch f {
	case FormInstall:
		return nil
	case FormRepairAll:
		return []string{force}
	}
	return []string{force, "--no-deps"}
}

// why says what the form's flags do, for a plan's reasons.
func (f InstallForm) why(force string) string {
	switch f {
	case FormInstall:
		return "no --no-deps: it installs what the pins require that is missing and leaves the rest as it is"
	case FormRepairAll:
		return force + " without --no-deps rewrites the pins and reinstalls what they require"
	}
	return force + " --no-deps keeps every other package as it is"
}

// what is what the reasons say is reinstalled.
func (r ReinstallRequest) what() string {
	if r.What == "" {
		return "torch"
	}
	return r.What
}

// tail is the argv after the installer's flags: the cache flag, the
// pins and the index.
func (r ReinstallRequest) tail(noCache string) []string {
	var out []string
	if r.NoCache {
		out = append(out, noCache)
	}
	out = append(out, r.Specs...)
	if r.Index != "" {
		out = append(out, "--index-url", r.Index)
	}
	return out
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
const lastResort = pyenv.InstallerPip

// ReinstallCommand decides, from the table, who reinstalls pkg's pins in
// r.Env, in r.Form: the manager whose INSTALLER pkg carries may refuse (conda
// keeps records pip would leave wrong); otherwise the environment's manager
// builds the command (uv), and pip is the last resort.
func ReinstallCommand(pkg *pyenv.Package, r ReinstallRequest) ReinstallChoice {
	for _, m := range table {
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

// uvReinstall: uv pip install --python ENV [FLAGS] PINS --index-url URL,
// the flags by r.Form (--reinstall --no-deps for a repair).
func uvReinstall(r ReinstallRequest) Reinstall {
	uv, err := r.lookPath("uv")
	if err != nil {
		return Reinstall{Reason: "uv manages this environment but uv is not on PATH, so pip is used"}
	}
	return Reinstall{Argv: slices.Concat([]string{uv, "pip", "install", "--python", r.Env.Path}, r.Form.flags("--reinstall"), r.tail("--no-cache")),
		Reason: "uv manages this environment, so uv reinstalls " + r.what() + " (" + r.Form.why("--reinstall") + ")"}
}

// pipReinstall: the environment's own pip, or the host's pip aimed at it
// with --python, the flags by r.Form (--force-reinstall --no-deps for a
// repair).
func pipReinstall(r ReinstallRequest) Reinstall {
	flags := r.Form.flags("--force-reinstall")
	if hasPip(r.Env) {
		return Reinstall{Argv: slices.Concat([]string{r.Python, "-m", "pip", "install"}, flags, r.tail("--no-cache-dir")),
			Reason: "the environment's own pip reinstalls " + r.what() + " (" + r.Form.why("--force-reinstall") + ")"}
	}
	host, which := r.hostPython()
	return Reinstall{Argv: slices.Concat(host, []string{"-m", "pip", "--python", r.Python, "install"}, flags, r.tail("--no-cache-dir")),
		Reason: "the environment has no pip of its own, so " + which + " installs into it with --python (pip 22.3 or newer)"}
}

// Launcher is one way to run the host's Python: a program, the arguments
// that pick a Python 3, and how a plan names it.
type Launcher struct {
	Program string
	Args    []string
	// Says names it in a plan's reasons ("the Python launcher's pip (py -3)").
	Says string
	// SkipDir, when set, rejects a program found in a folder it matches:
	// Windows' Store aliases (…\Microsoft\WindowsApps\python.exe) open
	// the Store instead of running Python.
	SkipDir func(dir string) bool
}

// POSIXLaunchers: python3 from PATH, as every Linux distribution names it.
var POSIXLaunchers = []Launcher{{Program: "python3", Says: "the host's pip"}}

// WindowsLaunchers: the Python launcher py (installed with every
// python.org Python; -3 picks the newest Python 3), then python from PATH
// unless it is the Store's alias. python3 is never used on Windows: where
// it exists at all it is the Store alias.
var WindowsLaunchers = []Launcher{
	{Program: "py", Args: []string{"-3"}, Says: "the Python launcher's pip (py -3)"},
	{Program: "python", Says: "the host's pip (python from PATH)", SkipDir: isStoreAliasDir},
}

// isStoreAliasDir reports whether dir is the folder of Windows' App
// Execution Aliases, where python.exe opens the Microsoft Store.
func isStoreAliasDir(dir string) bool {
	d := strings.ToLower(strings.ReplaceAll(dir, `\`, "/"))
	return strings.HasSuffix(strings.TrimSuffix(d, "/"), "microsoft/windowsapps")
}

// hostPython is the argv prefix that runs the host's pip and how the plan
// names it: HostPython when given, else the first launcher found on PATH,
// else the last launcher's program as a word for the person to resolve.
func (r ReinstallRequest) hostPython() ([]string, string) {
	if r.HostPython != "" {
		return []string{r.HostPython}, "the host's pip"
	}
	launchers := r.Launchers
	if launchers == nil {
		launchers = HostLaunchers
	}
	for _, l := range launchers {
		found, err := r.lookPath(l.Program)
		if err != nil || l.SkipDir != nil && l.SkipDir(dirOf(found)) {
			continue
		}
		return append([]string{found}, l.Args...), l.Says
	}
	last := launchers[len(launchers)-1]
	return append([]string{last.Program}, last.Args...), last.Says
}

// dirOf is the folder of a path in either separator.
func dirOf(p string) string {
	if i := strings.LastIndexAny(p, `/\`); i >= 0 {
		return p[:i]
	}
	return ""
}

// hasPip reports whether the environment's site-packages holds pip, as
// its read saw it (Env.PipSeen); an Env not read from disk (made by hand,
// decoded) is looked at on the real disk.
func hasPip(env *pyenv.Env) bool {
	if env.SitePackages == "" {
		return false
	}
	if has, known := env.PipSeen(); known {
		return has
	}
	return isDir(filepath.Join(env.SitePackages, "pip"))
}

// condaRefusal: conda's records would be wrong after pip replaced its
// torch, so the advice is conda's own command.
func condaRefusal(r ReinstallRequest) string {
	return "torch in this environment was installed by conda; reinstalling it with pip would leave conda's records wrong. " +
		"Reinstall it with conda (for example `conda install -p " + r.quote(r.Env.Path) + " pytorch pytorch-cuda=" + r.CUDA +
		" -c pytorch -c nvidia`), or remove conda's torch first and let GPU Canary install the pip build"
}

// embeddedReinstall: the distribution's own pip, run with -s as the apps
// that ship one run their Python (ComfyUI portable's run_nvidia_gpu.bat:
// python_embeded\python.exe -s ComfyUI\main.py): -s keeps a user site
// out even without a ._pth file, the flags by r.Form.
// With no pip of its own (as the read saw site-packages), pip's rule
// (the host's pip with --python) gives the command.
func embeddedReinstall(r ReinstallRequest) Reinstall {
	if !hasPip(r.Env) {
		return Reinstall{Reason: "this embedded Python has no pip of its own"}
	}
	return Reinstall{Argv: slices.Concat([]string{r.Python, "-s", "-m", "pip", "install"}, r.Form.flags("--force-reinstall"), r.tail("--no-cache-dir")),
		Reason: "the embedded Python's own pip reinstalls " + r.what() + ", with -s, as the app's launchers run it (" + r.Form.why("--force-reinstall") + ")"}
}
