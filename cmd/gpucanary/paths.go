package main

import (
	"errors"
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
	errPathFile    = errors.New("it is a file, not a folder; pass the environment's folder")
	errPathNotEnv  = errors.New("the folder is not a Python environment (it holds neither pyvenv.cfg nor conda-meta)")
)

// envArgs sorts the paths given into the environments they name
// (absolute) and, for each that names none, a report whose one finding,
// ENV_UNREADABLE, says what is wrong with it.
func envArgs(args []string) (envs []string, bad []monitor.EnvReport) {
	for _, a := range args {
		env, err := envArg(a)
		if err != nil {
			bad = append(bad, monitor.Unreadable(pyenv.Found{Path: env, Via: viaArgument}, err))
			continue
		}
		envs = append(envs, env)
	}
	return envs, bad
}

// viaArgument is how a path given on the command line was found
// (pyenv.Found.Via).
const viaArgument = "argument"

// badPathMessage is what is wrong with a path given, in one sentence.
func badPathMessage(path string, err error) string { return health.Unreadable(path, err).Message }

// envArg is the environment the path arg names, made absolute, or the
// absolute path and an error that says, without repeating the path,
// what is wrong with it.
func envArg(arg string) (string, error) {
	path, err := filepath.Abs(arg)
	if err != nil {
		return arg, err
	}
	fi, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return path, errPathMissing
	case err != nil:
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err // the path is said already
		}
		return path, err
	case !fi.IsDir():
		return path, errPathFile
	case !pyenv.IsEnv(path):
		return path, errPathNotEnv
	}
	return path, nil
}
