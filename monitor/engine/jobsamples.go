package engine

import (
	"slices"
	"time"

	"github.com/gpucanary/gpucanary/monitor"
	"github.com/gpucanary/gpucanary/monitor/gpu"
)

// A job's samples: at each process poll that sees it, one reading of each
// GPU it holds memory on, kept in a ring of the last
// monitor.JobSampleWindow, so that the record of its end
// (`gpucanary report --job`) says how that end came.

// maxRingRows bounds a ring whatever the poll interval (a test's 10 ms
// included): one row per poll, 3600 rows (an hour at a 2 s poll is 1800).
//
// The memory this costs: a row is a JobSample per GPU the job uses
// (about 100 bytes with its pointers and its reasons), so at the default
// 2 s poll a one-GPU job's ring holds 900 rows, about 90 KiB, and at
// most 3600 rows × GPUs; it is freed when the job ends.
const maxRingRows = 3600

// sampleRing is a job's newest polls' samples, oldest first once read.
type sampleRing struct {
	rows [][]monitor.JobSample
	next int // where the next row goes once the ring is full
	cap  int
}

// newSampleRing holds window's worth of polls at interval.
func newSampleRing(window, interval time.Duration) *sampleRing {
	n := maxRingRows
	if interval > 0 {
		n = min(maxRingRows, max(1, int((window+interval-1)/interval)))
	}
	return &sampleRing{cap: n}
}

// add keeps one poll's row, dropping the oldest when full.
func (r *sampleRing) add(row []monitor.JobSample) {
	if len(r.rows) < r.cap {
		r.rows = append(r.rows, row)
		return
	}
	r.rows[r.next] = row
	r.next = (r.next + 1) % r.cap
}

// samples are the rows kept, oldest first, as one list.
func (r *sampleRing) samples() []monitor.JobSample {
	var out []monitor.JobSample
	for i := range r.rows {
		out = append(out, r.rows[(r.next+i)%len(r.rows)]...)
	}
	return out
}

// gpuSample is one GPU's reading at now for a job's row.
func gpuSample(d gpu.Device, now time.Time) monitor.JobSample {
	s := monitor.JobSample{Time: now, GPU: d.Index, UtilPercent: d.UtilizationGPU, MemoryUsedBytes: d.MemoryUsedBytes,
		MemoryTotalBytes: d.MemoryTotalBytes, PowerWatts: d.PowerWatts, TemperatureC: d.TemperatureC}
	for _, r := range d.ClocksEventReasons {
		if r != gpu.ReasonGPUIdle {
			s.Reasons = append(s.Reasons, r)
		}
	}
	return s
}

// jobGPUs are the indexes of the devices in g the rows' processes are on.
func jobGPUs(rows []*monitor.Process) []int {
	var out []int
	for _, r := range rows {
		for _, i := range r.GPUs {
			if !slices.Contains(out, i) {
				out = append(out, i)
			}
		}
	}
	slices.Sort(out)
	return out
}
