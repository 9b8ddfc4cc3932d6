package pyenv

import (
	"github.com/gpucanary/gpucanary/monitor/pyenv/pyspec"
	"maps"
	"testing"
)

// TestMarkerEnv: the marker variables an environment is judged by come
// from its layout, this machine's architecture and its Python; the
// others are unknown.
func TestMarkerEnv(t *testing.T) {
	defer func(a string) { hostArch = a }(hostArch)
	tests := []struct {
		arch   string
		layout Layout
		python string
		want   pyspec.Env
	}{
		{"amd64", LayoutPOSIX, "3.11", pyspec.Env{"os_name": "posix", "sys_platform": "linux", "platform_system": "Linux", "platform_machine": "x86_64", "python_version": "3.11", "extra": ""}},
		{"arm64", LayoutPOSIX, "3.12", pyspec.Env{"os_name": "posix", "sys_platform": "linux", "platform_system": "Linux", "platform_machine": "aarch64", "python_version": "3.12", "extra": ""}},
		{"amd64", LayoutWindows, "3.11", pyspec.Env{"os_name": "nt", "sys_platform": "win32", "platform_system": "Windows", "platform_machine": "AMD64", "python_version": "3.11", "extra": ""}},
		{"arm64", LayoutWindows, "", pyspec.Env{"os_name": "nt", "sys_platform": "win32", "platform_system": "Windows", "platform_machine": "ARM64", "extra": ""}},
		{"riscv64", LayoutPOSIX, "3.11", pyspec.Env{"os_name": "posix", "sys_platform": "linux", "platform_system": "Linux", "python_version": "3.11", "extra": ""}},
	}
	for _, tt := range tests {
		hostArch = tt.arch
		got := (&Env{Layout: tt.layout, Python: tt.python}).MarkerEnv()
		if !maps.Equal(got, tt.want) {
			t.Errorf("%s %s %s: MarkerEnv = %v, want %v", tt.arch, tt.layout, tt.python, got, tt.want)
		}
	}
	// torch's requirement does not apply on an ARM machine.
	hostArch = "arm64"
	if applies, known := pyspec.Eval(`platform_system == "Linux" and platform_machine == "x86_64"`, (&Env{Layout: LayoutPOSIX, Python: "3.11"}).MarkerEnv()); !known || applies {
		t.Errorf("torch's x86_64 marker on arm64: applies %v, known %v", applies, known)
	}
}
