package engine

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/gpucanary/gpucanary/monitor"
	"github.com/gpucanary/gpucanary/monitor/fixjournal"
)

// Repairs become events from their journals. A repair runs in whichever
// process asked for it (`gpucanary fix` in a terminal, the tray's windows
// process), and each run appends to a journal of its own in the state
// folder (fixjournal.Journal) as it goes; the engine is the one writer of the
// event history. So the journal is the message: the engine reads the
// journal folder on every poll (and at once when the windows process says
// a journal was written, Monitor.ReadJournals) and publishes what each
// journal says that it has not published yet: REPAIR_STARTED, then
// REPAIR_SUCCEEDED, REPAIR_FAILED or REPAIR_INTERRUPTED. No process ever
// writes a file another one writes, and a repair run while no engine ran
// is recorded at the next start. Which journals were published is kept
// with the saved state, so a restart publishes nothing twice.

// Phases of a journal the engine has published (store.State.Repairs).
const (
	repairStarted = "started"
	repairEnded   = "ended"
)

// repairLog is the journals seen and what was published of each, by file
// name. Owned by the Run goroutine.
type repairLog struct {
	dir string
	// seen is the phase published of each journal; nil until the first
	// read.
	seen map[string]string
}

// ReadJournals asks the engine to read the repair journals now, rather
// than at its next poll: the windows process's repair says so over the
// link as its journal records the start and the end of a run.
func (m *Monitor) ReadJournals() error {
	return m.request(func(context.Context) { m.pollRepairs(false) })
}

// pollRepairs publishes what the journals say that was not published
// yet. At the first read (atStart), a repair already ended happened
// while the engine was not running: its events are marked Offline. When
// nothing was ever saved of the journals (the first run of an engine that
// records repairs), the repairs already ended are taken as known, so an
// old folder of journals does not flood the history.
func (m *Monitor) pollRepairs(atStart bool) {
	rl := &m.repairs
	if rl.dir == "" {
		return
	}
	names, err := fixjournal.JournalNames(rl.dir)
	if err != nil {
		m.log.Warn("reading repair journals", "err", err)
		return
	}
	baseline := false
	if rl.seen == nil {
		rl.seen, baseline = m.memory.repairs()
		baseline = !baseline
	}
	var stillInterrupted map[string]bool
	if baseline {
		stillInterrupted = lastInterrupted(rl.dir, names)
	}
	var events []monitor.Event
	for _, name := range names {
		if rl.seen[name] == repairEnded {
			continue
		}
		rec, err := fixjournal.ReadJournal(filepath.Join(rl.dir, name))
		if err != nil {
			continue // being created, or not a journal
		}
		ended := rec.Result != nil || !rec.Running()
		if baseline && ended && !stillInterrupted[name] {
			rl.seen[name] = repairEnded
			continue
		}
		offline := atStart && ended && rl.seen[name] == ""
		if rl.seen[name] == "" {
			ev := repairStartedEvent(rec)
			ev.Offline = offline
			events = append(events, ev)
			rl.seen[name] = repairStarted
		}
		if ended {
			ev := repairEndedEvent(rec)
			ev.Offline = offline
			events = append(events, ev)
			rl.seen[name] = repairEnded
		}
	}
	for name := range rl.seen {
		if !containsName(names, name) {
			delete(rl.seen, name) // its journal was deleted
		}
	}
	m.memory.setRepairs(rl.seen)
	m.publish(events)
}

// lastInterrupted names, among the journals in dir, those that are the
// last repair of their environment and were interrupted (GPU Canary was
// killed during it, or stopped by a signal: a closed terminal's SIGHUP
// leaves a report nobody read). The first engine on a state folder takes
// the repairs already ended as known, except these: the environment may
// be half-installed, and nothing else would ever say so.
func lastInterrupted(dir string, names []string) map[string]bool {
	last := map[string]string{} // env -> its newest journal
	interrupted := map[string]bool{}
	for _, name := range names { // oldest first
		rec, err := fixjournal.ReadJournal(filepath.Join(dir, name))
		if err != nil {
			continue
		}
		last[rec.Env] = name
		interrupted[name] = rec.Interrupted || rec.Result != nil && rec.Result.Interrupted
	}
	out := map[string]bool{}
	for _, name := range last {
		if interrupted[name] {
			out[name] = true
		}
	}
	return out
}

func containsName(names []string, name string) bool {
	for _, n := range names {
		if n == name {
			return true
		}
	}
	return false
}

// repairStartedEvent is REPAIR_STARTED for the run rec records.
func repairStartedEvent(rec fixjournal.JournalRecord) monitor.Event {
	r := repairOf(rec)
	msg := fmt.Sprintf("A repair of %s started", rec.Env)
	if r.Command != "" {
		msg += ": " + r.Command
	}
	return monitor.Event{Time: rec.Started, Kind: monitor.KindRepairStarted, Env: rec.Env, Repair: r, Message: msg + "."}
}

// repairEndedEvent is how the run rec records ended.
func repairEndedEvent(rec fixjournal.JournalRecord) monitor.Event {
	r := repairOf(rec)
	ev := monitor.Event{Time: rec.Finished, Env: rec.Env, Repair: r}
	res := rec.Result
	switch {
	case res == nil:
		// No result and its recorder is gone: killed during the run.
		ev.Kind, ev.Time = monitor.KindRepairInterrupted, rec.Last
		ev.Message = fmt.Sprintf("The repair of %s was interrupted: GPU Canary (PID %d) stopped before it finished. Run `gpucanary fix %s` to see what state it is in; the journal is %s.",
			rec.Env, rec.Recorder, rec.Env, rec.Path)
	case res.Fixed:
		ev.Kind = monitor.KindRepairSucceeded
		ev.Message = fmt.Sprintf("The repair of %s succeeded: %s, verified by reading it again.", rec.Env, versionChange(res.Before, res.After))
	case res.Interrupted:
		ev.Kind = monitor.KindRepairInterrupted
		ev.Message = fmt.Sprintf("The repair of %s was interrupted: %s. Installed now: %s.", rec.Env, res.Why, describeVersions(res.After))
	default:
		ev.Kind = monitor.KindRepairFailed
		ev.Message = fmt.Sprintf("The repair of %s failed: %s.", rec.Env, res.Why)
		if len(res.Cause) > 0 {
			ev.Message += " The installer said: " + strings.Join(res.Cause, " ")
		}
	}
	if res != nil && !res.Fixed && res.Rollback != "" {
		ev.Fix = res.Rollback
	}
	return ev
}

// repairOf is the Repair of an event from its journal.
func repairOf(rec fixjournal.JournalRecord) *monitor.Repair {
	r := &monitor.Repair{Journal: rec.Path, Command: rec.Plan.Command(), Before: rec.Before, PID: rec.Recorder}
	if res := rec.Result; res != nil {
		r.After, r.Why, r.Cause, r.Rollback = res.After, res.Why, res.Cause, res.Rollback
	}
	return r
}

// versionChange is "torch 2.5.1+cpu → 2.5.1+cu124, torchvision …".
func versionChange(before, after map[string]string) string {
	var parts []string
	for _, n := range []string{"torch", "torchvision", "torchaudio"} {
		a, ok := after[n]
		if !ok {
			continue
		}
		if b, had := before[n]; had && b != a {
			parts = append(parts, fmt.Sprintf("%s %s → %s", n, b, a))
		} else {
			parts = append(parts, n+" "+a)
		}
	}
	if len(parts) == 0 {
		return "no torch"
	}
	return strings.Join(parts, ", ")
}

// describeVersions is "torch 2.5.1+cpu, torchvision 0.20.1+cpu", or "no
// torch".
func describeVersions(v map[string]string) string {
	var parts []string
	for _, n := range []string{"torch", "torchvision", "torchaudio"} {
		if s, ok := v[n]; ok {
			parts = append(parts, n+" "+s)
		}
	}
	if len(parts) == 0 {
		return "no torch"
	}
	return strings.Join(parts, ", ")
}
