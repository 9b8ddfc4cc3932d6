package report

import (
	"strings"
	"testing"
)

// TestWindowsHost: Windows' version in words, with Windows 11 named as
// such although its registry says "Windows 10".
func TestWindowsHost(t *testing.T) {
	for _, tc := range []struct {
		name                string
		major, minor, build uint32
		cv                  currentVersion
		want                string
	}{
		{"Windows 10 22H2", 10, 0, 19045, currentVersion{"Windows 10 Pro", "22H2", "3803"}, "windows amd64, Windows 10 Pro 22H2, version 10.0 build 19045.3803"},
		{"Windows 11 23H2", 10, 0, 22631, currentVersion{"Windows 10 Pro", "23H2", "3880"}, "windows amd64, Windows 11 Pro 23H2, version 10.0 build 22631.3880"},
		{"Windows 11 named right already", 10, 0, 26100, currentVersion{"Windows 11 Home", "24H2", "2314"}, "windows amd64, Windows 11 Home 24H2, version 10.0 build 26100.2314"},
		{"nothing in the registry", 10, 0, 19041, currentVersion{}, "windows amd64, Windows, version 10.0 build 19041"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := windowsHost(tc.major, tc.minor, tc.build, tc.cv)
			h.OS, h.Arch = "windows", "amd64"
			if got := h.describe(); got != tc.want {
				t.Errorf("describe = %q, want %q", got, tc.want)
			}
		})
	}
}

// TestEnvInfoOnWindows: the bundle of a Windows machine says its version
// and build and the nvml.dll the driver was read from.
func TestEnvInfoOnWindows(t *testing.T) {
	b := bundle()
	b.Host = windowsHost(10, 0, 22631, currentVersion{"Windows 10 Pro", "23H2", "3880"})
	b.Host.OS, b.Host.Arch, b.Host.Hostname = "windows", "amd64", "box"
	b.Check.GPU.Simulated, b.Check.GPU.Source, b.Check.GPU.Library = false, "nvml", `C:\Windows\System32\nvml.dll`
	got := envInfo(b)
	for _, want := range []string{
		"- OS: windows amd64, Windows 11 Pro 23H2, version 10.0 build 22631.3880\n",
		"- NVIDIA driver: 550.54.15 (read from C:\\Windows\\System32\\nvml.dll)\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("env_info.md lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "Kernel") || strings.Contains(got, "Debian") {
		t.Errorf("env_info.md of a Windows machine speaks of Linux:\n%s", got)
	}
}

// TestEnvInfoDerivedCUDA: a CUDA version the driver did not give is
// written as what it is, a lower bound derived from the driver version.
func TestEnvInfoDerivedCUDA(t *testing.T) {
	b := bundle()
	b.Check.GPU.Driver, b.Check.GPU.CUDADriver, b.Check.GPU.CUDADriverDerived = "535.104.05", "", "12.2"
	want := "- CUDA driver version: not given by the driver; at least 12.2, derived from the driver version\n"
	if got := envInfo(b); !strings.Contains(got, want) {
		t.Errorf("env_info.md lacks %q:\n%s", want, got)
	}
}
