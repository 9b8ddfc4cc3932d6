package present

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/gpucanary/gpucanary/monitor"
	"github.com/gpucanary/gpucanary/monitor/gpu"
)

// The windows' charts read the recent history of each GPU and each GPU
// process. The tray process samples it on its refresh tick whether or not
// a window is open (a few numbers every 2 s, in a bounded memory) and
// hands it to the windows process, so a window opened now shows the last
// hour, and since start. Nothing is drawn in the tray process.

// Unknown is a sample's value when the driver did not say (an asleep
// GPU, a field it does not report): a chart breaks its line there rather
// than draw a zero.
const Unknown = -1

// RecentSpan is how far back each GPU's full-resolution samples go (one
// per refresh: 1,800 at 2 s); LongMax bounds the points kept since start,
// each the mean over LongWidth, which doubles whenever they fill.
const (
	RecentSpan    = time.Hour
	LongMax       = 720
	longWidthInit = 30 * time.Second
)

// ProcSpan is how far back each process's samples go, and how long a
// process that is gone is remembered; ProcMax bounds the processes kept.
const (
	ProcSpan = 5 * time.Minute
	ProcMax  = 256
)

// GPUSample is one reading of one GPU. Values are Unknown when not said.
type GPUSample struct {
	At    int64   `json:"t"` // Unix milliseconds
	Util  float32 `json:"u"` // percent
	Mem   float32 `json:"m"` // bytes used
	Temp  float32 `json:"c"` // °C
	Power float32 `json:"p"` // W
}

// Time is when the sample was read.
func (s GPUSample) Time() time.Time { return time.UnixMilli(s.At) }

// DeviceSamples is one GPU's history: the last hour at full resolution,
// and since start at a resolution that halves as it grows.
type DeviceSamples struct {
	Recent []GPUSample `json:"recent"`
	Long   []GPUSample `json:"long"`
	// LongWidth is the time each Long point is the mean of.
	LongWidth time.Duration `json:"long_width"`
	pending   meanOf
}

// ProcSample is one reading of one process: its GPU memory (Unknown when
// the driver cannot say) and its CPU use (percent of one core).
type ProcSample struct {
	At  int64   `json:"t"`
	Mem float32 `json:"m"`
	CPU float32 `json:"c"`
}

// GPUSamples is the history the windows' charts draw: each GPU's
// readings, and each GPU process's memory and CPU.
type GPUSamples struct {
	// Start is the first sample's time: where "since start" begins.
	Start time.Time                 `json:"start"`
	Last  time.Time                 `json:"last"`
	GPUs  map[string]*DeviceSamples `json:"gpus"`
	Procs map[string][]ProcSample   `json:"procs"`
}

// Add records one reading of every GPU and GPU process of s, unless the
// last one is less than minGap old (events re-render more often than the
// refresh ticks, and the charts keep one point per tick).
func (h *GPUSamples) Add(s monitor.State, at time.Time, minGap time.Duration) {
	if !h.Last.IsZero() && at.Sub(h.Last) < minGap {
		return
	}
	if h.Start.IsZero() {
		h.Start = at
	}
	h.Last = at
	if h.GPUs == nil {
		h.GPUs = map[string]*DeviceSamples{}
	}
	for _, d := range s.GPU.Devices {
		id := DeviceKey(d)
		ds := h.GPUs[id]
		if ds == nil {
			ds = &DeviceSamples{LongWidth: longWidthInit}
			h.GPUs[id] = ds
		}
		ds.add(reading(d, at))
	}
	h.addProcs(s.Processes, at)
}

// reading is what a sample keeps of d.
func reading(d gpu.Device, at time.Time) GPUSample {
	s := GPUSample{At: at.UnixMilli(), Util: Unknown, Mem: Unknown, Temp: Unknown, Power: Unknown}
	if d.UtilizationGPU != nil {
		s.Util = float32(*d.UtilizationGPU)
	}
	if d.MemoryTotalBytes > 0 && !d.Asleep {
		s.Mem = float32(d.MemoryUsedBytes)
	}
	if d.TemperatureC != nil {
		s.Temp = float32(*d.TemperatureC)
	}
	if d.PowerWatts != nil {
		s.Power = float32(*d.PowerWatts)
	}
	return s
}

func (ds *DeviceSamples) add(s GPUSample) {
	ds.Recent = append(ds.Recent, s)
	cut := s.At - RecentSpan.Milliseconds()
	i := 0
	for i < len(ds.Recent) && ds.Recent[i].At < cut {
		i++
	}
	// Dropping from the front; append copies what is left once the
	// array is full, so the memory stays bounded.
	ds.Recent = ds.Recent[i:]
	if ds.LongWidth <= 0 {
		ds.LongWidth = longWidthInit
	}
	if ds.pending.n > 0 && s.At-ds.pending.from >= ds.LongWidth.Milliseconds() {
		ds.Long = append(ds.Long, ds.pending.mean())
		ds.pending = meanOf{}
		if len(ds.Long) >= LongMax {
			ds.Long = halve(ds.Long)
			ds.LongWidth *= 2
		}
	}
	ds.pending.add(s)
}

// Since is the points from the time from on: Long's points, then the
// recent ones after them (the newest minutes, which Long has not taken
// in yet). from older than the recent hour reads Long.
func (ds *DeviceSamples) Since(from time.Time) []GPUSample {
	ms := from.UnixMilli()
	// The recent hour alone when it reaches back to from, or holds all
	// there is (this process started less than an hour ago).
	if len(ds.Long) == 0 || len(ds.Recent) > 0 && (ds.Recent[0].At <= ms+longWidthInit.Milliseconds() || ds.Recent[0].At <= ds.Long[0].At) {
		return tail(ds.Recent, ms)
	}
	out := tail(ds.Long, ms)
	last := int64(0)
	if len(out) > 0 {
		last = out[len(out)-1].At + ds.LongWidth.Milliseconds()
	}
	return append(out, tail(ds.Recent, last)...)
}

// tail is the samples at or after ms, sharing s's array.
func tail(s []GPUSample, ms int64) []GPUSample {
	for i := range s {
		if s[i].At >= ms {
			return s[i:len(s):len(s)]
		}
	}
	return nil
}

// halve merges neighbours pairwise: half the points, each over twice the
// time.
func halve(s []GPUSample) []GPUSample {
	out := s[:0]
	for i := 0; i+1 < len(s); i += 2 {
		var m meanOf
		m.add(s[i])
		m.add(s[i+1])
		out = append(out, m.mean())
	}
	if len(s)%2 == 1 {
		out = append(out, s[len(s)-1])
	}
	return out
}

// meanOf accumulates samples for one Long point; each field is the mean
// of its known values, Unknown with none.
type meanOf struct {
	from int64
	n    int
	sum  [4]float64
	cnt  [4]int
}

func (m *meanOf) add(s GPUSample) {
	if m.n == 0 {
		m.from = s.At
	}
	m.n++
	for i, v := range [4]float32{s.Util, s.Mem, s.Temp, s.Power} {
		if v >= 0 {
			m.sum[i] += float64(v)
			m.cnt[i]++
		}
	}
}

func (m *meanOf) mean() GPUSample {
	var v [4]float32
	for i := range v {
		v[i] = Unknown
		if m.cnt[i] > 0 {
			v[i] = float32(m.sum[i] / float64(m.cnt[i]))
		}
	}
	return GPUSample{At: m.from, Util: v[0], Mem: v[1], Temp: v[2], Power: v[3]}
}

// ProcKey names a process across samples: its PID and start time (a PID
// is reused; the pair is not).
func ProcKey(p monitor.Process) string {
	return fmt.Sprintf("%d@%d", p.PID, p.StartTime.UnixMilli())
}

func (h *GPUSamples) addProcs(ps []monitor.Process, at time.Time) {
	if h.Procs == nil {
		if len(ps) == 0 {
			return
		}
		h.Procs = map[string][]ProcSample{}
	}
	ms := at.UnixMilli()
	for _, p := range ps {
		s := ProcSample{At: ms, Mem: Unknown, CPU: Unknown}
		if p.GPUMemoryBytes != nil {
			s.Mem = float32(*p.GPUMemoryBytes)
		}
		if p.Measured() {
			s.CPU = float32(p.CPUPercent)
		}
		k := ProcKey(p)
		h.Procs[k] = append(h.Procs[k], s)
	}
	cut := ms - ProcSpan.Milliseconds()
	for k, s := range h.Procs {
		i := 0
		for i < len(s) && s[i].At < cut {
			i++
		}
		if i == len(s) {
			delete(h.Procs, k) // gone for ProcSpan
			continue
		}
		h.Procs[k] = s[i:]
	}
	if len(h.Procs) > ProcMax { // the processes seen longest ago go
		keys := slices.Collect(maps.Keys(h.Procs))
		last := func(k string) int64 { s := h.Procs[k]; return s[len(s)-1].At }
		slices.SortFunc(keys, func(a, b string) int { return cmp.Or(cmp.Compare(last(a), last(b)), cmp.Compare(a, b)) })
		for _, k := range keys[:len(keys)-ProcMax] {
			delete(h.Procs, k)
		}
	}
}

// Clone is a deep copy, safe to hand to another goroutine.
func (h *GPUSamples) Clone() GPUSamples {
	c := GPUSamples{Start: h.Start, Last: h.Last, GPUs: map[string]*DeviceSamples{}, Procs: map[string][]ProcSample{}}
	for k, v := range h.GPUs {
		d := *v
		d.Recent, d.Long = append([]GPUSample(nil), v.Recent...), append([]GPUSample(nil), v.Long...)
		c.GPUs[k] = &d
	}
	for k, v := range h.Procs {
		c.Procs[k] = append([]ProcSample(nil), v...)
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
