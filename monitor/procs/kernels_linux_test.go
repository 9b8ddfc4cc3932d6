package procs

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gpucanary/gpucanary/monitor/fatbin/fatbintest"
	"github.com/gpucanary/gpucanary/monitor/gpu"
)

// TestLlamaServerWithoutKernels: a real process that has mapped
// llama.cpp with the real libggml-cuda.so (sm_86 sm_89 sm_120 sm_121,
// PTX 75 80 90) and holds no GPU memory computes on the CPU because that
// backend has no kernel for a GTX 1080 Ti, and says so; on an RTX 3060
// the reason is the usual one.
func TestLlamaServerWithoutKernels(t *testing.T) {
	_, libs := fixtureEnv(t, libNames("llama", "ggml", "ggml-base")...)
	cuda := filepath.Join(filepath.Dir(libs[0]), "libggml-cuda.so")
	if err := fatbintest.MustLoad(fatbintest.LinuxGGML).WriteSparse(cuda); err != nil {
		t.Fatal(err)
	}
	server := startHelper(t, "sleep", append(libs, cuda))
	ps := scanTwice(t, NewSource(Options{}))
	for _, tc := range []struct {
		gpu, cc string
		says    string
	}{
		{"NVIDIA GeForce GTX 1080 Ti", "6.1", "its CUDA library libggml-cuda.so has no kernels for NVIDIA GeForce GTX 1080 Ti (sm_61) (it carries " + fatbintest.GGMLKernels + "): it computes on the CPU"},
		{"NVIDIA GeForce RTX 3060", "8.6", cudaIdleBase},
	} {
		g := gpu.State{Driver: "580.65.06", CUDADriver: "13.0", Devices: []gpu.Device{{Name: tc.gpu, ComputeCapability: tc.cc}}}
		r := rowOf(t, Classify(ps, g, nil, nil, DefaultBusyRule, nil, time.Now(), nil), server.cmd.Process.Pid)
		if r.Verdict != VerdictCUDAIdle || !strings.Contains(r.Reason, tc.says) {
			t.Errorf("on a %s: %s %q, want one saying %q", tc.gpu, r.Verdict, r.Reason, tc.says)
		}
		if tc.cc == "8.6" && strings.Contains(r.Reason, "kernels") {
			t.Errorf("on a %s: %q", tc.gpu, r.Reason)
		}
	}
}
