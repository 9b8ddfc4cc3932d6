package present

import (
	"fmt"
	"time"

	"github.com/gpucanary/gpucanary/monitor/gpu"
)

// SampleHistory is how many points the GPU graphs keep: 5 minutes at 2 s.
const SampleHistory = 150

// GPUSamples is the recent utilization and memory of each GPU. The tray
// process samples whether or not a window is open and hands the samples to
// the windows process, so opening the GPUs window shows the last minutes.
type GPUSamples struct {
	Last time.Time            `json:"last"`
	Util map[string][]float64 `json:"util"` // device key -> utilization (0..1)
	Mem  map[string][]float64 `json:"mem"`  // device key -> memory used (0..1)
}

// Add records one point of each graph for every device of st, unless the
// last point is less than minGap old (events re-render more often than the
// refresh ticks, and the graphs keep one point per tick).
func (h *GPUSamples) Add(st gpu.State, at time.Time, minGap time.Duration) {
	if !h.Last.IsZero() && at.Sub(h.Last) < minGap {
		return
	}
	h.Last = at
	if h.Util == nil {
		h.Util, h.Mem = map[string][]float64{}, map[string][]float64{}
	}
	for _, d := range st.Devices {
		id := DeviceKey(d)
		push := func(m map[string][]float64, v float64) {
			s := append(m[id], v)
			if len(s) > SampleHistory {
				s = s[len(s)-SampleHistory:]
			}
			m[id] = s
		}
		u := 0.0
		if d.UtilizationGPU != nil {
			u = float64(*d.UtilizationGPU) / 100
		}
		push(h.Util, u)
		if d.MemoryTotalBytes > 0 {
			push(h.Mem, float64(d.MemoryUsedBytes)/float64(d.MemoryTotalBytes))
		}
	}
}

// Clone is a deep copy, safe to hand to another goroutine.
func (h *GPUSamples) Clone() GPUSamples {
	c := GPUSamples{Last: h.Last, Util: map[string][]float64{}, Mem: map[string][]float64{}}
	for k, v := range h.Util {
		c.Util[k] = append([]float64(nil), v...)
	}
	for k, v := range h.Mem {
		c.Mem[k] = append([]float64(nil), v...)
	}
	return c
}

// DeviceKey names a device across samples: its UUID, else its index.
func DeviceKey(d gpu.Device) string {
	if d.UUID != "" {
		return d.UUID
	}
	return fmt.Sprint(d.Index)
}
