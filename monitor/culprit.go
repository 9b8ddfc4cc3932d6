package monitor

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/gpucanary/gpucanary/monitor/pyenv"
)

// findInstaller looks for the process installing into env right now: a uv,
// pip, conda (or mamba) process, or `python -m pip`, whose target is env:
// env's path on its command line, VIRTUAL_ENV or CONDA_PREFIX set to it,
// its interpreter inside env, or (uv run/sync) its working directory the
// project that holds env. It is called at the first file event of a burst,
// while the installer is still running. Returns nil when none is found.
func findInstaller(procRoot, env string, redact func([]string) []string) *Culprit {
	ents, err := os.ReadDir(procRoot)
	if err != nil {
		return nil
	}
	self := os.Getpid()
	var best *Culprit
	bestScore := 0
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == self {
			continue
		}
		dir := filepath.Join(procRoot, e.Name())
		raw, err := os.ReadFile(filepath.Join(dir, "cmdline"))
		if err != nil || len(raw) == 0 {
			continue
		}
		argv := strings.Split(strings.TrimRight(string(raw), "\x00"), "\x00")
		if _, ok := pyenv.InstallerProgram(argv); !ok {
			continue
		}
		score := targetScore(dir, argv, env)
		if score > bestScore {
			bestScore = score
			best = &Culprit{PID: pid, Command: strings.Join(redact(displayArgv(argv)), " ")}
		}
	}
	return best
}

// targetScore rates how surely the process installs into env (0: not).
func targetScore(procDir string, argv []string, env string) int {
	for _, a := range argv {
		if a == env || strings.HasPrefix(a, env+string(filepath.Separator)) || strings.HasSuffix(a, "="+env) {
			return 3
		}
	}
	if environ, err := os.ReadFile(filepath.Join(procDir, "environ")); err == nil {
		for _, kv := range bytes.Split(environ, []byte{0}) {
			if string(kv) == "VIRTUAL_ENV="+env || string(kv) == "CONDA_PREFIX="+env || string(kv) == "UV_PROJECT_ENVIRONMENT="+env {
				return 2
			}
		}
	}
	if cwd, err := os.Readlink(filepath.Join(procDir, "cwd")); err == nil && filepath.Base(argv[0]) == "uv" {
		if cwd == filepath.Dir(env) {
			return 1
		}
	}
	return 0
}

// displayArgv shortens the program to its base name: "uv run train.py".
func displayArgv(argv []string) []string {
	out := append([]string(nil), argv...)
	out[0] = filepath.Base(out[0])
	return out
}
