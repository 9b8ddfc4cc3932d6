package gpu

import (
	"context"
	"os"
	"testing"
)

// TestOpenWithoutDriver runs the real platform backend: on a machine
// without an NVIDIA driver (this one, and CI) it must be the no-driver
// state, not a crash.
func TestOpenWithoutDriver(t *testing.T) {
	if _, err := os.Stat("/dev/nvidiactl"); err == nil {
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
