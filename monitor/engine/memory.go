package engine

import (
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"slices"
	"time"

	"github.com/gpucanary/gpucanary/monitor"
	"github.com/gpucanary/gpucanary/monitor/store"
)

// memory is what the engine remembers across restarts: each environment's
// torch and raised findings when last seen (to tell what changed while
// GPU Canary was not running), and the event history. Without a store it
// remembers nothing. Its state is owned by the Run goroutine; history may
// be read from any.
type memory struct {
	store *store.Store
	log   *slog.Logger
	state store.State
}

func newMemory(st *store.Store, log *slog.Logger) memory {
	return memory{store: st, log: log, state: store.State{Envs: map[string]store.EnvRecord{}}}
}

// load reads what the last run saved. The error is a state file the
// store could not read and leaves alone (store.ErrUnreadable), or a state
// folder another user could have written (store.ErrUntrusted): nothing
// is remembered, and nothing will be saved over it this run.
func (mem *memory) load() error {
	if mem.store == nil {
		return nil
	}
	st, warn := mem.store.LoadState()
	if warn != nil {
		mem.log.Warn("reading saved state", "err", warn)
	}
	mem.state = st
	if errors.Is(warn, store.ErrUnreadable) || errors.Is(warn, store.ErrUntrusted) {
		return warn
	}
	return nil
}

// env is what was remembered of the environment at path.
func (mem *memory) env(path string) (store.EnvRecord, bool) {
	rec, ok := mem.state.Envs[path]
	return rec, ok
}

// told is what was said of the finding key about env in an earlier run:
// from the saved state, or, for a state file of an earlier version, from
// the newest event of the history that raised it (past is that history,
// read once by the caller). Nothing when neither remembers it.
func (mem *memory) told(rec store.EnvRecord, env, key string, past func() []monitor.Event) store.Told {
	if t, ok := rec.Told[key]; ok {
		return t
	}
	for _, e := range past() { // newest first
		if e.Env != env || e.Finding == nil || e.Finding.Key() != key {
			continue
		}
		if e.Kind != monitor.KindFindingRaised {
			break
		}
		return store.Told{Severity: string(e.Finding.Severity), Fix: e.Finding.Fix}
	}
	return store.Told{}
}

// paths are the remembered environments, sorted.
func (mem *memory) paths() []string { return slices.Sorted(maps.Keys(mem.state.Envs)) }

// forget drops what is remembered of path (it is no longer watched).
func (mem *memory) forget(path string) { delete(mem.state.Envs, path) }

// deletedWhileStopped reports the remembered environments that are gone
// from disk (and not in envs), and forgets them.
func (mem *memory) deletedWhileStopped(envs *envSet, now time.Time) []monitor.Event {
	var events []monitor.Event
	for _, path := range slices.Sorted(maps.Keys(mem.state.Envs)) {
		if envs.get(path) != nil {
			continue
		}
		if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
			rec := mem.state.Envs[path]
			events = append(events, monitor.Event{Time: now, Kind: monitor.KindEnvRemoved, Env: path, Before: rec.Torch, Offline: true,
				Message: fmt.Sprintf("%s was deleted while GPU Canary was not running (%s when last seen on %s).", path, torchNote(rec.Torch), rec.Seen.Local().Format("2006-01-02"))})
			mem.forget(path)
		}
	}
	return events
}

// save writes the last known state of each environment.
func (mem *memory) save(envs *envSet, now time.Time) {
	if mem.store == nil {
		return
	}
	for p, e := range envs.byPath {
		told := make(map[string]store.Told, len(e.findings))
		for k, f := range e.findings {
			told[k] = store.Told{Severity: string(f.Severity), Fix: f.Fix}
		}
		mem.state.Envs[p] = store.EnvRecord{Torch: e.report.Torch(), Findings: slices.Sorted(maps.Keys(e.findings)), Told: told, Seen: now,
			TorchChanged: e.torch.Changed, TorchReplaced: e.torch.Replaced}
	}
	mem.state.Saved = now
	// A state file or folder left alone was told at load (and logged):
	// not again at every save.
	if err := mem.store.SaveState(mem.state); err != nil && !errors.Is(err, store.ErrUnreadable) && !errors.Is(err, store.ErrUntrusted) {
		mem.log.Warn("saving state", "err", err)
	}
}

// append adds events to the history: each is one line appended to the
// store's log, whatever the history's length. The error is a history
// file the store could not read and leaves alone (store.ErrUnreadable),
// or a state folder another user could have written (store.ErrUntrusted),
// for the engine to tell; other errors are logged here.
func (mem *memory) append(events []monitor.Event) error {
	if mem.store == nil {
		return nil
	}
	anys := make([]any, len(events))
	for i := range events {
		anys[i] = events[i]
	}
	err := mem.store.Append(anys...)
	if errors.Is(err, store.ErrUnreadable) || errors.Is(err, store.ErrUntrusted) {
		return err
	}
	if err != nil {
		mem.log.Warn("saving event history", "err", err)
	}
	return nil
}

// history is the newest remembered events, at most limit of them, newest
// first: read from the end of the store's log and no further.
func (mem *memory) history(limit int) []monitor.Event {
	if mem.store == nil {
		return nil
	}
	evs, read, err := store.History[monitor.Event](mem.store, limit)
	if err != nil {
		mem.log.Warn("reading event history", "err", err)
	}
	if read.Damaged > 0 {
		mem.log.Warn("damaged lines of the event history were skipped", "lines", read.Damaged)
	}
	return evs
}

// repairs is the phase published of each repair journal, as last saved,
// and whether it was ever saved.
func (mem *memory) repairs() (map[string]string, bool) {
	if mem.state.Repairs == nil {
		return map[string]string{}, false
	}
	return maps.Clone(mem.state.Repairs), true
}

// setRepairs remembers the phase published of each repair journal; the
// next save writes it.
func (mem *memory) setRepairs(seen map[string]string) { mem.state.Repairs = maps.Clone(seen) }

// saveJob keeps the record of a job that ended in the store, for a
// report written later (`gpucanary report --job PID`); a store that
// cannot take it is logged, not told: the event was told already.
func (mem *memory) saveJob(rec monitor.JobRecord) {
	if mem.store == nil || rec.Ended.Job == nil {
		return
	}
	if err := mem.store.SaveJob(rec.Ended.Job.PID, rec.Ended.Job.Started, rec); err != nil {
		mem.log.Warn("saving the record of a job that ended", "pid", rec.Ended.Job.PID, "err", err)
	}
}
