package health

import (
	"testing"

	"github.com/gpucanary/gpucanary/monitor/finding"
	"github.com/gpucanary/gpucanary/monitor/gpu"
	"github.com/gpucanary/gpucanary/monitor/pyenv/pyenvtest"
)

// TestRulesOnDerivedDriverCUDA: a driver that gave its version but not
// its CUDA version (NVML's SystemGetCudaDriverVersion failed, a scenario
// without cuda_driver) is judged by its version on Linux's floors. A
// verdict drawn from the derived CUDA version, a lower bound, never says
// "torch will fail" where the driver may run the build: a 525.60.13
// driver runs every CUDA 12.x build (audit issue 2), and what its version
// cannot settle is a warning without a fix, not a downgrade.
func TestRulesOnDerivedDriverCUDA(t *testing.T) {
	a100 := func(driver string) gpu.State {
		return gpu.State{Driver: driver, Devices: []gpu.Device{device("NVIDIA A100-SXM4-40GB", "8.0")}}
	}
	tests := []struct {
		name string
		gpu  gpu.State
		spec pyenvtest.Spec
		want []want
	}{
		{
			name: "cu121 on 525.60.13 runs through minor-version compatibility", gpu: a100("525.60.13"),
			spec: pyenvtest.Spec{Torch: &pyenvtest.Torch{DistVersion: "2.5.1+cu121", CUDA: "12.1", Installer: "pip"}},
			want: []want{{code: finding.CodeDriverTooOld, severity: finding.SeverityWarning,
				message: "supports CUDA 12.0 (derived from driver 525.60.13, a lower bound): it runs through CUDA minor-version compatibility",
				fix:     "torch==2.5.1+cu118"}},
		},
		{
			name: "cu126 on 525.60.13", gpu: a100("525.60.13"),
			spec: pyenvtest.Spec{Torch: &pyenvtest.Torch{DistVersion: "2.7.1+cu126", CUDA: "12.6", Installer: "pip"}},
			want: []want{{code: finding.CodeDriverTooOld, severity: finding.SeverityWarning, message: "it meets their floor, 525.60.13", fix: "torch==2.7.1+cu118"}},
		},
		{
			name: "cu121 below the 12.x floor will fail", gpu: a100("520.61.05"),
			spec: pyenvtest.Spec{Torch: &pyenvtest.Torch{DistVersion: "2.5.1+cu121", CUDA: "12.1", Installer: "pip"}},
			want: []want{{code: finding.CodeDriverTooOld, severity: finding.SeverityError, message: "older than 525.60.13, their minor-version compatibility floor",
				fix: "torch==2.5.1+cu118"}},
		},
		{
			// 620.10 is newer than every row: it may support CUDA 13.5 in
			// full, or not. (Issue 29: 590.44.01, the example until the
			// tables had CUDA 13.1–13.3, is 13.1's floor now.)
			name: "a build newer than the derived version runs, unconfirmed in full", gpu: a100("620.10"),
			spec: pyenvtest.Spec{Torch: &pyenvtest.Torch{DistVersion: "2.16.0+cu135", CUDA: "13.5", Installer: "pip"}},
			want: []want{
				{code: finding.CodeDriverTooOld, severity: finding.SeverityWarning, message: "whether the driver supports CUDA 13.5 in full could not be confirmed", nofix: true},
				{code: finding.CodeTorchUnknownRelease, severity: finding.SeverityWarning, message: "newer than GPU Canary's release table", nofix: true},
			},
		},
		{
			name: "a build of a CUDA major the driver's version cannot settle", gpu: a100("620.10"),
			spec: pyenvtest.Spec{Torch: &pyenvtest.Torch{DistVersion: "2.16.0+cu140", CUDA: "14.0", Installer: "pip"}},
			want: []want{{code: finding.CodeTorchUnknownRelease, severity: finding.SeverityWarning,
				message: "Nor could it be checked against the NVIDIA driver 620.10: the driver did not say its CUDA version, and its version shows only CUDA 13.3 (derived from driver 620.10, a lower bound), so whether it runs CUDA 14.0 builds could not be confirmed",
				nofix:   true}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { checkRules(t, tt.spec, tt.gpu, nil, tt.want) })
	}
}
