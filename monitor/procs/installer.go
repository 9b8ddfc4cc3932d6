package procs

import (
	"bytes"
	"path/filepath"
	"slices"
	"strings"

	"github.com/gpucanary/gpucanary/monitor/pyenv/managers"
)

// The installer ("culprit") search: which process is installing into an
// environment right now. Each platform lists the running installers as
// candidates (installer_linux.go reads /proc); the scoring here is the
// same everywhere. It runs at the first file event of a burst, while the
// installer still runs.

// candidate is one running process as the installer search sees it. A
// platform lists only processes whose argv isInstaller accepts, and reads
// the rest (environment, working directory, executable) only for those.
type candidate struct {
	pid  int
	argv []string
	// envVars are the values of VIRTUAL_ENV, CONDA_PREFIX and
	// UV_PROJECT_ENVIRONMENT that are set.
	envVars []string
	cwd     string // "" when unknown
	exe     string // "" when unknown
}

// isInstaller recognises installer command lines, by the programs and
// modules of pyenv's environment-manager table (uv, pip, conda, mamba,
// `python -m pip`, pip run through an interpreter).
func isInstaller(argv []string) bool {
	_, ok := managers.InstallerProgram(argv)
	return ok
}

// targetValues are the values, set and non-empty, of the variables that
// aim an installer at an environment (managers.TargetVars: VIRTUAL_ENV,
// UV_PROJECT_ENVIRONMENT, CONDA_PREFIX), in a NUL-separated environment
// block.
func targetValues(environ []byte) []string {
	vars := managers.TargetVars()
	var out []string
	for _, kv := range bytes.Split(environ, []byte{0}) {
		k, v, ok := bytes.Cut(kv, []byte("="))
		if ok && len(v) > 0 && slices.Contains(vars, string(k)) {
			out = append(out, string(v))
		}
	}
	return out
}

// programName is a program's base name, without ".exe" on Windows
// paths: "uv" for /usr/bin/uv and for C:\tools\uv.exe.
func programName(path string) string {
	base := filepath.Base(strings.ReplaceAll(path, `\`, "/"))
	return strings.TrimSuffix(strings.TrimSuffix(base, ".exe"), ".EXE")
}

// targetScore rates how surely c installs into env (0: not at all):
// 3 when env is on its command line (--python ENV, --prefix=ENV) or its
// program or interpreter lives inside env; 2 when VIRTUAL_ENV,
// CONDA_PREFIX or UV_PROJECT_ENVIRONMENT names env; 1 for uv run or sync
// in the project folder that holds env.
// Paths are compared as the platform compares them (foldPath: on Windows
// without regard to case or to / and \).
func targetScore(c candidate, env string) int {
	dir := foldPath(filepath.Dir(env))
	inside := func(p string) bool { return pathWithin(p, env) }
	env = foldPath(env)
	for _, a := range c.argv {
		if inside(a) || strings.HasSuffix(foldPath(a), "="+env) {
			return 3
		}
	}
	if c.exe != "" && inside(c.exe) {
		return 3
	}
	for _, v := range c.envVars {
		if foldPath(v) == env {
			return 2
		}
	}
	if c.cwd != "" && programName(c.argv[0]) == "uv" && foldPath(c.cwd) == dir {
		return 1
	}
	return 0
}

// pickInstaller returns the candidate that most surely installs into env,
// the first of equals, or nil when none does.
func pickInstaller(env string, cands []candidate) *Installer {
	var best *candidate
	bestScore := 0
	for i := range cands {
		if score := targetScore(cands[i], env); score > bestScore {
			best, bestScore = &cands[i], score
		}
	}
	if best == nil {
		return nil
	}
	return &Installer{PID: best.pid, Command: strings.Join(Redact(displayArgv(best.argv)), " ")}
}

// displayArgv shortens the program to its name: "uv run train.py" for
// /usr/bin/uv and for C:\tools\uv.exe alike.
func displayArgv(argv []string) []string {
	out := append([]string(nil), argv...)
	out[0] = programName(out[0])
	return out
}
