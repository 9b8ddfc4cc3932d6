package engine

import (
	"strings"
	"testing"
	"time"

	"github.com/gpucanary/gpucanary/monitor/finding"
)

// TestStallDoing: what a stalled job's processes do is told from their
// states where the kernel gives them, a worker waiting on I/O first, and
// from their CPU time alone where it does not (Windows).
func TestStallDoing(t *testing.T) {
	tests := []struct {
		name   string
		states []string
		rate   float64
		want   string
	}{
		{"a worker waits on the disk", []string{"S", "D"}, 0, "waiting on I/O (state D)"},
		{"running", []string{"S", "R"}, 0.1, "busy on the CPU"},
		{"CPU time rising while asleep at the scan", []string{"S"}, 1.5, "busy on the CPU (1.5 cores)"},
		{"sleeping", []string{"S", "S"}, 0.01, "is sleeping and uses no CPU"},
		{"Windows, idle", nil, 0, "whether it waits on I/O is not visible here"},
		{"Windows, busy", nil, 0.9, "busy on the CPU (0.9 cores)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := stallDoing(tt.states, tt.rate, 42); !strings.Contains(got, tt.want) {
				t.Errorf("stallDoing = %q, want %q in it", got, tt.want)
			}
		})
	}
}

// TestStallNeedsMemoryAndArm: an idle GPU is a stall only for a job that
// computed for the arm time (summed over polls, through short dips) and
// holds 1 GiB or more; the driver saying nothing of utilisation breaks a
// run of idle polls.
func TestStallNeedsMemoryAndArm(t *testing.T) {
	u := func(v uint32) *uint32 { return &v }
	j := &job{pid: 7, cmdline: []string{"python", "train.py"}}
	var w stallWatch
	t0 := time.Unix(1e9, 0)
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	big := func(util *uint32) *jobSample {
		return &jobSample{held: 2 << 30, heldKnown: true, gpus: []int{0}, util: util}
	}
	judge := func(s int, smp *jobSample) bool {
		_, ok := w.judge(at(s), j, smp, 3*time.Second, 3*time.Second, maxPollGap)
		return ok
	}
	// 2 s at load, a dip, 1 s more: armed at 3 s of computing
	for s, v := range []uint32{90, 90, 90, 30, 90} {
		judge(s, big(u(v)))
	}
	if !w.armed {
		t.Fatalf("not armed after 3 s at load over 5 polls: %+v", w)
	}
	// idle but holding little: no stall however long
	for s := 5; s < 10; s++ {
		if judge(s, &jobSample{held: 100 << 20, heldKnown: true, util: u(0)}) {
			t.Fatal("a stall of a job holding 100 MiB")
		}
	}
	// idle, holding 2 GiB; the driver's silence at 12 s starts the run again
	for s := 10; s <= 11; s++ {
		if judge(s, big(u(0))) {
			t.Fatalf("stalled at %d s, within the window", s)
		}
	}
	judge(12, big(nil))
	for s := 13; s <= 16; s++ {
		got := judge(s, big(u(1)))
		if want := s >= 16; got != want {
			t.Errorf("at %d s: stalled %v, want %v", s, got, want)
		}
	}
	f, _ := w.judge(at(17), j, big(u(0)), 3*time.Second, 3*time.Second, maxPollGap)
	if f.Code != finding.CodeJobStalled || !strings.Contains(f.Message, "python train.py (PID 7) has held 2.0 GiB") {
		t.Errorf("finding = %+v", f)
	}
	// A gap in the polls (a suspended machine) is not seen as idle: the
	// run starts again after it.
	if judge(17+3600, big(u(0))) {
		t.Error("stalled across an hour nothing was seen in")
	}
}

// TestStallCPURate: a stalled job is busy on the CPU when its processes'
// CPU time rises between two polls; a worker that joins the job with
// the CPU time it already had is not CPU used.
func TestStallCPURate(t *testing.T) {
	u := func(v uint32) *uint32 { return &v }
	j := &job{pid: 7, cmdline: []string{"python", "train.py"}}
	t0 := time.Unix(1e9, 0)
	sample := func(util uint32, cpu map[int]float64) *jobSample {
		return &jobSample{held: 2 << 30, heldKnown: true, gpus: []int{0}, util: u(util), states: []string{"S"}, cpu: cpu}
	}
	for _, tc := range []struct {
		name      string
		last, now map[int]float64
		want      string
	}{
		{"its CPU time rises by two cores", map[int]float64{7: 100}, map[int]float64{7: 104}, "busy on the CPU (2.0 cores)"},
		{"a worker joins with its CPU time", map[int]float64{7: 100}, map[int]float64{7: 100, 8: 500}, "is sleeping"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var w stallWatch
			for s := 0; s <= 4; s++ {
				w.judge(t0.Add(time.Duration(s)*time.Second), j, sample(90, tc.last), time.Second, time.Second, maxPollGap)
			}
			w.judge(t0.Add(5*time.Second), j, sample(0, tc.last), time.Second, time.Second, maxPollGap)
			f, ok := w.judge(t0.Add(7*time.Second), j, sample(0, tc.now), time.Second, time.Second, maxPollGap)
			if !ok || !strings.Contains(f.Message, tc.want) {
				t.Errorf("stalled %v: %q, want %q in it", ok, f.Message, tc.want)
			}
		})
	}
}
