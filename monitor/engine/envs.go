package engine

import (
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/gpucanary/gpucanary/monitor"
	"github.com/gpucanary/gpucanary/monitor/pyenv"
)

// envEntry is one watched environment.
type envEntry struct {
	report monitor.EnvReport
	// via says how it was found; viaAdded marks one added by hand.
	via      string
	findings findingSet
	// torch is when torch last changed and was last replaced, kept
	// across restarts (memory) for metrics and alerts.
	torch monitor.TorchChange
}

// viaAdded marks an environment added by hand (Add): settings changes
// never drop it.
const viaAdded = "added"

// envSet is the environments the engine watches, and those removed by
// hand, which discovery must not bring back. It is owned by the Run
// goroutine; removeEnv is the one way an environment leaves it.
type envSet struct {
	byPath    map[string]*envEntry
	forgotten map[string]bool
	// installing is since when an install in progress was seen, by path
	// (the environment may be new, not in byPath yet).
	installing map[string]time.Time
}

func newEnvSet() envSet {
	return envSet{byPath: map[string]*envEntry{}, forgotten: map[string]bool{}, installing: map[string]time.Time{}}
}

func (s *envSet) get(path string) *envEntry { return s.byPath[path] }

// add starts keeping path, found by via, with no findings raised yet.
func (s *envSet) add(path, via string) *envEntry {
	e := &envEntry{via: via, findings: findingSet{}}
	s.byPath[path] = e
	return e
}

// noteTorch records the time of a torch event on its environment.
func (s *envSet) noteTorch(e monitor.Event) {
	entry := s.byPath[e.Env]
	if entry == nil {
		return
	}
	switch e.Kind {
	case monitor.KindCUDAWheelReplaced:
		entry.torch.Replaced = e.Time
		fallthrough
	case monitor.KindTorchInstalled, monitor.KindTorchChanged, monitor.KindTorchRemoved:
		entry.torch.Changed = e.Time
	}
}

// torchChanges are the torch times of the environments that have any.
func (s *envSet) torchChanges() map[string]monitor.TorchChange {
	out := map[string]monitor.TorchChange{}
	for p, e := range s.byPath {
		if e.torch != (monitor.TorchChange{}) {
			out[p] = e.torch
		}
	}
	return out
}

// paths are the environments' paths, sorted.
func (s *envSet) paths() []string { return slices.Sorted(maps.Keys(s.byPath)) }

// reports are the environments' reports in the order of their paths.
func (s *envSet) reports() []monitor.EnvReport {
	out := make([]monitor.EnvReport, 0, len(s.byPath))
	for _, p := range s.paths() {
		out = append(out, s.byPath[p].report)
	}
	return out
}

// envs are the environments read, by path, for classifying processes.
func (s *envSet) envs() map[string]*pyenv.Env {
	out := make(map[string]*pyenv.Env, len(s.byPath))
	for p, e := range s.byPath {
		out[p] = e.report.Env
	}
	return out
}

// forget records (or clears) that path was removed by hand.
func (s *envSet) forget(path string, yes bool) {
	if yes {
		s.forgotten[path] = true
	} else {
		delete(s.forgotten, path)
	}
}

func (s *envSet) isForgotten(path string) bool { return s.forgotten[path] }

// installSeen notes that an install into path is in progress and returns
// since when it has been.
func (s *envSet) installSeen(path string, now time.Time) time.Time {
	since, ok := s.installing[path]
	if !ok {
		since = now
		s.installing[path] = now
	}
	return since
}

// installDone notes that no install into path is in progress.
func (s *envSet) installDone(path string) { delete(s.installing, path) }

// removal is why an environment leaves the set; it decides what is said.
type removal int

const (
	removedByHand    removal = iota // Forget: its findings clear, nothing more is said
	removedDeleted                  // its folder is gone
	removedUncovered                // the settings no longer include where it was found
)

// message is the ENV_REMOVED message, "" when none is published.
func (r removal) message(path string, torch *pyenv.Package) string {
	switch r {
	case removedDeleted:
		return fmt.Sprintf("%s was deleted (it had %s).", path, torchNote(torch))
	case removedUncovered:
		return fmt.Sprintf("%s is no longer watched: the settings no longer include where it was found.", path)
	}
	return ""
}

// removeEnv stops watching path and forgets it: its watches, what is
// remembered of it, and its findings, which clear.
func (m *Monitor) removeEnv(path string, why removal) {
	e := m.envs.get(path)
	if e == nil {
		return
	}
	delete(m.envs.byPath, path)
	m.w.unwatchEnv(e.report.Env)
	m.memory.forget(path)
	now := m.clock.Now()
	var events []monitor.Event
	if msg := why.message(path, e.report.Torch()); msg != "" {
		events = append(events, monitor.Event{Time: now, Kind: monitor.KindEnvRemoved, Env: path, Before: e.report.Torch(), Message: msg})
	}
	m.publish(append(events, envFindingEvents(path, now, e.findings.update(nil))...))
}
