package engine

import (
	"fmt"
	"strings"
	"time"

	"github.com/gpucanary/gpucanary/monitor"
	"github.com/gpucanary/gpucanary/monitor/finding"
	"github.com/gpucanary/gpucanary/monitor/gpu"
)

// pollGPUHealth feeds the snapshot just taken to the GPU health rules
// (health.GPUWatch) and publishes what they raise and clear. A new Xid
// is raised again even while GPU_XID is held: each is news.
func (m *Monitor) pollGPUHealth(now time.Time, g gpu.State) {
	ms := &m.machine
	all, fresh := ms.health.Observe(now, g)
	c := ms.healthFinds.update(all)
	for _, f := range fresh {
		told := false
		for _, r := range c.raised {
			told = told || r.Key() == f.Key()
		}
		if !told {
			c.raised = append(c.raised, f)
		}
	}
	m.publish(healthFindingEvents(now, c))
}

// healthFindingEvents are the events of the GPU health findings changing.
func healthFindingEvents(at time.Time, c findingChange) []monitor.Event {
	var events []monitor.Event
	for _, f := range c.raised {
		events = append(events, monitor.Event{Time: at, Kind: monitor.KindFindingRaised, Finding: &f, Message: f.Message})
	}
	for _, f := range c.cleared {
		events = append(events, monitor.Event{Time: at, Kind: monitor.KindFindingCleared, Finding: &f, Message: healthCleared(f)})
	}
	return events
}

// healthCleared says what a cleared GPU health finding means.
func healthCleared(f finding.Finding) string {
	which := strings.Replace(f.Env, "gpu:", "GPU ", 1)
	switch f.Code {
	case finding.CodeGPUThrottled:
		return which + " runs at full speed again under load."
	case finding.CodeGPULost:
		return which + " answers the driver again."
	case finding.CodeGPUXid:
		return which + " has raised no further Xid error."
	case finding.CodePCIeDegraded:
		return which + "'s PCIe link is back at its best."
	case finding.CodeGPUMemoryErrors:
		return which + " reports no memory error waiting for a reset."
	case finding.CodeVRAMSpill:
		return fmt.Sprintf("PID %d on %s no longer spills into system memory.", f.PID, which)
	case finding.CodeDriverReset:
		return "The display driver has not been reset again since."
	}
	return fmt.Sprintf("%s: %s no longer applies.", which, f.Code)
}
