//go:build windows

package gpu

import (
	"os"
	"path/filepath"
)

// nvidiaDriverPresent reports whether an NVIDIA driver's nvml.dll is where
// the backend looks for it.
func nvidiaDriverPresent() bool {
	for _, p := range []string{
		filepath.Join(os.Getenv("SystemRoot"), "System32", "nvml.dll"),
		filepath.Join(os.Getenv("ProgramFiles"), "NVIDIA Corporation", "NVSMI", "nvml.dll"),
	} {
		if _, err := os.Stat(p); err == nil {
			return true
		}
	}
	return false
}
