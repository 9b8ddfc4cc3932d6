//go:build linux

package report

import (
	"os"
	"strings"
)

// readHost reads the kernel's release and the distribution's name.
func readHost() Host {
	var h Host
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		h.Kernel = strings.TrimSpace(string(b))
	}
	if b, err := os.ReadFile("/etc/os-release"); err == nil {
		h.System = osReleaseName(string(b))
	}
	return h
}

// osReleaseName is PRETTY_NAME from an os-release file.
func osReleaseName(osRelease string) string {
	name := ""
	for _, line := range strings.Split(osRelease, "\n") {
		if v, ok := strings.CutPrefix(line, "PRETTY_NAME="); ok {
			name = strings.Trim(v, `"`)
		}
	}
	return name
}
