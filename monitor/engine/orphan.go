package engine

import (
	"strings"
	"time"

	"github.com/gpucanary/gpucanary/monitor"
	"github.com/gpucanary/gpucanary/monitor/finding"
	"github.com/gpucanary/gpucanary/monitor/health"
)

// pollGPUMemory raises GPU_MEMORY_ORPHANED for memory no live process
// holds, and clears it when that memory is freed. A GPU is judged on the
// snapshot just taken and the PIDs alive now; a finding is raised only
// when the poll before saw it too, since a process that exits between the
// snapshot and the look at its PID is no orphan.
func (m *Monitor) pollGPUMemory(now time.Time) {
	if m.o.Alive == nil {
		return
	}
	ms := &m.machine
	seen := map[string]bool{}
	var raised []finding.Finding
	for _, f := range health.CheckGPUMemory(ms.gpu, m.o.Alive) {
		k := f.Key()
		if _, held := ms.memFinds[k]; held || ms.memSeen[k] {
			raised = append(raised, f)
		}
		seen[k] = true
	}
	ms.memSeen = seen
	m.publish(memoryFindingEvents(now, ms.memFinds.update(raised)))
}

// memoryFindingEvents are the events of GPU_MEMORY_ORPHANED changing.
func memoryFindingEvents(at time.Time, c findingChange) []monitor.Event {
	var events []monitor.Event
	for _, f := range c.raised {
		events = append(events, monitor.Event{Time: at, Kind: monitor.KindFindingRaised, Finding: &f, Message: f.Message})
	}
	for _, f := range c.cleared {
		events = append(events, monitor.Event{Time: at, Kind: monitor.KindFindingCleared, Finding: &f,
			Message: strings.Replace(f.Env, "gpu:", "GPU ", 1) + ": the memory no live process held is free again."})
	}
	return events
}
