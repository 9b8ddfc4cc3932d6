package present

import (
	"encoding/json"
	"testing"
	"time"
	"unsafe"

	"github.com/gpucanary/gpucanary/app/present/presenttest"
	"github.com/gpucanary/gpucanary/monitor"
)

// TestGPUSamples keeps one point per gap, the last hour at full
// resolution, since start within LongMax points, and hands out copies the
// tray can keep writing under.
func TestGPUSamples(t *testing.T) {
	var h GPUSamples
	st := presenttest.State()
	start := time.Unix(1_000_000, 0)
	const tick = 2 * time.Second
	n := int(3 * 24 * time.Hour / tick) // three days
	for i := 0; i < n; i++ {
		at := start.Add(time.Duration(i) * tick)
		h.Add(st, at, time.Second)
		h.Add(st, at.Add(100*time.Millisecond), time.Second) // too soon: dropped
	}
	end := start.Add(time.Duration(n-1) * tick)
	ds := h.GPUs[DeviceKey(st.GPU.Devices[0])]
	if got, want := len(ds.Recent), int(RecentSpan/tick)+1; got != want {
		t.Errorf("recent: %d points, want %d", got, want)
	}
	if cap(ds.Recent) > 2*int(RecentSpan/tick)+64 {
		t.Errorf("recent holds an array of %d", cap(ds.Recent))
	}
	if len(ds.Long) >= LongMax || len(ds.Long) < LongMax/2-1 {
		t.Errorf("long: %d points", len(ds.Long))
	}
	if ds.LongWidth != 16*longWidthInit { // 3 days in 360 to 720 points: 6 to 12 minutes each
		t.Errorf("long width %v", ds.LongWidth)
	}
	if p := ds.Long[0]; p.Util != 87 || p.Temp != 61 || p.Power != 250 || p.Mem != 9<<30 || p.At != start.UnixMilli() {
		t.Errorf("first long point %+v", p)
	}
	// A span within the hour reads the recent points; since start reads
	// the long ones and then the newest, in time order, from start to now.
	if got := ds.Since(end.Add(-10 * time.Minute)); len(got) != 301 {
		t.Errorf("last 10 minutes: %d points", len(got))
	}
	all := ds.Since(h.Start)
	if all[0].At != start.UnixMilli() || all[len(all)-1].At != end.UnixMilli() || len(all) > LongMax+int(RecentSpan/tick)+1 {
		t.Errorf("since start: %d points from %v to %v", len(all), all[0].Time(), all[len(all)-1].Time())
	}
	for i := 1; i < len(all); i++ {
		if all[i].At <= all[i-1].At {
			t.Fatalf("since start: point %d at %v after %v", i, all[i].Time(), all[i-1].Time())
		}
	}
	c := h.Clone()
	ds.Recent[0].Util = 0
	if c.GPUs[DeviceKey(st.GPU.Devices[0])].Recent[0].Util != 87 {
		t.Error("Clone shares its slices")
	}
	// The link sends them as JSON: Unknown survives, NaN would not.
	b, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	var back GPUSamples
	if err := json.Unmarshal(b, &back); err != nil || len(back.GPUs[DeviceKey(st.GPU.Devices[0])].Long) != len(ds.Long) {
		t.Errorf("round trip: %v", err)
	}
}

// TestGPUSamplesUnknown: a sleeping GPU's fields are Unknown, not zero,
// and a long point over known and unknown readings is the known ones'
// mean.
func TestGPUSamplesUnknown(t *testing.T) {
	var h GPUSamples
	st := presenttest.State()
	asleep := presenttest.State()
	d := &asleep.GPU.Devices[0]
	d.Asleep, d.UtilizationGPU, d.TemperatureC, d.PowerWatts = true, nil, nil, nil
	start := time.Unix(1_000_000, 0)
	for i := 0; i < 30; i++ {
		s := st
		if i%2 == 1 {
			s = asleep
		}
		h.Add(s, start.Add(time.Duration(i)*2*time.Second), time.Second)
	}
	ds := h.GPUs["GPU-0000"]
	if p := ds.Recent[1]; p.Util != Unknown || p.Mem != Unknown || p.Temp != Unknown || p.Power != Unknown {
		t.Errorf("asleep: %+v", p)
	}
	if len(ds.Long) != 1 || ds.Long[0].Util != 87 {
		t.Errorf("long %+v", ds.Long)
	}
}

// TestProcSamples keeps each process's last minutes, forgets one gone for
// ProcSpan, and keeps at most ProcMax.
func TestProcSamples(t *testing.T) {
	var h GPUSamples
	st := presenttest.State()
	start := time.Unix(1_000_000, 0)
	for i := 0; i < 300; i++ {
		h.Add(st, start.Add(time.Duration(i)*2*time.Second), time.Second)
	}
	train, serve := ProcKey(st.Processes[0]), ProcKey(st.Processes[1])
	if got := len(h.Procs[train]); got != int(ProcSpan/(2*time.Second))+1 {
		t.Errorf("train.py: %d samples", got)
	}
	if p := h.Procs[serve][0]; p.CPU != 380 || p.Mem != 0 {
		t.Errorf("serve.py sample %+v", p)
	}
	gone := st
	gone.Processes = gone.Processes[:1]
	at := start.Add(600 * time.Second)
	for i := 0; i < 200; i++ {
		h.Add(gone, at.Add(time.Duration(i)*2*time.Second), time.Second)
	}
	if _, ok := h.Procs[serve]; ok {
		t.Error("a process gone for longer than ProcSpan is remembered")
	}
	var many monitor.State
	for i := 0; i < ProcMax+40; i++ {
		many.Processes = append(many.Processes, monitor.Process{})
		many.Processes[i].PID = 10000 + i
	}
	h.Add(many, at.Add(time.Hour), time.Second)
	if len(h.Procs) != ProcMax {
		t.Errorf("%d processes kept, want %d", len(h.Procs), ProcMax)
	}
}

// TestSinceShortHistory: with less than an hour read, any span reads the
// full-resolution points, not the coarser ones since start.
func TestSinceShortHistory(t *testing.T) {
	var h GPUSamples
	st := presenttest.State()
	start := time.Unix(1_000_000, 0)
	for i := 0; i <= 300; i++ {
		h.Add(st, start.Add(time.Duration(i)*2*time.Second), time.Second)
	}
	ds := h.GPUs["GPU-0000"]
	if len(ds.Long) == 0 {
		t.Fatal("no long points after 10 minutes")
	}
	now := start.Add(10 * time.Minute)
	for _, from := range []time.Time{now.Add(-time.Hour), h.Start, now.Add(-10 * time.Minute)} {
		if got := ds.Since(from); len(got) != 301 {
			t.Errorf("from %v: %d points, want all 301", from, len(got))
		}
	}
}

// BenchmarkGPUSamplesAdd is what the tray pays on each refresh tick for
// the charts' history, with a day of samples already kept (one GPU, two
// processes), and the memory that history holds.
func BenchmarkGPUSamplesAdd(b *testing.B) {
	var h GPUSamples
	st := presenttest.State()
	at := time.Unix(1_000_000, 0)
	for i := 0; i < int(24*time.Hour/(2*time.Second)); i++ {
		at = at.Add(2 * time.Second)
		h.Add(st, at, time.Second)
	}
	ds := h.GPUs["GPU-0000"]
	held := (cap(ds.Recent) + cap(ds.Long)) * int(unsafe.Sizeof(GPUSample{}))
	for _, p := range h.Procs {
		held += cap(p) * int(unsafe.Sizeof(ProcSample{}))
	}
	b.ReportAllocs()
	for b.Loop() {
		at = at.Add(2 * time.Second)
		h.Add(st, at, time.Second)
	}
	b.ReportMetric(float64(held)/1024, "KiB-held")
}
