package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"strings"

	"github.com/gpucanary/gpucanary/monitor"
	"github.com/gpucanary/gpucanary/monitor/guard"
	"github.com/gpucanary/gpucanary/monitor/human"
	"github.com/gpucanary/gpucanary/monitor/shell"
	"github.com/gpucanary/gpucanary/monitor/store"
)

const guardHelp = `Usage: gpucanary guard PATH

Keeps the CUDA build of torch installed in the environment at PATH (and
torchvision and torchaudio beside it) from being replaced by the next
install, with the installer's own mechanism:
  pip venvs, embedded Pythons and other interpreter prefixes: a constraints
    file (gpucanary-constraints.txt) named in the environment's own pip
    config (pip.conf, pip.ini on Windows); a config of yours is kept, ours
    is added to it
  conda: conda-meta/pinned for what conda installed, and the pip config for
    what pip installs
  uv projects: the CUDA index pin and [tool.uv] constraint-dependencies in
    pyproject.toml
An install that asks for another torch then fails with the installer's
resolver error instead. Every file written says so and names
'gpucanary unguard'. A uv environment outside a project, an environment
whose torch is not a CUDA build, and a user base are refused with the
reason. A guard file that is a link, or lies under a folder in the
environment that is a link, is refused and never written through. What was
changed is recorded in the state folder (used only when that folder is
yours alone); a guard already set is set again for the torch installed now.

Examples:
  gpucanary guard ~/ComfyUI/.venv
  gpucanary guard 'C:\ComfyUI_windows_portable\python_embeded'

Exit status: 0 guarded, 1 refused or failed, 2 usage error.
`

const unguardHelp = `Usage: gpucanary unguard [--force] PATH

Lifts the guard 'gpucanary guard' set on the environment at PATH and gives
the environment back byte for byte: a file the guard created is removed, a
file it edited is restored from the copy kept in the state folder. A file
changed by hand since is not restored over (exit 1, naming it and where
the original is kept) unless --force.

A guard record that is missing, damaged, or in a state folder another user
can write is not used. --force then lifts the guard by what it wrote in
the environment's files: the constraints file it wrote is removed, and
its marked part (its comment and the line or lines after it) is taken out
of pip.conf or pip.ini, conda-meta/pinned and the uv project's
pyproject.toml; a file left empty is removed. Each is named.

Flags:
  --force              restore the originals even over changes made since;
                       without a usable record, take the guard's marked
                       parts out of its files

Examples:
  gpucanary unguard ~/ComfyUI/.venv
  gpucanary unguard --force ~/ComfyUI/.venv

Exit status: 0 lifted, 1 not guarded or refused, 2 usage error.
`

// keeper is the guard keeper over the state folder; StateDir is "" when
// there is none (no home), which Guard refuses.
func (g *globals) keeper() guard.Keeper {
	k := guard.Keeper{IndexBase: g.cfg.IndexBase}
	if dir, err := store.Dir(); err == nil {
		k.StateDir = dir
	}
	return k
}

// markGuard fills one report's guard fields from k's record of it (none
// without a state folder, or for a report with no environment).
func markGuard(k guard.Keeper, rep *monitor.EnvReport) {
	if k.StateDir == "" || rep.Env == nil {
		return
	}
	st := k.Read(rep.Path)
	rep.Guarded, rep.GuardChanged = st.Guarded, st.Changed
}

func guardFlags(fs *flag.FlagSet, g *globals) runFunc {
	return func(ctx context.Context, std stdio) int { return cmdGuard(g, fs.Arg(0), std) }
}

func unguardFlags(fs *flag.FlagSet, g *globals) runFunc {
	force := fs.Bool("force", false, "restore the originals even over changes made since; without a usable record, take the guard's marked parts out of its files")
	return func(ctx context.Context, std stdio) int { return cmdUnguard(g, fs.Arg(0), *force, std) }
}

func cmdGuard(g *globals, arg string, std stdio) int {
	std.out = human.NewWriter(std.out)
	path, resolved, err := envArg(arg, g.getenv)
	if err != nil {
		fmt.Fprintf(std.err, "gpucanary guard: %s\n", badPathMessage(path, err))
		return exitUsage
	}
	if resolved != "" {
		fmt.Fprintf(std.out, "Resolved %s\n", resolved)
	}
	res, err := g.keeper().Guard(path)
	if err != nil {
		fmt.Fprintf(std.err, "gpucanary guard: %v\n", err)
		return exitFound
	}
	fmt.Fprintf(std.out, "Guarded %s: installs now keep %s.\n", res.Env, strings.Join(res.Pins, ", "))
	for _, l := range res.Lines {
		fmt.Fprintf(std.out, "  %s\n", l)
	}
	fmt.Fprintf(std.out, "To lift it: gpucanary unguard %s\n", shell.Quote(res.Env))
	return exitOK
}

func cmdUnguard(g *globals, arg string, force bool, std stdio) int {
	std.out = human.NewWriter(std.out)
	path, _, err := envArg(arg, g.getenv)
	if err != nil {
		fmt.Fprintf(std.err, "gpucanary unguard: %s\n", badPathMessage(path, err))
		return exitUsage
	}
	k := g.keeper()
	res, err := k.Unguard(path, force)
	var ch *guard.ChangedError
	var bad *guard.RecordError
	noRecord := errors.Is(err, guard.ErrNotGuarded)
	switch {
	case force && (noRecord || errors.As(err, &bad)):
		// --force without a record to go by: the guard's own marks.
		why := "there is no guard record"
		if bad != nil {
			why = bad.Why
		}
		res, err = k.Clear(path)
		if errors.Is(err, guard.ErrNotGuarded) {
			fmt.Fprintf(std.out, "%v: nothing to lift.\n", err)
			return exitFound
		}
		if err != nil {
			fmt.Fprintf(std.err, "gpucanary unguard: %v\n", err)
			return exitFound
		}
		fmt.Fprintf(std.out, "Lifted the guard on %s by its marks (%s): installs may replace torch again.\n", res.Env, why)
		for _, l := range res.Lines {
			fmt.Fprintf(std.out, "  %s\n", l)
		}
		return exitOK
	case noRecord:
		if marked := k.Marked(path); len(marked) > 0 {
			fmt.Fprintf(std.err, "gpucanary unguard: there is no guard record of %s, but %s still holds a guard GPU Canary wrote; to take it out: gpucanary unguard --force %s\n",
				human.Visible(path), human.Visible(strings.Join(marked, ", ")), shell.Quote(path))
			return exitFound
		}
		fmt.Fprintf(std.out, "%v: nothing to lift.\n", err)
		return exitFound
	case errors.As(err, &ch):
		fmt.Fprintf(std.err, "gpucanary unguard: nothing was changed: %v\n", err)
		return exitFound
	case err != nil:
		fmt.Fprintf(std.err, "gpucanary unguard: %v\n", err)
		return exitFound
	}
	fmt.Fprintf(std.out, "Lifted the guard on %s: installs may replace torch again.\n", res.Env)
	for _, l := range res.Lines {
		fmt.Fprintf(std.out, "  %s\n", l)
	}
	return exitOK
}

// fixGuards lets a repair lift and set again the guard (fix.Guards).
type fixGuards struct{ k guard.Keeper }

func (f fixGuards) Guarded(env string) bool { return f.k.StateDir != "" && f.k.Read(env).Guarded }
func (f fixGuards) Lift(env string) error {
	_, err := f.k.Unguard(env, false)
	return err
}
func (f fixGuards) Set(env string) error {
	_, err := f.k.Guard(env)
	return err
}
