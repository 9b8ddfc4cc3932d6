package present

import (
	"testing"
	"time"

	"github.com/gpucanary/gpucanary/monitor"
	"github.com/gpucanary/gpucanary/monitor/gpu"
)

func TestLimitedByAndPCIeLink(t *testing.T) {
	u := func(v uint32) *uint32 { return &v }
	link := func(gen, width, maxGen, maxWidth, card uint32) *gpu.PCIe {
		return &gpu.PCIe{Gen: gen, Width: width, MaxGen: maxGen, MaxWidth: maxWidth, CardMaxGen: card}
	}
	for _, tc := range []struct {
		name         string
		d            gpu.Device
		limited, bus string
	}{
		{"under load at its power cap, link at its best",
			gpu.Device{UtilizationGPU: u(99), ClocksEventReasons: []string{gpu.ReasonSWPowerCap}, PCIe: link(4, 16, 4, 16, 4)},
			"power cap", "PCIe Gen4 x16 (max Gen4 x16)"},
		{"idle, the link trained down",
			gpu.Device{UtilizationGPU: u(0), ClocksEventReasons: []string{gpu.ReasonGPUIdle}, PCIe: link(1, 16, 4, 16, 0)},
			"none", "PCIe Gen1 x16 at idle, by design (max Gen4 x16)"},
		{"light load",
			gpu.Device{UtilizationGPU: u(20), PCIe: link(2, 16, 4, 16, 0)},
			"none", "PCIe Gen2 x16 at light load, by design (max Gen4 x16)"},
		{"hot and capped under load, link degraded",
			gpu.Device{UtilizationGPU: u(95), ClocksEventReasons: []string{gpu.ReasonSWPowerCap, gpu.ReasonHWThermalSlowdown}, PCIe: link(3, 8, 4, 16, 0)},
			"thermal (HW), power cap", "PCIe Gen3 x8 (max Gen4 x16): below its maximum"},
		{"a slot that holds the card back",
			gpu.Device{UtilizationGPU: u(90), PCIe: link(3, 16, 3, 16, 4)},
			"none", "PCIe Gen3 x16 (max Gen3 x16, by the slot; the card does Gen4)"},
		{"asleep, nothing read", gpu.Device{Asleep: true}, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := LimitedBy(tc.d); got != tc.limited {
				t.Errorf("LimitedBy = %q, want %q", got, tc.limited)
			}
			if got := PCIeLink(tc.d); got != tc.bus {
				t.Errorf("PCIeLink = %q, want %q", got, tc.bus)
			}
		})
	}
}

// TestMarkWords: the marks in the span, in words, the newest few.
func TestMarkWords(t *testing.T) {
	at := time.Date(2026, 11, 29, 14, 2, 0, 0, time.Local)
	marks := []monitor.JobMark{
		{Time: at.Add(-2 * time.Hour), Kind: monitor.MarkStarted, Label: "old.py"},
		{Time: at, Kind: monitor.MarkStarted, Label: "train.py"},
		{Time: at.Add(30 * time.Minute), Kind: monitor.MarkStalled, PID: 42},
		{Time: at.Add(75 * time.Minute), Kind: monitor.MarkEnded, Label: "train.py", Detail: "crashed"},
	}
	from, to := at.Add(-time.Hour), at.Add(2*time.Hour)
	if got, want := MarkWords(marks, from, to, 6), "Jobs: train.py started 14:02 · PID 42 stalled 14:32 · train.py ended 15:17 (crashed)"; got != want {
		t.Errorf("MarkWords = %q, want %q", got, want)
	}
	if got, want := MarkWords(marks, from, to, 1), "Jobs: train.py ended 15:17 (crashed)"; got != want {
		t.Errorf("the newest one: %q, want %q", got, want)
	}
	if got := MarkWords(marks, to, to.Add(time.Hour), 6); got != "" {
		t.Errorf("none in the span: %q", got)
	}
}
