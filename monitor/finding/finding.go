// Package finding is what the rules say and every view shows: a Finding
// with its stable code, its severity and the command that fixes it. It is
// a leaf below the rules (monitor/health), the repair (monitor/fixplan,
// monitor/fix) and the shared types (monitor), so that a view that shows
// findings needs none of the rules that make them.
package finding

import (
	"slices"
	"strconv"

	"github.com/gpucanary/gpucanary/monitor/pyenv"
)

// Severity orders findings; error findings make `check` exit 1.
type Severity string

const (
	SeverityError   Severity = "error"
	SeverityWarning Severity = "warning"
	SeverityInfo    Severity = "info"
)

// Rank orders severities: error > warning > info > none.
func (s Severity) Rank() int {
	switch s {
	case SeverityError:
		return 3
	case SeverityWarning:
		return 2
	case SeverityInfo:
		return 1
	}
	return 0
}

// Stable finding codes (DESIGN.md). New codes may be added; existing ones
// keep their meaning.
const (
	CodeTorchCPUBuild       = "TORCH_CPU_BUILD"
	CodeCUDAWheelReplaced   = "CUDA_WHEEL_REPLACED"
	CodeDriverTooOld        = "TORCH_CUDA_DRIVER_TOO_OLD"
	CodeGPUArchUnsupported  = "GPU_ARCH_UNSUPPORTED"
	CodeTorchFamilyMismatch = "TORCH_FAMILY_MISMATCH"
	CodeBNBCUDAMismatch     = "BNB_CUDA_MISMATCH"
	CodeLlamaCPPCPUBuild    = "LLAMA_CPP_CPU_BUILD"
	CodeNoGPUDriver         = "NO_GPU_DRIVER"
	CodeJobOnCPU            = "JOB_ON_CPU"
	CodeEnvUnreadable       = "ENV_UNREADABLE"
	CodeTorchInstallBroken  = "TORCH_INSTALL_BROKEN"
	CodeTorchUnknownRelease = "TORCH_UNKNOWN_RELEASE"
	CodeUVWillReplaceTorch  = "UV_WILL_REPLACE_TORCH"
	CodeWatchDegraded       = "WATCH_DEGRADED"
	CodeTorchBuildUnknown   = "TORCH_BUILD_UNKNOWN"
	// CodeTorchBuildUnchecked: a release the table knows, but a build of
	// it whose arch list it does not (a conda, distribution or source
	// build), so it could not be checked against the GPUs.
	CodeTorchBuildUnchecked = "TORCH_BUILD_UNCHECKED"
	// CodeTorchNonNVIDIA: a ROCm or XPU build of torch on a machine with
	// an NVIDIA GPU, which it cannot use.
	CodeTorchNonNVIDIA = "TORCH_NON_NVIDIA_BUILD"
	// CodeEnvNotCreated: a project folder (given as a path) whose
	// manager has not created its environment yet.
	CodeEnvNotCreated = "ENV_NOT_CREATED"
	// CodeStoreUnreadable: a file of GPU Canary's own memory (the saved
	// state, the event history) is there but could not be read (a FIFO,
	// too large, not readable), so it is left as it is and what this run
	// learns is not saved over it.
	CodeStoreUnreadable = "STORE_UNREADABLE"
	// CodePackageInstallBroken: the files of a package other than torch
	// (torchvision, torchaudio, bitsandbytes, llama-cpp-python) are
	// damaged or incomplete: files it loads are gone (an error: import
	// fails), or its metadata is missing, doubled or left behind by pip
	// (a warning). TORCH_INSTALL_BROKEN is torch's own.
	CodePackageInstallBroken = "PACKAGE_INSTALL_BROKEN"
	// CodeImportPathCode: a .pth import line changes the import path by
	// code GPU Canary does not run, so the torch import loads may not be
	// the one judged.
	CodeImportPathCode = "IMPORT_PATH_CODE"
	// CodeEnvInterpreterMissing: the environment's interpreter, or the
	// installation it runs, is gone (a dangling bin/python after the
	// base Python was uninstalled or upgraded, a Windows home that is
	// gone), so nothing in it runs; or a Jupyter kernel runs an
	// interpreter that does not exist.
	CodeEnvInterpreterMissing = "ENV_INTERPRETER_MISSING"
	// CodeEnvPythonMismatch: the environment's interpreter runs another
	// Python X.Y than the one whose site-packages holds its packages (a
	// base upgraded in place), which it never searches.
	CodeEnvPythonMismatch = "ENV_PYTHON_MISMATCH"
	// CodeCUDAKernelsMissing: a CUDA library a package installed
	// (llama.cpp's ggml-cuda, bitsandbytes, an extension) carries no
	// machine code for a GPU here, read from its fat binary: an error
	// when no PTX reaches it either ("no kernel image is available for
	// execution on the device"), a warning when only PTX does (compiled
	// on first use). torch's own libtorch_cuda is GPU_ARCH_UNSUPPORTED's.
	CodeCUDAKernelsMissing = "CUDA_KERNELS_MISSING"
	// CodeGPUMemoryOrphaned: GPU memory that no live process holds. NVML lists
	// a PID that is not running (a process killed while the driver was busy
	// with it, a zombie context), or the memory in use exceeds what the
	// processes NVML lists hold by more than health.OrphanMargin: the memory
	// taken, and the next job runs out of it.
	CodeGPUMemoryOrphaned = "GPU_MEMORY_ORPHANED"
	// GPU health while training (monitor/health's GPUWatch; issue 44).
	// CodeGPUThrottled: under load, the GPU's clocks were held back by
	// heat, its power brake or a hardware slowdown for a tenth of the
	// last minute or more, or it is within a few degrees of slowing
	// down; never for the power cap a GeForce runs at under load.
	CodeGPUThrottled = "GPU_THROTTLED"
	// CodeGPULost: the GPU has fallen off the bus or needs a reset, or
	// the driver no longer lists a GPU it listed.
	CodeGPULost = "GPU_LOST"
	// CodeGPUXid: the driver reported an Xid error that is not an
	// application's own (13, 31, 43, 45 and 68 are left out).
	CodeGPUXid = "GPU_XID"
	// CodePCIeDegraded: under load, the GPU's PCIe link ran below its
	// best generation or width, or retried transfers more often than
	// DCGM allows; a slot that holds the card back is an info line.
	CodePCIeDegraded = "PCIE_DEGRADED"
	// CodeGPUMemoryErrors: uncorrectable ECC errors, pages waiting to be
	// retired, or a row remap pending or failed: the GPU needs a reset
	// or a reboot. Professional and data-center cards only.
	CodeGPUMemoryErrors = "GPU_MEMORY_ERRORS"
	// CodeVRAMSpill (Windows): a process's GPU memory is full and the
	// driver's system-memory fallback gives it more from the host's RAM,
	// growing: training runs many times slower instead of failing.
	CodeVRAMSpill = "VRAM_SPILL"
	// CodeDriverReset (Windows): the display driver stopped responding
	// and Windows reset it (TDR, Display event 4101): the CUDA jobs
	// running then have most likely died.
	CodeDriverReset = "DRIVER_RESET"
	// CodeJobEnded: a GPU job ended, finished (info), crashed (error) or
	// in a way nothing visible tells (warning); the JOB_ENDED event
	// carries it and how it ended.
	CodeJobEnded = "JOB_ENDED"
	// CodeJobStalled: a job that computed on its GPU still holds its
	// memory while the GPU has been idle for the stall window (a hung
	// data loader, a deadlock, a job waiting on a disk); the message
	// says what the process does meanwhile. Never for a job that never
	// computed (a notebook, a server idle by design).
	CodeJobStalled = "JOB_STALLED"
	// CodeJobSpinning: a job's GPU reads as fully busy at a fraction of
	// its power limit for the stall window: a collective (NCCL) that
	// waits forever spins at 100 % utilisation doing nothing.
	CodeJobSpinning = "JOB_SPINNING"
)

// Finding is one thing wrong (or worth knowing) about an environment, a
// process or the GPU.
type Finding struct {
	Code     string   `json:"code"`
	Severity Severity `json:"severity"`
	Message  string   `json:"message"`
	// Fix is the exact command that repairs it, when one exists.
	Fix string `json:"fix,omitempty"`
	// Env is the environment the finding is about, when it is about one.
	Env string `json:"env,omitempty"`
	// PID is the process the finding is about, when it is about one.
	PID int `json:"pid,omitempty"`
	// Evidence is which file said what.
	Evidence []pyenv.Evidence `json:"evidence,omitempty"`
	// Inferred is true when the verdict rests on facts inferred for a
	// torch release newer than GPU Canary's tables (kb.BuildCheck's
	// Inferred): its CUDA tag's newest known arch list.
	Inferred bool `json:"inferred,omitempty"`
}

// Key identifies a finding for deduplication: the same code about the same
// subject is the same problem, whatever its message says.
func (f Finding) Key() string {
	k := f.Code + "|" + f.Env
	if f.PID != 0 {
		k += "|" + strconv.Itoa(f.PID)
	}
	return k
}

// Worst is the highest severity among findings, "" when there are none.
func Worst(fs []Finding) Severity {
	var w Severity
	for _, f := range fs {
		if f.Severity.Rank() > w.Rank() {
			w = f.Severity
		}
	}
	return w
}

// reinstallable are the codes whose fix is a reinstall of torch from a
// CUDA index: the tray offers "Reinstall CUDA torch…" for them, and a
// repair must clear them to count as done.
var reinstallable = map[string]bool{
	CodeTorchCPUBuild:       true,
	CodeDriverTooOld:        true,
	CodeGPUArchUnsupported:  true,
	CodeTorchFamilyMismatch: true,
	CodeTorchInstallBroken:  true,
	CodeTorchBuildUnknown:   true,
	CodeTorchNonNVIDIA:      true,
}

// FixedByReinstall reports whether reinstalling a CUDA torch fixes a
// finding with this code.
func FixedByReinstall(code string) bool { return reinstallable[code] }

// FixedByLlamaReinstall reports whether reinstalling llama-cpp-python
// from its CUDA wheels (monitor/fixplan's NewLlamaPlan) fixes a finding
// with this code: a repair of it must clear them to count as done.
func FixedByLlamaReinstall(code string) bool { return code == CodeLlamaCPPCPUBuild }

// Repaired reports whether `gpucanary fix` repairs a finding with this
// code, by one of its reinstalls; the others it names with their fix.
func Repaired(code string) bool { return FixedByReinstall(code) || FixedByLlamaReinstall(code) }

// RepairedCodes are the codes Repaired is true of, sorted.
func RepairedCodes() []string {
	out := []string{CodeLlamaCPPCPUBuild}
	for c := range reinstallable {
		out = append(out, c)
	}
	slices.Sort(out)
	return out
}

// ReinstallHelps reports whether a reinstall (of a CUDA torch, or of
// llama-cpp-python from its CUDA wheels) is worth offering
// for an environment with these findings: one of them is an error a
// reinstall fixes, and none says that the environment's interpreter is
// missing or runs another Python than its packages'. Every installer
// runs that interpreter, so there the repair is blocked (monitor/fixplan)
// until the environment is made again, which those findings' fix does.
func ReinstallHelps(fs []Finding) bool {
	helps := false
	for _, f := range fs {
		switch {
		case f.Code == CodeEnvInterpreterMissing || f.Code == CodeEnvPythonMismatch:
			return false
		case Repaired(f.Code) && f.Severity == SeverityError:
			helps = true
		}
	}
	return helps
}
