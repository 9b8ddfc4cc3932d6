package health

import (
	"testing"

	"github.com/gpucanary/gpucanary/monitor/finding"
	"github.com/gpucanary/gpucanary/monitor/gpu"
	"github.com/gpucanary/gpucanary/monitor/pyenv/pyenvtest"
)

// Issue 29: the torch releases of 2026 on the GPUs they drop or need, as
// a user meets them; and a release newer than the tables, judged by
// inference.
func TestRulesOnReleasesOf2026(t *testing.T) {
	var (
		rtx5090Driver595   = gpu.State{Driver: "595.45.04", CUDADriver: "13.2", Devices: []gpu.Device{device("NVIDIA GeForce RTX 5090", "12.0")}}
		v100Driver570      = gpu.State{Driver: "570.86.10", CUDADriver: "12.8", Devices: []gpu.Device{device("Tesla V100-SXM2-16GB", "7.0")}}
		gtx1080TiDriver595 = gpu.State{Driver: "595.45.04", CUDADriver: "13.2", Devices: []gpu.Device{device("NVIDIA GeForce GTX 1080 Ti", "6.1")}}
	)
	torch := func(v, cuda string) pyenvtest.Spec {
		return pyenvtest.Spec{Torch: &pyenvtest.Torch{DistVersion: v, CUDA: cuda, Installer: "pip"}}
	}
	tests := []struct {
		name string
		spec pyenvtest.Spec
		gpu  gpu.State
		want []want
	}{
		{"2.14 cu132 on an RTX 5090 with driver 595", torch("2.14.0+cu132", "13.2"), rtx5090Driver595, nil},
		{"2.14 cu132 on an RTX 5090 with driver 570", torch("2.14.0+cu132", "13.2"), rtx5090,
			[]want{{code: finding.CodeDriverTooOld, severity: finding.SeverityError, message: "The NVIDIA driver on your system is too old"}}},
		{"2.11 cu128 dropped Volta", torch("2.11.0+cu128", "12.8"), v100Driver570,
			[]want{{code: finding.CodeGPUArchUnsupported, severity: finding.SeverityError, message: "has no kernels for the Tesla V100-SXM2-16GB (Volta, sm_70)", fix: "torch==2.11.0+cu126"}}},
		{"2.10 cu128 still has Volta", torch("2.10.0+cu128", "12.8"), v100Driver570, nil},
		{"2.12 cu126 has no Blackwell", torch("2.12.0+cu126", "12.6"), rtx5090Driver595,
			[]want{{code: finding.CodeGPUArchUnsupported, severity: finding.SeverityError, message: "has no kernels for the NVIDIA GeForce RTX 5090 (Blackwell, sm_120)", fix: "torch==2.12.0+cu132"}}},
		{"2.15 has no Pascal: back to 2.14 + cu126", torch("2.15.0+cu132", "13.2"), gtx1080TiDriver595,
			[]want{{code: finding.CodeGPUArchUnsupported, severity: finding.SeverityError, message: "torch 2.14.0 + cu126 is the last release with code for sm_61", fix: "torch==2.14.0+cu126"}}},
		{"a 2.16 the tables lack is judged by 2.15's cu132", torch("2.16.0+cu132", "13.2"), gtx1080TiDriver595,
			[]want{
				{code: finding.CodeTorchUnknownRelease, severity: finding.SeverityInfo, message: "judged by the arch list of torch 2.15 cu132", nofix: true},
				{code: finding.CodeGPUArchUnsupported, severity: finding.SeverityError, message: "(Inferred: torch 2.16.0+cu132 is newer than GPU Canary's release table", fix: "torch==2.14.0+cu126"},
			}},
		{"a 2.16 the tables lack, fine on an RTX 5090", torch("2.16.0+cu132", "13.2"), rtx5090Driver595,
			[]want{{code: finding.CodeTorchUnknownRelease, severity: finding.SeverityInfo, message: "(inferred)", nofix: true}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { checkRules(t, tt.spec, tt.gpu, nil, tt.want) })
	}
}
