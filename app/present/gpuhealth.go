package present

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/gpucanary/gpucanary/monitor"
	"github.com/gpucanary/gpucanary/monitor/gpu"
	"github.com/gpucanary/gpucanary/monitor/health"
)

// What the GPUs window says of a GPU's health now, from what the driver
// said at the last poll: what holds its clocks back, and its PCIe link.
// Judgements over time (GPU_THROTTLED, PCIE_DEGRADED) are the engine's;
// these are the readings, in words.

// limits are the clocks-event reasons in the words the window uses, in
// the order they are told; gpu_idle is no limit (an idle GPU lowers its
// clocks by design).
var limits = []struct{ reason, words string }{
	{gpu.ReasonHWThermalSlowdown, "thermal (HW)"},
	{gpu.ReasonSWThermalSlowdown, "thermal"},
	{gpu.ReasonHWPowerBrake, "power brake (from the power supply)"},
	{gpu.ReasonHWSlowdown, "HW slowdown"},
	{gpu.ReasonSWPowerCap, "power cap"},
}

// LimitedBy is what holds the GPU's clocks back now: "power cap",
// "thermal", several joined ("thermal, power cap"), or "none" when the
// driver names no reason (it names none, too, where it cannot say).
// "" for a GPU asleep, which is not read.
func LimitedBy(d gpu.Device) string {
	if d.Asleep {
		return ""
	}
	var out []string
	for _, l := range limits {
		if slices.Contains(d.ClocksEventReasons, l.reason) {
			out = append(out, l.words)
		}
	}
	if len(out) == 0 {
		return "none"
	}
	return strings.Join(out, ", ")
}

// PCIeLink is the GPU's PCIe link now and at most: "PCIe Gen4 x16 (max
// Gen4 x16)". A link below its maximum on an idle GPU is said to be so by
// design (it trains down to save power); under load it is said to be
// below its maximum; a slot that holds the card back is named. "" when
// the driver did not say.
func PCIeLink(d gpu.Device) string {
	p := d.PCIe
	if p == nil || p.Gen == 0 || p.Width == 0 {
		return ""
	}
	now := fmt.Sprintf("Gen%d x%d", p.Gen, p.Width)
	most := fmt.Sprintf("max Gen%d x%d", p.MaxGen, p.MaxWidth)
	if p.CardMaxGen > p.MaxGen {
		most += fmt.Sprintf(", by the slot; the card does Gen%d", p.CardMaxGen)
	}
	below := p.Gen < p.MaxGen || p.Width < p.MaxWidth
	idle := slices.Contains(d.ClocksEventReasons, gpu.ReasonGPUIdle) || d.UtilizationGPU != nil && *d.UtilizationGPU == 0
	switch {
	case below && idle:
		return fmt.Sprintf("PCIe %s at idle, by design (%s)", now, most)
	case below && d.UtilizationGPU != nil && *d.UtilizationGPU < health.LoadPercent:
		return fmt.Sprintf("PCIe %s at light load, by design (%s)", now, most)
	case below:
		return fmt.Sprintf("PCIe %s (%s): below its maximum", now, most)
	}
	return fmt.Sprintf("PCIe %s (%s)", now, most)
}

// MarkWords are a GPU's job marks from from to to in words, the newest
// most of them, oldest first, for the list under its charts:
// "Jobs: train.py started 14:02 · train.py ended 15:17 (crashed)"; ""
// when none is in the span. The stall rule's marks read "stalled".
func MarkWords(marks []monitor.JobMark, from, to time.Time, most int) string {
	var parts []string
	for _, m := range marks {
		if m.Time.Before(from) || m.Time.After(to) {
			continue
		}
		name := m.Label
		if name == "" {
			name = fmt.Sprintf("PID %d", m.PID)
		}
		s := fmt.Sprintf("%s %s %s", name, m.Kind, m.Time.Local().Format("15:04"))
		if m.Detail != "" {
			s += " (" + m.Detail + ")"
		}
		parts = append(parts, s)
	}
	if len(parts) > most {
		parts = parts[len(parts)-most:]
	}
	if len(parts) == 0 {
		return ""
	}
	return "Jobs: " + strings.Join(parts, " · ")
}
