//go:build linux

package inspect

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/gpucanary/gpucanary/monitor/finding"
	"github.com/gpucanary/gpucanary/monitor/gpu"
	"github.com/gpucanary/gpucanary/monitor/health"
	"github.com/gpucanary/gpucanary/monitor/pyenv"
	"github.com/gpucanary/gpucanary/monitor/pyenv/envsearch"
)

// debianTorch skips, saying why, unless this machine has Debian's
// python3-torch in an externally managed /usr.
func debianTorch(t *testing.T) {
	t.Helper()
	for _, p := range []string{"/usr/lib/python3/dist-packages/torch/__init__.py", "/usr/lib/python3.11/EXTERNALLY-MANAGED"} {
		if _, err := os.Stat(p); err != nil {
			t.Skipf("SKIPPED: no Debian python3-torch in an externally managed /usr here (%v): apt install python3-torch python3.11 to run this test", err)
		}
	}
}

// TestSystemTorchIsReportedNotJudged: Debian's python3-torch in /usr (a
// CPU build) on an A100. Found by discovery, it is reported as a note
// and fails nothing; named, it is an error; either way no finding gives
// a pip command, and each says the repair is apt's or a venv's.
func TestSystemTorchIsReportedNotJudged(t *testing.T) {
	debianTorch(t)
	g := gpu.State{Driver: "550.54.15", CUDADriver: "12.4", Devices: []gpu.Device{{Name: "NVIDIA A100-SXM4-40GB", ComputeCapability: "8.0"}}}
	for _, tc := range []struct {
		via  string
		want finding.Severity
	}{
		{"system", finding.SeverityInfo},
		{"argument", finding.SeverityError},
	} {
		t.Run(tc.via, func(t *testing.T) {
			rep := InspectOne(context.Background(), nil, envsearch.Found{Path: "/usr", Via: tc.via}, g, health.Options{})
			if rep.Env == nil || pyenv.DistroManaged(rep.Env) != "/usr/lib/python3/dist-packages" {
				t.Fatalf("/usr's torch is not read as the distribution's: %+v", rep.Env)
			}
			var cpu *finding.Finding
			for i, f := range rep.Findings {
				if strings.Contains(f.Fix, "pip") {
					t.Errorf("%s gives a pip command for the system's Python: %s", f.Code, f.Fix)
				}
				if f.Code == finding.CodeTorchCPUBuild {
					cpu = &rep.Findings[i]
				}
			}
			if cpu == nil || cpu.Severity != tc.want || !strings.Contains(cpu.Message, "distribution's package") {
				t.Fatalf("TORCH_CPU_BUILD = %+v; want %s saying the torch is the distribution's", cpu, tc.want)
			}
			if tc.via != "argument" && finding.Worst(rep.Findings) != finding.SeverityInfo {
				t.Errorf("found by discovery, /usr's worst finding is %s: %+v", finding.Worst(rep.Findings), rep.Findings)
			}
		})
	}
}
