//go:build linux

package gpu

import (
	"os"
	"path/filepath"
	"testing"
)

func TestRuntimeSuspended(t *testing.T) {
	root := t.TempDir()
	for bus, status := range map[string]string{"0000:01:00.0": "suspended\n", "0000:02:00.0": "active\n", "0000:03:00.0": "suspending\n"} {
		dir := filepath.Join(root, "bus", "pci", "devices", bus, "power")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "runtime_status"), []byte(status), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		bus  string
		want bool
	}{
		{"0000:01:00.0", true},
		{"0000:02:00.0", false},
		{"0000:03:00.0", false},
		{"0000:04:00.0", false}, // no file: awake
		{"", false},
		{"../../../0000:01:00.0", false},
	}
	for _, tt := range tests {
		t.Run(tt.bus, func(t *testing.T) {
			if got := runtimeSuspended(root, tt.bus); got != tt.want {
				t.Errorf("runtimeSuspended(%q) = %v, want %v", tt.bus, got, tt.want)
			}
		})
	}
}
