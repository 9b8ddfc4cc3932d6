package report

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gpucanary/gpucanary/monitor"
	"github.com/gpucanary/gpucanary/monitor/jobend"
)

func u32(v uint32) *uint32 { return &v }

// TestJobMarkdown: the job's report tells one row a minute per GPU from
// its samples (mean and most utilisation, the reasons seen that
// minute), keeps only the events within EventsAround of the end, oldest
// first, and writes what came from the history and the process table
// escaped, as the rest of the bundle does: a message holding HTML or a
// command holding backticks shows as written.
func TestJobMarkdown(t *testing.T) {
	end := time.Date(2026, 11, 29, 4, 30, 0, 0, time.UTC)
	ev := monitor.Event{Time: end, Kind: monitor.KindJobEnded, PID: 42, Message: "train.py <img src=x onerror=alert(1)> crashed",
		Job: &monitor.JobEnd{End: jobend.End{How: jobend.Crashed}, PID: 42, Command: []string{"python", "train.py", "--tag=`id`"},
			Started: end.Add(-time.Hour), RunSeconds: 3600}}
	rec := &monitor.JobRecord{Ended: ev, SampleSeconds: 2, Driver: "550.54.15", CUDADriver: "12.4", GPUNames: map[int]string{0: "A100"}}
	for i, x := range []struct {
		at      time.Duration
		util    uint32
		reasons []string
	}{
		{-90 * time.Second, 80, nil}, {-80 * time.Second, 100, []string{"sw_power_cap"}}, {-20 * time.Second, 10, []string{"hw_slowdown"}},
	} {
		rec.Samples = append(rec.Samples, monitor.JobSample{Time: end.Add(x.at), GPU: 0, UtilPercent: u32(x.util), MemoryUsedBytes: uint64(i+1) << 30,
			MemoryTotalBytes: 4 << 30, Reasons: x.reasons})
	}
	history := []monitor.Event{ // newest first, as the store gives them
		{Time: end.Add(6 * time.Minute), Kind: monitor.KindGPUStateChanged, Message: "too late"},
		ev,
		{Time: end.Add(-time.Minute), Kind: monitor.KindGPUStateChanged, Message: "GPU 0 fell off the bus"},
		{Time: end.Add(-10 * time.Minute), Kind: monitor.KindGPUStateChanged, Message: "too early"},
	}
	b := JobBundle{Time: end.Add(time.Hour), Version: "test", PID: 42, Record: rec, Events: EventsNear(history, end)}
	if len(b.Events) != 2 || b.Events[0].Message != "GPU 0 fell off the bus" {
		t.Fatalf("events near the end: %+v", b.Events)
	}
	dir := filepath.Join(t.TempDir(), "job")
	if err := WriteJob(dir, b); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(filepath.Join(dir, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	md := string(raw)
	for _, want := range []string{
		"# What happened to train.py (PID 42)",
		"**crashed.** train.py \\<img src=x onerror=alert(1)> crashed",
		"- Command: `` python train.py --tag=`id` ``",
		"- Ran: 1h00m",
		"| 04:28:30 | 0 | 90 / 100 | 2.0 GiB (50 %) | n/a | n/a | sw_power_cap |",
		"| 04:29:30 | 0 | 10 / 10 | 3.0 GiB (75 %) | n/a | n/a | hw_slowdown |",
		"| 04:29:00 | GPU_STATE_CHANGED | GPU 0 fell off the bus |",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("README.md lacks %q:\n%s", want, md)
		}
	}
	if strings.Contains(md, "too late") || strings.Contains(md, "too early") {
		t.Errorf("events beyond 5 minutes of the end:\n%s", md)
	}
	if err := WriteJob(dir, b); err == nil || !strings.Contains(err.Error(), "already holds files") {
		t.Errorf("a second write into the same folder: %v", err)
	}
}
