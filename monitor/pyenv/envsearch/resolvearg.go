package envsearch

import (
	"errors"

	"github.com/gpucanary/gpucanary/monitor/pyenv/managers"
)

// NotCreatedError is ResolveArg's answer for a project folder whose
// manager has not made its environment yet: the resolution (the path as
// typed, the project, the rule, the command that creates it) rides along,
// so that each caller says the one sentence (NotCreated) its own way.
type NotCreatedError struct{ managers.Resolution }

// Error is the sentence with the path as typed as its subject.
func (e *NotCreatedError) Error() string { return e.NotCreated(e.Arg) }

// ResolveArg is Resolve for a path a person gave a command, a window or
// the engine, which needs an environment that exists: a project folder
// whose environment is not made yet is a *NotCreatedError carrying the
// resolution. Each path given is resolved by one call of it (or of
// Resolve), and what it answers is handed on (Given), not resolved again.
func ResolveArg(path string, w managers.Where) (managers.Resolution, error) {
	r, err := Resolve(path, w)
	if err == nil && r.Env == "" {
		return r, &NotCreatedError{r}
	}
	return r, err
}

// IsNotCreated reports whether err is (or wraps) a NotCreatedError, and
// returns it.
func IsNotCreated(err error) (*NotCreatedError, bool) {
	var nc *NotCreatedError
	ok := errors.As(err, &nc)
	return nc, ok
}

// Given is what Search answers for paths given (Options.Paths)
// from resolutions already made: each resolved environment, or a project
// folder without one (Found.Create), deduplicated by real path in the
// order given. It reads nothing but the paths' links.
func Given(rs []managers.Resolution) Discovery {
	d := &discovery{seen: map[string]bool{}}
	for _, r := range rs {
		d.given(r)
	}
	return Discovery{Found: d.found, Complete: true}
}

// given adds the environment one path given resolved to: r.Env, else the
// project folder still without one, else (a path that names neither) the
// path itself, which the reader reports.
func (d *discovery) given(r managers.Resolution) {
	switch {
	case r.Env != "":
		d.add(Found{Path: r.Env, Via: "argument", From: r.Line()}, false)
	case r.Project != "":
		d.add(Found{Path: r.Project, Via: "argument", From: r.Rule, Create: r.Create}, false)
	default:
		d.add(Found{Path: r.Arg, Via: "argument"}, false)
	}
}
