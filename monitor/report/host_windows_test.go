//go:build windows

package report

import (
	"strings"
	"testing"
)

// TestWindowsReadHost reads this Windows (wine's, under make
// test-windows): its name, version and build, and never a Linux
// distribution's name (under wine, /etc/os-release is the Linux host's).
func TestWindowsReadHost(t *testing.T) {
	h := ReadHost()
	t.Logf("host: %s", h.describe())
	if !strings.Contains(h.System, "Windows") || h.Version == "" || h.Build == "" || h.Kernel != "" {
		t.Errorf("ReadHost = %+v, want a Windows name, version and build", h)
	}
	for _, linux := range []string{"Debian", "Ubuntu", "Linux"} {
		if strings.Contains(h.describe(), linux) {
			t.Errorf("ReadHost says %q on Windows: %s", linux, h.describe())
		}
	}
}
