package words

import "github.com/gpucanary/gpucanary/monitor/finding"

// codeTitles name each finding as a person says it: a notification's
// title, the History window's line and the windows say this, and keep the
// code (TORCH_CPU_BUILD) for scripts, logs and the docs.
var codeTitles = map[string]string{
	finding.CodeTorchCPUBuild:         "torch is a CPU-only build",
	finding.CodeCUDAWheelReplaced:     "torch lost its CUDA build",
	finding.CodeDriverTooOld:          "the driver is too old for this torch",
	finding.CodeGPUArchUnsupported:    "this torch has no code for the GPU",
	finding.CodeTorchFamilyMismatch:   "torch and its companions do not match",
	finding.CodeBNBCUDAMismatch:       "bitsandbytes does not match torch's CUDA",
	finding.CodeLlamaCPPCPUBuild:      "llama.cpp runs on the CPU",
	finding.CodeNoGPUDriver:           "no NVIDIA driver",
	finding.CodeJobOnCPU:              "a GPU job runs on the CPU",
	finding.CodeEnvUnreadable:         "the environment cannot be read",
	finding.CodeTorchInstallBroken:    "torch's install is broken",
	finding.CodeTorchUnknownRelease:   "a torch release GPU Canary does not know",
	finding.CodeUVWillReplaceTorch:    "uv will replace this torch",
	finding.CodeWatchDegraded:         "watching falls back to polling",
	finding.CodeTorchBuildUnknown:     "torch's build cannot be told",
	finding.CodeTorchBuildUnchecked:   "torch's GPU support was not checked",
	finding.CodeTorchNonNVIDIA:        "torch is built for another GPU maker",
	finding.CodeEnvNotCreated:         "the environment is not made yet",
	finding.CodeStoreUnreadable:       "GPU Canary's own records cannot be read",
	finding.CodePackageInstallBroken:  "a package's install is broken",
	finding.CodeImportPathCode:        "code on the import path hides a package",
	finding.CodeEnvInterpreterMissing: "the environment's Python is gone",
	finding.CodeEnvPythonMismatch:     "the environment's Python is another version",
	finding.CodeCUDAKernelsMissing:    "a CUDA library has no code for the GPU",
	finding.CodeGPUMemoryOrphaned:     "GPU memory held by no running process",
	finding.CodeGPUThrottled:          "the GPU is throttled under load",
	finding.CodeGPULost:               "the GPU is lost",
	finding.CodeGPUXid:                "the driver reported a GPU error (Xid)",
	finding.CodePCIeDegraded:          "the GPU's PCIe link runs below its best",
	finding.CodeGPUMemoryErrors:       "the GPU's memory has errors",
	finding.CodeVRAMSpill:             "training spills into system memory",
	finding.CodeDriverReset:           "the display driver was reset",
	finding.CodeJobEnded:              "a GPU job ended",
	finding.CodeJobStalled:            "a GPU job stalled",
	finding.CodeJobSpinning:           "a GPU job spins without progress",
}

// CodeTitle is the finding with code as a person says it; a code with
// no title yet is itself.
func CodeTitle(code string) string {
	if t, ok := codeTitles[code]; ok {
		return t
	}
	return code
}
