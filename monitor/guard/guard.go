// Package guard keeps an environment's CUDA torch from being replaced by
// the next install, with the installers' own mechanisms: a constraints file
// named in the environment's own pip config (pip venvs, interpreter
// prefixes such as an embedded Python, conda envs for what pip installs),
// conda's conda-meta/pinned, and a uv project's constraint-dependencies
// beside its CUDA index pin. Without it GPU Canary only notices the
// overwrite; the next `pip install` of a custom node does it again.
//
// Every file it writes says that GPU Canary wrote it and that `gpucanary
// unguard` undoes it, so a user who meets pip's ResolutionImpossible finds
// why. What it changes is recorded in GPU Canary's state folder (a
// manifest and a copy of each file it edited), so that Unguard gives the
// environment back byte for byte: a file it created is removed, a file it
// edited is restored from the copy, and a file changed by hand since is
// left alone and named.
package guard

import (
	"errors"
	"fmt"
	"strings"

	"github.com/gpucanary/gpucanary/monitor/pyenv"
)

// Keeper sets and lifts guards, keeping its records under StateDir.
type Keeper struct {
	// StateDir is GPU Canary's state folder; the records go in its
	// guard/ folder. It must be set.
	StateDir string
	// IndexBase is the PyTorch index base a uv project's torch is pinned
	// to ("https://download.pytorch.org/whl"); only uv projects use it.
	IndexBase string
}

// Refused is a guard that cannot be set on an environment, and why.
type Refused struct {
	Env    string
	Reason string
}

func (e *Refused) Error() string { return "cannot guard " + escape(e.Env) + ": " + e.Reason }

// ErrNotGuarded is wrapped by Unguard's error for an environment with no
// guard recorded.
var ErrNotGuarded = errors.New("not guarded")

// ChangedError is Unguard's refusal to restore files the user changed
// after the guard was set: restoring would lose their change.
type ChangedError struct {
	Env string
	// Files name each changed file and what happened to it.
	Files []string
	// Saved are the copies of the originals GPU Canary kept, by file.
	Saved map[string]string
}

func (e *ChangedError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "the guard's files in %s were changed since GPU Canary wrote them (%s), so restoring them would lose that change", e.Env, strings.Join(e.Files, "; "))
	for f, s := range e.Saved {
		fmt.Fprintf(&b, "; the original %s is kept in %s", f, s)
	}
	b.WriteString("; pass --force to restore the originals anyway")
	return b.String()
}

// Result says what Guard or Unguard did, one line per file.
type Result struct {
	Env   string
	Pins  []string
	Lines []string
}

// Status is what the disk says of an environment's guard.
type Status struct {
	// Guarded is true when a guard is recorded and its files are as GPU
	// Canary wrote them.
	Guarded bool
	// Changed names the guard's files that were removed or edited by
	// hand since ("pip.conf edited"); empty when the guard is whole or
	// there is none.
	Changed []string
	// Pins are the requirements the guard holds ("torch==2.5.1+cu121").
	Pins []string
}

// Read says whether the environment at env is guarded, from the record
// and the files. No record is no guard; a record that cannot be read is
// reported as a change, so that the user hears of it.
func (k Keeper) Read(env string) Status {
	m, err := k.load(env)
	if errors.Is(err, ErrNotGuarded) {
		return Status{}
	}
	if err != nil {
		return Status{Changed: []string{err.Error()}}
	}
	st := Status{Pins: m.Pins, Changed: m.changed()}
	st.Guarded = len(st.Changed) == 0
	return st
}

// Guard sets the guard on the environment at env: its torch and the
// companions installed beside it stay at the CUDA build they are. A guard
// already set is set again (its files restored first), so that it holds
// the versions installed now; one whose files were changed by hand is
// refused (ChangedError).
func (k Keeper) Guard(env string) (Result, error) {
	if k.StateDir == "" {
		return Result{}, errors.New("setting a guard: no state folder to record it in")
	}
	e, err := pyenv.Inspect(env)
	if err != nil {
		return Result{}, err
	}
	if _, _, err := k.plan(e); err != nil {
		return Result{}, err
	}
	switch _, err := k.load(e.Path); {
	case err == nil:
		if _, err := k.Unguard(e.Path, false); err != nil {
			return Result{}, err
		}
	case !errors.Is(err, ErrNotGuarded):
		return Result{}, err // a record it cannot use: a second guard over it could not be undone
	default:
		if m := k.Marked(e.Path); len(m) > 0 {
			return Result{}, &Refused{Env: e.Path, Reason: fmt.Sprintf("%s already holds a guard GPU Canary wrote, and there is no record of it to undo it by; `gpucanary unguard --force %s` takes it out first", escape(strings.Join(m, ", ")), quoteArg(escape(e.Path)))}
		}
	}
	ed, pins, err := k.plan(e)
	if err != nil {
		return Result{}, err
	}
	return k.apply(e.Path, ed, pins)
}

// Unguard lifts the guard on env: every file GPU Canary created is
// removed and every file it edited is restored byte for byte. A file
// changed by hand since is refused with a ChangedError unless force.
func (k Keeper) Unguard(env string, force bool) (Result, error) {
	m, err := k.load(env)
	if err != nil {
		return Result{}, err
	}
	return k.undo(m, force)
}
