package engine

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/gpucanary/gpucanary/monitor"
	"github.com/gpucanary/gpucanary/monitor/finding"
	"github.com/gpucanary/gpucanary/monitor/gpu"
	"github.com/gpucanary/gpucanary/monitor/health"
	"github.com/gpucanary/gpucanary/monitor/store"
)

// findingSet is the findings raised about one subject (an environment,
// the GPU, the processes), by key (finding.Finding.Key).
type findingSet map[string]finding.Finding

// findingChange is what one update raised and cleared.
type findingChange struct {
	raised  []finding.Finding // in the order found
	cleared []finding.Finding // in key order
}

// update makes now the raised findings and says what changed. It is the
// one raise/clear diff: environments, the machine and processes all go
// through it, and only the words of their events differ. A finding still
// raised but with another verdict (its severity or its fix changed: a CPU
// build that was fine without a GPU is an error once one is there) is
// raised again, so what was said last about it is never stale.
func (s *findingSet) update(now []finding.Finding) findingChange {
	var c findingChange
	next := make(findingSet, len(now))
	for _, f := range now {
		k := f.Key()
		if _, dup := next[k]; dup {
			continue
		}
		next[k] = f
		if held, had := (*s)[k]; !had || changedVerdict(held, f) {
			c.raised = append(c.raised, f)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(*s)) {
		if _, still := next[k]; !still {
			c.cleared = append(c.cleared, (*s)[k])
		}
	}
	*s = next
	return c
}

// changedVerdict is true when a finding still raised says something else
// than when it was told: another severity or another fix. A finding whose
// severity is not known (remembered by its key only) has not changed, as
// far as anyone can tell.
func changedVerdict(held, now finding.Finding) bool {
	return held.Severity != "" && (held.Severity != now.Severity || held.Fix != now.Fix)
}

// carried is a finding remembered from an earlier run: it was raised (and
// told) then with the severity and fix in told, so it is raised again only
// if its verdict changed meanwhile, and its clear names its code. An empty
// told (a state file of an earlier version) knows the key only.
func carried(key, env string, told store.Told) finding.Finding {
	code, _, _ := strings.Cut(key, "|")
	return finding.Finding{Code: code, Env: env, Severity: finding.Severity(told.Severity), Fix: told.Fix}
}

// envFindingEvents are the events of an environment's findings changing.
func envFindingEvents(env string, at time.Time, c findingChange) []monitor.Event {
	var events []monitor.Event
	for _, f := range c.raised {
		events = append(events, monitor.Event{Time: at, Kind: monitor.KindFindingRaised, Env: env, Finding: &f, Message: f.Message, Fix: f.Fix})
	}
	for _, f := range c.cleared {
		events = append(events, monitor.Event{Time: at, Kind: monitor.KindFindingCleared, Env: env, Finding: &f,
			Message: fmt.Sprintf("Resolved in %s: %s no longer applies.", env, f.Code)})
	}
	return events
}

// gpuFindingEvents are the events of the GPU's findings (NO_GPU_DRIVER)
// changing.
func gpuFindingEvents(at time.Time, c findingChange) []monitor.Event {
	var events []monitor.Event
	for _, f := range c.raised {
		events = append(events, monitor.Event{Time: at, Kind: monitor.KindFindingRaised, Finding: &f, Message: f.Message})
	}
	for _, f := range c.cleared {
		events = append(events, monitor.Event{Time: at, Kind: monitor.KindFindingCleared, Finding: &f, Message: "An NVIDIA driver answers again."})
	}
	return events
}

// jobEvents are the events of JOB_ON_CPU findings changing; each is about
// the process and environment its finding names.
func jobEvents(at time.Time, c findingChange) []monitor.Event {
	var events []monitor.Event
	for _, f := range c.raised {
		events = append(events, monitor.Event{Time: at, Kind: monitor.KindJobOnCPU, Env: f.Env, PID: f.PID, Finding: &f, Message: f.Message})
	}
	for _, f := range c.cleared {
		events = append(events, monitor.Event{Time: at, Kind: monitor.KindJobOnCPUCleared, Env: f.Env, PID: f.PID, Finding: &f,
			Message: fmt.Sprintf("PID %d is no longer busy on the CPU (it moved to the GPU, calmed down or exited).", f.PID)})
	}
	return events
}

// machineState is the GPU as last read and the findings about the
// machine: the GPU's (NO_GPU_DRIVER, raised and cleared as the GPU
// changes) and the engine's own (WATCH_DEGRADED once per reason,
// STORE_UNREADABLE once per file, never cleared while the engine runs).
type machineState struct {
	gpu      gpu.State
	gpuFinds findingSet
	engine   map[string]finding.Finding
	// memFinds are GPU_MEMORY_ORPHANED's raised, memSeen its findings
	// on the last poll (orphan.go).
	memFinds findingSet
	memSeen  map[string]bool
	// health judges the GPU's health over the polls, healthFinds are its
	// findings raised (gpuhealth.go).
	health      *health.GPUWatch
	healthFinds findingSet
}

func newMachineState(o health.GPUWatchOptions) machineState {
	return machineState{gpuFinds: findingSet{}, engine: map[string]finding.Finding{}, memFinds: findingSet{},
		health: health.NewGPUWatch(o), healthFinds: findingSet{}}
}

// findings are the machine's findings in key order.
func (ms *machineState) findings() []finding.Finding {
	all := maps.Clone(ms.engine)
	maps.Copy(all, ms.gpuFinds)
	maps.Copy(all, ms.memFinds)
	maps.Copy(all, ms.healthFinds)
	out := make([]finding.Finding, 0, len(all))
	for _, k := range slices.Sorted(maps.Keys(all)) {
		out = append(out, all[k])
	}
	return out
}

// degrade raises WATCH_DEGRADED once per reason.
func (m *Monitor) degrade(reason, msg string) {
	m.raiseOnce(finding.Finding{Code: finding.CodeWatchDegraded, Severity: finding.SeverityWarning, Env: "watch:" + reason,
		Message: "File watching is degraded: " + msg + "."})
}

// storeUnreadable raises STORE_UNREADABLE once per file (what: "state",
// "history") that the store could not read and leaves alone (err says
// why), or once for a state folder another user could have written
// ("state folder": storeWhat), and logs it once: the user learns that GPU
// Canary is not remembering, and why, instead of losing the file to the
// next save or believing what another user wrote.
func (m *Monitor) storeUnreadable(what string, err error) {
	f := finding.Finding{Code: finding.CodeStoreUnreadable, Severity: finding.SeverityWarning, Env: "store:" + what,
		Message: fmt.Sprintf("GPU Canary cannot keep its %s: %v.", what, err)}
	if _, ok := m.machine.engine[f.Key()]; !ok {
		m.log.Warn("a file of GPU Canary's state is left alone", "what", what, "err", err)
	}
	m.raiseOnce(f)
}

// storeWhat is what of the store err is about: the state folder when
// another user could have written it or a file in it (the state and the
// history are then told as one), else file.
func storeWhat(err error, file string) string {
	if errors.Is(err, store.ErrUntrusted) {
		return "state folder"
	}
	return file
}

// raiseOnce raises a finding about the engine itself, once.
func (m *Monitor) raiseOnce(f finding.Finding) {
	if _, ok := m.machine.engine[f.Key()]; ok {
		return
	}
	m.machine.engine[f.Key()] = f
	m.publish([]monitor.Event{{Time: m.clock.Now(), Kind: monitor.KindFindingRaised, Finding: &f, Message: f.Message}})
}
