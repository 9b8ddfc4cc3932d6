package gpu

import (
	"os"
	"path/filepath"
	"testing"
)

// wslRoot writes a fixture root: each file in files, relative to it.
func wslRoot(t *testing.T, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for rel, content := range files {
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func TestDetectWSL(t *testing.T) {
	const (
		wsl2Kernel  = "Linux version 5.15.167.4-microsoft-standard-WSL2 (root@f9c826d3017f) (gcc (GCC) 11.2.0, GNU ld (GNU Binutils) 2.37) #1 SMP Tue Nov 5 00:21:55 UTC 2024\n"
		debianKern  = "Linux version 6.1.0-27-amd64 (debian-kernel@lists.debian.org) (gcc-12 (Debian 12.2.0-14) 12.2.0, GNU ld (GNU Binutils for Debian) 2.40) #1 SMP PREEMPT_DYNAMIC Debian 6.1.115-1 (2024-11-01)\n"
		distroName  = "Ubuntu-24.04"
		noVariables = ""
	)
	tests := []struct {
		name   string
		files  map[string]string
		distro string
		want   string
	}{
		{"a Linux machine", map[string]string{"proc/version": debianKern}, noVariables, ""},
		{"nothing readable", nil, noVariables, ""},
		{"the variable", map[string]string{"proc/version": debianKern}, distroName, "WSL_DISTRO_NAME is set"},
		{"the kernel (under sudo, no variable)", map[string]string{"proc/version": wsl2Kernel}, noVariables, "/proc/version names a Microsoft kernel"},
		{"the device (a custom kernel)", map[string]string{"proc/version": debianKern, "dev/dxg": ""}, noVariables, "/dev/dxg exists"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := wslRoot(t, tt.files)
			getenv := func(k string) string {
				if k == "WSL_DISTRO_NAME" {
					return tt.distro
				}
				return ""
			}
			if got := DetectWSL(WSLProbe{Root: root, Getenv: getenv}); got != tt.want {
				t.Errorf("DetectWSL = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestWSLLibrary(t *testing.T) {
	root := wslRoot(t, map[string]string{"usr/lib/wsl/lib/libnvidia-ml.so.1": "", "proc/version": "microsoft"})
	if got, want := WSLLibrary(WSLProbe{Root: root}), filepath.Join(root, WSLLibDir, "libnvidia-ml.so.1"); got != want {
		t.Errorf("WSLLibrary = %q, want %q", got, want)
	}
	if got := WSLLibrary(WSLProbe{Root: t.TempDir()}); got != "" {
		t.Errorf("no library in %s: WSLLibrary = %q, want none", WSLLibDir, got)
	}
}

func TestSimWSL(t *testing.T) {
	st, err := ParseScenario([]byte(`{"driver": "566.36", "cuda_driver": "12.7", "wsl": true, "devices": [{"name": "NVIDIA GeForce RTX 4090", "compute_capability": "8.9", "memory_total_bytes": 25757220864, "processes": []}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if !st.WSL || len(st.Devices) != 1 {
		t.Errorf("state = %+v, want WSL with one device", st)
	}
}
