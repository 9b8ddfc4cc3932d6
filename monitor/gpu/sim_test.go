package gpu

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

const a100 = `{"driver": "550.54.15", "cuda_driver": "12.4",
 "devices": [{"name": "NVIDIA A100-SXM4-40GB", "uuid": "GPU-0000", "compute_capability": "8.0",
              "memory_total_bytes": 42949672960,
              "processes": [{"pid": 1234, "used_memory_bytes": 2147483648, "sm_percent": 87},
                            {"pid": 99, "used_memory_bytes": null, "type": "graphics"}]}]}`

func TestParseScenario(t *testing.T) {
	st, err := ParseScenario([]byte(a100))
	if err != nil {
		t.Fatal(err)
	}
	if !st.Simulated || !st.HasDriver() || st.Driver != "550.54.15" || st.CUDADriver != "12.4" || len(st.Devices) != 1 {
		t.Fatalf("state = %+v", st)
	}
	d := st.Devices[0]
	if d.MemoryUsedBytes != 2147483648 || len(d.Processes) != 2 || *d.Processes[0].SMPercent != 87 || d.Processes[0].Type != "compute" {
		t.Errorf("device = %+v", d)
	}
	if d.Processes[1].UsedMemoryBytes != nil || d.Processes[1].Type != "graphics" {
		t.Errorf("n/a memory process = %+v", d.Processes[1])
	}

	none, err := ParseScenario([]byte(`{"devices": []}`))
	if err != nil || none.HasDriver() {
		t.Errorf("no-driver scenario = %+v, %v", none, err)
	}
	for name, bad := range map[string]string{
		"not json":          `{"devices": [`,
		"unknown field":     `{"devices": [], "drivr": "1"}`,
		"devices no driver": `{"devices": [{"name": "x"}]}`,
		"bad pid":           `{"driver": "1", "devices": [{"name": "x", "processes": [{"pid": 0}]}]}`,
		"bad type":          `{"driver": "1", "devices": [{"name": "x", "processes": [{"pid": 5, "type": "weird"}]}]}`,
		"no name":           `{"driver": "1", "devices": [{}]}`,
	} {
		if _, err := ParseScenario([]byte(bad)); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

func TestSimReReadsOnChange(t *testing.T) {
	path := filepath.Join(t.TempDir(), "gpu.json")
	write := func(s string, at time.Time) {
		if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
		os.Chtimes(path, at, at)
	}
	now := time.Now()
	write(a100, now)
	b := Open(Options{SimFile: path})
	defer b.Close()
	st := b.Snapshot(context.Background())
	if st.Source != "sim:"+path || len(st.Devices[0].Processes) != 2 {
		t.Fatalf("first = %+v", st)
	}
	// Callers may change what they get without changing the backend's copy.
	st.Devices[0].Processes[0].PID = 1
	if again := b.Snapshot(context.Background()); again.Devices[0].Processes[0].PID != 1234 {
		t.Error("snapshot shares memory with the backend")
	}

	// The job leaves the GPU.
	write(strings.Replace(a100, `{"pid": 1234, "used_memory_bytes": 2147483648, "sm_percent": 87},`, "", 1), now.Add(time.Second))
	if got := b.Snapshot(context.Background()); len(got.Devices[0].Processes) != 1 {
		t.Errorf("after change: %+v", got.Devices[0].Processes)
	}
	// A broken file is shown, not hidden behind the last good state.
	write(`{"devices": [`, now.Add(2*time.Second))
	if got := b.Snapshot(context.Background()); got.Error == "" || !strings.Contains(got.Error, path) || got.HasDriver() || !got.Simulated {
		t.Errorf("malformed: %+v", got)
	}
	os.Remove(path)
	if got := b.Snapshot(context.Background()); got.Error == "" || !got.Simulated {
		t.Errorf("missing: %+v", got)
	}
}

func FuzzParseScenario(f *testing.F) {
	f.Add([]byte(a100))
	f.Add([]byte(`{"devices": []}`))
	f.Add([]byte(`{"driver": "1", "devices": [{"name": "x", "processes": [{"pid": 5, "used_memory_bytes": null}]}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		st, err := ParseScenario(data)
		if err != nil {
			return
		}
		if !st.Simulated || st.Devices == nil {
			t.Fatalf("parsed state not marked simulated or nil devices: %+v", st)
		}
		for _, d := range st.Devices {
			for _, p := range d.Processes {
				if p.PID <= 0 || p.Type == "" {
					t.Fatalf("bad process %+v", p)
				}
			}
		}
	})
}
