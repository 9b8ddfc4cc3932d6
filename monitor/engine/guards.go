package engine

import (
	"fmt"
	"strings"
	"time"

	"github.com/gpucanary/gpucanary/monitor"
	"github.com/gpucanary/gpucanary/monitor/guard"
	"github.com/gpucanary/gpucanary/monitor/shell"
)

// withGuard adds to a report what GPU Canary's guard records say of the
// environment (Options.Guards): whether it is guarded, and which of the
// guard's files were changed by hand.
func withGuard(dir string, rep monitor.EnvReport) monitor.EnvReport {
	if dir == "" || rep.Env == nil {
		return rep
	}
	st := guard.Keeper{StateDir: dir}.Read(rep.Path)
	rep.Guarded, rep.GuardChanged = st.Guarded, st.Changed
	return rep
}

// guardEvent is the event for a guard found changed by hand in this
// read, where the last read found it whole: told once, in history only
// (the policy does not notify GUARD_CHANGED), since the user did it.
func guardEvent(path string, now time.Time, before, after monitor.EnvReport) *monitor.Event {
	if len(after.GuardChanged) == 0 || len(before.GuardChanged) > 0 {
		return nil
	}
	return &monitor.Event{Time: now, Kind: monitor.KindGuardChanged, Env: path,
		Message: fmt.Sprintf("The guard that keeps torch in %s was changed by hand (%s): installers may replace torch again. Lift what is left of it: gpucanary unguard --force %s; then set it again if you want: gpucanary guard %s.",
			path, strings.Join(after.GuardChanged, "; "), shell.Quote(path), shell.Quote(path))}
}
