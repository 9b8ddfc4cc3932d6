package kb

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/gpucanary/gpucanary/monitor/fatbin"
)

// BinaryArchs is the arch list torch's own libtorch_cuda carries, read
// from its fat binary (monitor/fatbin): the truth for the build
// installed, which the table can only stand in for.
type BinaryArchs struct {
	File    string // the library read
	Kernels fatbin.Kernels
}

// CheckBuildFrom is CheckBuild with the GPUs judged by bin, the arch
// list torch's library carries, instead of the table's: a source,
// conda-forge or NGC build, or a release newer than the table, is then
// judged like any other and is no longer Unchecked. The driver is judged
// as CheckBuild does. A nil bin is CheckBuild. The tables stay what a
// repair is chosen by (ChooseRepair).
func CheckBuildFrom(torchVersion, cuda string, m Machine, bin *BinaryArchs) BuildCheck {
	c := CheckBuild(torchVersion, cuda, m)
	if bin == nil {
		return c
	}
	c.Unchecked = ""
	c.GPUs = nil
	// The GPUs are judged by the library itself: what stays inferred of a
	// release newer than the table is the driver floor of its CUDA.
	c.Inferred, c.InferredFrom = "", ""
	if !c.ReleaseKnown && newerThanTable(torchVersion) && c.Tag != "" {
		c.Inferred = fmt.Sprintf("%s; its GPUs were judged by the kernels its own %s carries, and the driver by the floor of CUDA %s (inferred)",
			notInTable(torchVersion), filepath.Base(bin.File), cuda)
	}
	for _, g := range m.known() {
		c.GPUs = append(c.GPUs, GPUVerdict{GPU: g, ArchVerdict: binaryRuns(torchVersion, *bin, g.CC)})
	}
	return c
}

// binaryRuns judges one GPU by the library's own arch list
// (fatbin.Kernels.Judge: SASS of the same major at or below the GPU's,
// else PTX at or below it, compiled just in time).
func binaryRuns(torchVersion string, bin BinaryArchs, cc string) ArchVerdict {
	gpu, ok := fatbin.ParseArch(cc)
	if !ok {
		return ArchVerdict{Reason: fmt.Sprintf("compute capability %q cannot be read", cc)}
	}
	lib := filepath.Base(bin.File)
	switch s, by := bin.Kernels.Judge(gpu); s {
	case fatbin.Runs:
		return ArchVerdict{Support: SupportYes,
			Reason: fmt.Sprintf("torch %s's %s has %s code, which runs on %s", torchVersion, lib, by.SM(), gpu.SM())}
	case fatbin.JIT:
		return ArchVerdict{Support: SupportYes, ViaPTX: true,
			Reason: fmt.Sprintf("torch %s's %s has no %s code but has %s PTX, which the driver compiles just in time on first use", torchVersion, lib, gpu.SM(), by.Compute())}
	}
	sass := strings.Join(bin.Kernels.SASSNames(), ", ")
	if sass == "" {
		sass = "no architecture"
	}
	ptx := ""
	if len(bin.Kernels.PTX) > 0 {
		ptx = " and PTX " + strings.Join(bin.Kernels.PTXNames(), ", ")
	}
	return ArchVerdict{Support: SupportNo,
		Reason: fmt.Sprintf("torch %s's %s has code for %s%s only, none of which runs on %s", torchVersion, lib, sass, ptx, gpu.SM())}
}
