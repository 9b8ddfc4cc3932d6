package gpu

import (
	"context"
	"strings"
	"testing"
)

// TestOpenWithoutDriver runs the real platform backend: on a machine
// without an NVIDIA driver (this one, and CI) it must be the no-driver
// state, not a crash.
func TestOpenWithoutDriver(t *testing.T) {
	if nvidiaDriverPresent() {
		t.Skip("this machine has an NVIDIA driver")
	}
	b := Open(Options{})
	if b == nil {
		t.Fatal("Open returned nil")
	}
	st := b.Snapshot(context.Background())
	if st.HasDriver() || st.Error == "" || st.Source != "none" || st.Simulated || st.Devices == nil {
		t.Errorf("state without a driver = %s", dump(st))
	}
	if err := b.Close(); err != nil {
		t.Error(err)
	}
}

// TestOpenWithDriver runs the real NVML backend where a driver is present
// (make test-gpu carries this test's binary to a Linux GPU machine, make
// gpu-kit-windows to a Windows one): every device must be read whole (name,
// UUID, bus id, compute capability, memory, and utilization unless
// asleep), with no error, on every snapshot.
func TestOpenWithDriver(t *testing.T) {
	if !nvidiaDriverPresent() {
		t.Skip("no NVIDIA driver on this machine")
	}
	b := Open(Options{})
	defer b.Close()
	for i := range 3 {
		st := b.Snapshot(context.Background())
		t.Logf("snapshot %d: %s", i, dump(st))
		if !st.HasDriver() || st.Source != "nvml" || st.Simulated || st.Error != "" || st.CUDADriver == "" || len(st.Devices) == 0 {
			t.Fatalf("state with a driver = %s", dump(st))
		}
		for _, d := range st.Devices {
			if d.Error != "" || d.Name == "" || !strings.HasPrefix(d.UUID, "GPU-") || d.PCIBusID == "" ||
				!strings.Contains(d.ComputeCapability, ".") || d.MemoryTotalBytes == 0 || d.MemoryUsedBytes > d.MemoryTotalBytes {
				t.Errorf("device %d = %s", d.Index, dump(d))
			}
			if !d.Asleep && (d.UtilizationGPU == nil || d.TemperatureC == nil) {
				t.Errorf("device %d is awake but has no utilization or temperature: %s", d.Index, dump(d))
			}
		}
	}
}

// BenchmarkSnapshotNVML measures one snapshot of the real driver, which the
// engine takes every refresh: it must stay far below the 2 s interval.
func BenchmarkSnapshotNVML(b *testing.B) {
	if !nvidiaDriverPresent() {
		b.Skip("no NVIDIA driver on this machine")
	}
	be := Open(Options{})
	defer be.Close()
	ctx := context.Background()
	for b.Loop() {
		if st := be.Snapshot(ctx); !st.HasDriver() {
			b.Fatalf("no driver: %s", st.Error)
		}
	}
}
