package engine

import (
	"testing"
	"time"

	"github.com/gpucanary/gpucanary/monitor"
)

// TestSampleRing: the ring holds the window's worth of polls at the
// interval, bounded by maxRingRows for a tiny interval, and gives the
// newest rows oldest first once it has turned over.
func TestSampleRing(t *testing.T) {
	if n := newSampleRing(30*time.Minute, 2*time.Second).cap; n != 900 {
		t.Errorf("30 min at 2 s: %d rows", n)
	}
	if n := newSampleRing(30*time.Minute, time.Millisecond).cap; n != maxRingRows {
		t.Errorf("30 min at 1 ms: %d rows, want the bound %d", n, maxRingRows)
	}
	r := newSampleRing(5*time.Second, time.Second)
	t0 := time.Date(2026, 11, 29, 4, 0, 0, 0, time.UTC)
	for i := range 12 {
		r.add([]monitor.JobSample{{Time: t0.Add(time.Duration(i) * time.Second), GPU: 0}, {Time: t0.Add(time.Duration(i) * time.Second), GPU: 1}})
	}
	got := r.samples()
	if len(got) != 10 {
		t.Fatalf("%d samples, want 5 rows of 2", len(got))
	}
	for i, s := range got {
		if want := t0.Add(time.Duration(7+i/2) * time.Second); !s.Time.Equal(want) || s.GPU != i%2 {
			t.Errorf("sample %d = %v GPU %d, want %v GPU %d", i, s.Time, s.GPU, want, i%2)
		}
	}
}
