//go:build linux

// This file reads a GPU's PCI runtime power state from sysfs, so that a
// suspended GPU can be reported without an NVML query that would wake it.

package gpu

import (
	"os"
	"path/filepath"
	"strings"
)

// runtimeSuspended reports whether the PCI device busID (pciBusID's form) under
// sysfsRoot is in the "suspended" runtime power state. A missing or
// unreadable file means the kernel does not manage its power: awake.
func runtimeSuspended(sysfsRoot, busID string) bool {
	if busID == "" || strings.ContainsAny(busID, `/\`) || busID == "." || busID == ".." {
		return false
	}
	data, err := os.ReadFile(filepath.Join(sysfsRoot, "bus", "pci", "devices", busID, "power", "runtime_status"))
	return err == nil && strings.TrimSpace(string(data)) == "suspended"
}
