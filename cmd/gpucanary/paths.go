package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/gpucanary/gpucanary/monitor"
	"github.com/gpucanary/gpucanary/monitor/health"
	"github.com/gpucanary/gpucanary/monitor/pyenv"
)

// The one place where a path typed on the command line (check, watch,
// fix) becomes an environment. A path that names none is not a usage
// error that stops the command: it is reported as an ENV_UNREADABLE
// finding of its own, and the other paths are still read.

// Why a path given names no environment: the finding's words, which
// follow "The environment at PATH could not be read: ".
var (
	errPathMissing = errors.New("nothing exists at that path")
	errPathFile    = errors.New("it is a file, not a folder, and neither a Python interpreter nor a project file; pass the environment's or the project's folder")
	errPathNotEnv  = errors.New("the folder is not a Python environment (no pyvenv.cfg, conda-meta or interpreter), nor a project folder of a manager GPU Canary knows")
)

// envArgs sorts the paths given into those that name an environment, a
// project folder or an interpreter (absolute; the search resolves each
// again and records the rule, pyenv.Search) and, for each that names
// none, a report whose one finding, ENV_UNREADABLE, says what is wrong
// with it.
func envArgs(args []string, getenv func(string) string) (envs []string, bad []monitor.EnvReport) {
	for _, a := range args {
		path, _, err := resolveArg(a, getenv)
		if err != nil {
			bad = append(bad, monitor.Unreadable(pyenv.Found{Path: path, Via: viaArgument}, err))
			continue
		}
		envs = append(envs, path)
	}
	return envs, bad
}

// viaArgument is how a path given on the command line was found
// (pyenv.Found.Via).
const viaArgument = "argument"

// badPathMessage is what is wrong with a path given, in one sentence.
func badPathMessage(path string, err error) string { return health.Unreadable(path, err).Message }

// resolveArg resolves the path arg as it was typed (pyenv.Resolve: an
// environment; a project folder, to the environment its manager uses; an
// interpreter, to its environment or prefix). It returns arg made
// absolute, what it resolved to, and an error that says, without
// repeating the path, what is wrong when it names none of these.
func resolveArg(arg string, getenv func(string) string) (string, pyenv.Resolution, error) {
	path, err := filepath.Abs(arg)
	if err != nil {
		return arg, pyenv.Resolution{}, err
	}
	fi, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return path, pyenv.Resolution{}, errPathMissing
	case err != nil:
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err // the path is said already
		}
		return path, pyenv.Resolution{}, err
	}
	r, err := pyenv.Resolve(path, pyenv.Where{Getenv: getenv})
	switch {
	case err == nil:
		return path, r, nil
	case !fi.IsDir():
		return path, r, errPathFile
	}
	return path, r, errPathNotEnv
}

// envArg is the environment the path arg names for a command that needs
// one to exist (fix): resolved, with the line saying how ("./ → ./.venv
// (uv project)"); a project without its environment yet is an error that
// says how to create it.
func envArg(arg string, getenv func(string) string) (env, resolved string, err error) {
	path, r, err := resolveArg(arg, getenv)
	switch {
	case err != nil:
		return path, "", err
	case r.Env == "":
		return path, "", fmt.Errorf("it is a project folder (%s) with no environment yet: create it with `%s` in that folder, then run this again", r.Rule, r.Create)
	}
	return r.Env, r.Line(), nil
}
