package present

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/gpucanary/gpucanary/monitor/fatbin"
	"github.com/gpucanary/gpucanary/monitor/gpu"
	"github.com/gpucanary/gpucanary/monitor/kb"
	"github.com/gpucanary/gpucanary/monitor/pyenv"
)

// ChipState is how one arch a CUDA library carries stands on this
// machine's GPUs, for the environments window's chips.
type ChipState int

const (
	// ChipUnused: no GPU here loads it (or no GPU is known to judge on).
	ChipUnused ChipState = iota
	// ChipRuns: machine code a GPU here runs.
	ChipRuns
	// ChipJIT: PTX a GPU here compiles just in time, having no machine
	// code of its own.
	ChipJIT
	// ChipMissing: a GPU here for which the library carries nothing
	// (CUDA_KERNELS_MISSING's error).
	ChipMissing
)

// KernelChip is one chip: an arch ("sm_80", "PTX 90"), or a GPU with no
// code ("none for GPU 0").
type KernelChip struct {
	Text  string
	State ChipState
	// Tip says which GPUs it runs on, or why not.
	Tip string
}

// KernelRow is a package's libraries that carry the same kernels.
type KernelRow struct {
	// Label is "libggml-cuda.so (llama-cpp-python)", as KernelLines names
	// them.
	Label string
	Chips []KernelChip
	// Error says why the fat binary could not be read; Chips is then
	// empty.
	Error string
}

// KernelRows judges each CUDA library's archs on the GPUs of g, as
// monitor/fatbin's Kernels.Judge does for CUDA_KERNELS_MISSING: an arch
// a GPU here loads is ChipRuns (SASS) or ChipJIT (PTX), the others
// ChipUnused, and each GPU that none of them serves adds a ChipMissing.
// Libraries of one package carrying the same kernels share a row.
func KernelRows(libs []pyenv.CUDALib, g gpu.State) []KernelRow {
	var gpus []indexed
	if g.HasDriver() {
		for i, x := range kb.MachineOf(g).GPUs {
			gpus = append(gpus, indexed{g.Devices[i].Index, x})
		}
	}
	type key struct{ pkg, kernels, err string }
	var order []key
	files := map[key][]string{}
	first := map[key]pyenv.CUDALib{}
	for _, l := range libs {
		k := key{l.Package, l.Kernels, l.Error}
		if _, ok := files[k]; !ok {
			order = append(order, k)
			first[k] = l
		}
		files[k] = append(files[k], filepath.Base(l.File))
	}
	rows := make([]KernelRow, 0, len(order))
	for _, k := range order {
		names := files[k]
		list := strings.Join(names, ", ")
		if len(names) > 3 {
			list = fmt.Sprintf("%s, %s and %d more", names[0], names[1], len(names)-2)
		}
		row := KernelRow{Label: list + " (" + k.pkg + ")", Error: k.err}
		if k.err == "" {
			row.Chips = judgeChips(first[k].Archs(), gpus)
		}
		rows = append(rows, row)
	}
	return rows
}

// indexed is a GPU with the index the driver gives it.
type indexed struct {
	index int
	kb.GPU
}

// judgeChips is one library's chips on gpus.
func judgeChips(k fatbin.Kernels, gpus []indexed) []KernelChip {
	// users are the GPUs (by label) that load each arch, SASS and PTX
	// apart: sm_80 and compute_80 are the same Arch.
	type use struct {
		ptx  bool
		arch fatbin.Arch
	}
	users := map[use][]string{}
	var missing []KernelChip
	judged := 0
	for _, g := range gpus {
		cc, ok := fatbin.ParseArch(g.CC)
		if !ok {
			continue
		}
		judged++
		label := fmt.Sprintf("GPU %d (%s, %s)", g.index, g.Name, g.CC)
		switch s, by := k.Judge(cc); s {
		case fatbin.Runs:
			users[use{false, by}] = append(users[use{false, by}], label)
		case fatbin.JIT:
			users[use{true, by}] = append(users[use{true, by}], label)
		default:
			missing = append(missing, KernelChip{Text: fmt.Sprintf("none for GPU %d", g.index), State: ChipMissing,
				Tip: fmt.Sprintf("Nothing here runs on %s: it fails with \"no kernel image is available for execution on the device\".", label)})
		}
	}
	idle := "No GPU here loads it."
	if judged == 0 {
		idle = "No GPU with a known compute capability to judge it on."
	}
	chips := make([]KernelChip, 0, len(k.SASS)+len(k.PTX)+len(missing))
	for _, a := range k.SASS {
		c := KernelChip{Text: a.SM(), Tip: idle}
		if on := users[use{false, a}]; len(on) > 0 {
			c.State, c.Tip = ChipRuns, "Machine code that runs on "+strings.Join(on, ", ")+"."
		}
		chips = append(chips, c)
	}
	for _, a := range k.PTX {
		c := KernelChip{Text: "PTX " + strings.TrimPrefix(a.Compute(), "compute_"), Tip: idle}
		if on := users[use{true, a}]; len(on) > 0 {
			c.State, c.Tip = ChipJIT, "PTX the driver compiles just in time for "+strings.Join(on, ", ")+", which has no machine code here: the first start is slow."
		}
		chips = append(chips, c)
	}
	return append(chips, missing...)
}
