package main

import (
	"errors"
	"fmt"
	"io"

	"github.com/gpucanary/gpucanary/monitor/instance"
	"github.com/gpucanary/gpucanary/monitor/owned"
	"github.com/gpucanary/gpucanary/monitor/store"
)

// openState takes the state folder for an engine running as role: the
// store and its release, or an *instance.Held error when another GPU
// Canary process holds the folder. No state folder at all (no home), or
// one another user could have written (owned.Check), is not an error:
// the engine runs and remembers nothing, and the log says why once.
func (g *globals) openState(role string) (*store.Store, func(), error) {
	dir, err := store.Dir()
	if err != nil {
		g.log.Warn("no state directory; nothing is remembered across restarts", "err", err)
		return nil, func() {}, nil
	}
	l, err := instance.LockState(dir, role)
	var untrusted *owned.Untrusted
	if errors.As(err, &untrusted) {
		g.log.Warn("the state folder is not used: another user could have written it; nothing is remembered across restarts",
			"folder", dir, "path", untrusted.Path, "owner", untrusted.Owner, "mode", untrusted.Mode, "why", untrusted.Why,
			"fix", fmt.Sprintf("make %s yours and writable by you alone (chmod go-w), or set %s to a folder of your own", untrusted.Path, store.DirVariable))
		return nil, func() {}, nil
	}
	if err != nil {
		return nil, func() {}, err
	}
	return store.Open(dir), l.Release, nil
}

// sharedState is openState for a process that may run beside the folder's
// holder (the tray beside a watch, the windows on their own, the agent):
// it runs without the store then, so that two engines never write one
// folder, and says so in the log.
func (g *globals) sharedState(role string) (*store.Store, func()) {
	st, release, err := g.openState(role)
	if err != nil {
		g.log.Warn("the state folder is in use; this "+role+" remembers nothing across restarts", "err", err)
	}
	return st, release
}

// refuseHeldState tells why a command that must own the state folder
// (watch) does not start.
func refuseHeldState(w io.Writer, command string, err error) {
	var held *instance.Held
	if !errors.As(err, &held) {
		fmt.Fprintf(w, "gpucanary %s: %v\n", command, err)
		return
	}
	fmt.Fprintf(w, "gpucanary %s: %v.\n"+
		"Two engines on one state folder would record every event twice. Quit the other one first,\n"+
		"or give this one a state folder of its own: %s=DIR gpucanary %s\n", command, held, store.DirVariable, command)
}
