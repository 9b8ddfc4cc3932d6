package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/gpucanary/gpucanary/monitor"
	"github.com/gpucanary/gpucanary/monitor/health"
	"github.com/gpucanary/gpucanary/monitor/inspect"
	"github.com/gpucanary/gpucanary/monitor/pyenv/envsearch"
	"github.com/gpucanary/gpucanary/monitor/pyenv/managers"
	"github.com/gpucanary/gpucanary/output/words"
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
	errPathNotEnv  = errors.New("the folder is " + words.NotAnEnv)
)

// envArgs sorts the paths given into those that name an environment, a
// project folder or an interpreter (each resolved once, here: Arg is the
// path made absolute; envsearch.Given makes the search's answer of them) and,
// for each that names none, a report whose one finding, ENV_UNREADABLE,
// says what is wrong with it. resolved maps each environment a path was
// resolved to to the line that says so with the path as typed
// (resolvedLine).
func envArgs(args []string, getenv func(string) string) (given []managers.Resolution, bad []monitor.EnvReport, resolved map[string]string) {
	resolved = map[string]string{}
	for _, a := range args {
		path, r, err := resolveArg(a, getenv)
		if _, ok := envsearch.IsNotCreated(err); err != nil && !ok {
			bad = append(bad, inspect.Unreadable(envsearch.Found{Path: path, Via: viaArgument}, err))
			continue
		}
		given = append(given, r)
		if line := resolvedLine(a, r); line != "" {
			if _, ok := resolved[r.Env]; !ok {
				resolved[r.Env] = line // the first path wins, as in the search
			}
		}
	}
	return given, bad, resolved
}

// argPaths are the paths given, absolute, of resolutions envArgs made.
func argPaths(given []managers.Resolution) []string {
	out := make([]string, 0, len(given))
	for _, r := range given {
		out = append(out, r.Arg)
	}
	return out
}

// sayResolved replaces what the search says about each environment a
// path given was resolved to with the line that names that path as typed.
func sayResolved(found []envsearch.Found, resolved map[string]string) {
	for i, f := range found {
		if line, ok := resolved[f.Path]; ok && f.Via == viaArgument {
			found[i].From = line
		}
	}
}

// resolvedLine says what the path arg resolved to, with arg as it was
// typed: "proj → proj/.venv (uv project)", ". → ./.venv (uv project)",
// "venv/bin/python → /abs/venv (the environment of this interpreter)";
// "" when arg was the environment itself. (managers.Resolution.Line
// writes a project's paths relative to the project, "./ → ./.venv",
// which says nothing of which path was given.)
func resolvedLine(arg string, r managers.Resolution) string {
	if r.Rule == "" || r.Env == "" {
		return ""
	}
	env := r.Env
	if rel, err := filepath.Rel(r.Project, r.Env); r.Project != "" && err == nil && filepath.IsLocal(rel) {
		typed := arg // the project folder, as typed
		if abs, err := filepath.Abs(arg); err != nil || abs != r.Project {
			typed = filepath.Dir(arg) // a file in it: pyproject.toml
		}
		dot := "." + string(filepath.Separator)
		if env = filepath.Join(typed, rel); filepath.Clean(typed) == "." || strings.HasPrefix(typed, dot) {
			env = dot + env // as typed: ./proj → ./proj/.venv
		}
	}
	return fmt.Sprintf("%s → %s (%s)", arg, env, r.Rule)
}

// viaArgument is how a path given on the command line was found
// (envsearch.Found.Via).
const viaArgument = "argument"

// badPathMessage is what is wrong with a path given, in one sentence.
func badPathMessage(path string, err error) string { return health.Unreadable(path, err).Message }

// resolveArg resolves the path arg as it was typed (envsearch.ResolveArg: an
// environment; a project folder, to the environment its manager uses; an
// interpreter, to its environment or prefix). It returns arg made
// absolute, what it resolved to, and an error that says, without
// repeating the path, what is wrong when it names none of these (a
// project folder without its environment yet: *envsearch.NotCreatedError).
func resolveArg(arg string, getenv func(string) string) (string, managers.Resolution, error) {
	path, err := filepath.Abs(arg)
	if err != nil {
		return arg, managers.Resolution{}, err
	}
	fi, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return path, managers.Resolution{}, errPathMissing
	case err != nil:
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err // the path is said already
		}
		return path, managers.Resolution{}, err
	}
	r, err := envsearch.ResolveArg(path, managers.Where{Getenv: getenv})
	if _, ok := envsearch.IsNotCreated(err); err == nil || ok {
		return path, r, err
	}
	switch {
	case !fi.IsDir():
		return path, r, errPathFile
	}
	if err := folderReadable(path); err != nil {
		return path, r, err
	}
	return path, r, errPathNotEnv
}

// folderReadable says why the folder at path cannot be looked into (its
// mode denies this user: chmod 000), or nil: such a folder is not "not a
// Python environment", it could not be read. The error does not repeat
// the path.
func folderReadable(path string) error {
	f, err := os.Open(path)
	if err == nil {
		_, err = f.Readdirnames(1)
		f.Close()
	}
	if err == nil || errors.Is(err, io.EOF) {
		// Listed; a folder that can be listed but not searched (r--)
		// still hides pyvenv.cfg.
		_, err = os.Lstat(filepath.Join(path, "pyvenv.cfg"))
	}
	if !errors.Is(err, fs.ErrPermission) {
		return nil
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	return err
}

// envArg is the environment the path arg names for a command that needs
// one to exist (fix): resolved, with the line saying how ("proj →
// proj/.venv (uv project)", resolvedLine); a project without its environment yet is an error that
// says how to create it.
func envArg(arg string, getenv func(string) string) (env, resolved string, err error) {
	path, r, err := resolveArg(arg, getenv)
	if nc, ok := envsearch.IsNotCreated(err); ok {
		return path, "", errors.New(nc.NotCreated("the project folder") + ", then run this again")
	}
	if err != nil {
		return path, "", err
	}
	return r.Env, resolvedLine(arg, r), nil
}
