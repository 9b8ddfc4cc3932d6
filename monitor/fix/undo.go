package fix

import (
	"fmt"
	"path/filepath"

	"github.com/gpucanary/gpucanary/monitor/fixjournal"
	"github.com/gpucanary/gpucanary/monitor/fixplan"
	"github.com/gpucanary/gpucanary/monitor/pyenv"
)

// UndoPlan is the plan that takes back the repair p, whose run res
// recorded: the rollback command its journal gives (rollbackCommand), as
// a plan that runs like any repair (the same journal, guard and in-use
// refusal) and is verified by the versions it puts back (Plan.Undoes).
// ok is false when the run gave no rollback (it changed nothing) or
// removed a copy from the user site, which its rollback installs with
// --user, outside the environment.
func UndoPlan(p fixplan.Plan, res fixjournal.Result) (fixplan.Plan, bool) {
	if res.Rollback == "" || len(p.Removes) > 0 || p.Undoes != "" {
		return fixplan.Plan{}, false
	}
	argv, tag := rollbackArgv(p, res.Before)
	if argv == nil {
		return fixplan.Plan{}, false
	}
	u := fixplan.Plan{Env: p.Env, Installer: p.Installer, Argv: argv, Variant: tag, Undoes: res.Journal,
		Reasons: []string{"it puts back the versions the repair replaced"}}
	if res.Journal != "" {
		u.Reasons[0] += " (its journal: " + filepath.Base(res.Journal) + ")"
	}
	if tag != "" {
		i := len(argv) - 1 // rollbackArgv ends with --index-url URL
		u.Index = argv[i]
	}
	for _, n := range []string{pyenv.Torch, pyenv.TorchVision, pyenv.TorchAudio} {
		if v, ok := res.Before[n]; ok {
			u.Packages = append(u.Packages, fixplan.Pin{Name: n, Version: v})
		}
	}
	return u, true
}

// putBack verifies an undo: every version it was to put back is there.
func putBack(p fixplan.Plan, env *pyenv.Env) (bool, string) {
	for _, pin := range p.Packages {
		got := env.Packages[pin.Name]
		switch {
		case got == nil:
			return false, fmt.Sprintf("%s is not installed after the run, not %s as before the repair", pin.Name, pin.Version)
		case got.Version != pin.Version:
			return false, fmt.Sprintf("%s is %s after the run, not %s as before the repair", pin.Name, got.Version, pin.Version)
		}
	}
	return true, ""
}
