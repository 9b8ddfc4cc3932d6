//go:build linux

// This file reads a GPU's PCI runtime power state from sysfs, so that a
// suspended GPU can be reported without an NVML query that would wake it.

package gpu

import (
	"os"
	"path/filepath"
	"strings"
)

// sysfsBusID turns NVML's bus id ("00000000:07:00.0", upper-case hex, an
// 8-digit domain) into the name Linux gives the device in
// /sys/bus/pci/devices ("0000:07:00.0").
func sysfsBusID(nvmlBusID string) string {
	s := strings.ToLower(strings.TrimSpace(nvmlBusID))
	if dom, rest, ok := strings.Cut(s, ":"); ok && len(dom) == 8 && strings.HasPrefix(dom, "0000") {
		s = dom[4:] + ":" + rest
	}
	return s
}

// runtimeSuspended reports whether the PCI device busID (sysfs form) under
// sysfsRoot is in the "suspended" runtime power state. A missing or
// unreadable file means the kernel does not manage its power: awake.
func runtimeSuspended(sysfsRoot, busID string) bool {
	if busID == "" || strings.ContainsAny(busID, `/\`) || busID == "." || busID == ".." {
		return false
	}
	data, err := os.ReadFile(filepath.Join(sysfsRoot, "bus", "pci", "devices", busID, "power", "runtime_status"))
	return err == nil && strings.TrimSpace(string(data)) == "suspended"
}
