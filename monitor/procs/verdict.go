package procs

import (
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gpucanary/gpucanary/monitor/fatbin"
	"github.com/gpucanary/gpucanary/monitor/gpu"
	"github.com/gpucanary/gpucanary/monitor/pyenv"
)

// Verdict is a stable word for what a process does with the GPU.
type Verdict string

const (
	// VerdictGPU: NVML shows the process (or an ancestor, for DataLoader
	// workers) holding GPU memory.
	VerdictGPU Verdict = "gpu"
	// VerdictCPU: a CPU-only build (torch without libtorch_cuda, llama.cpp
	// without its CUDA backend) while an NVIDIA GPU is present.
	VerdictCPU Verdict = "cpu"
	// VerdictCUDAIdle: a CUDA build is loaded but holds no GPU memory.
	VerdictCUDAIdle Verdict = "cuda-idle"
	// VerdictOrphaned: NVML lists the PID, but no process runs under it
	// here (a crashed or killed job whose GPU memory the driver still
	// holds: GPU_MEMORY_ORPHANED). It is no job, on the GPU or off it.
	VerdictOrphaned Verdict = "orphaned"
	// VerdictOther: not a GPU workload, or nothing can be said.
	VerdictOther Verdict = "other"
)

// Row is one line of `gpucanary ps`.
type Row struct {
	Proc
	// GPUs are the device indexes the process holds memory on.
	GPUs []int `json:"gpus"`
	// GPUMemoryBytes is the memory held on all GPUs; nil when NVML cannot
	// report it (WDDM, WSL2): "n/a", never 0.
	GPUMemoryBytes *uint64 `json:"gpu_memory_bytes"`
	SMPercent      *uint32 `json:"sm_percent,omitempty"`
	Verdict        Verdict `json:"verdict"`
	Reason         string  `json:"reason"`
	// Torch is the torch of the environment the process runs from, when
	// that environment is known.
	Torch *pyenv.Package `json:"torch,omitempty"`
	// OutsideContainer is true for a PID NVML reports that no process here
	// maps to (another container, or the host). Its CPU, memory and start
	// time are unknown (see Measured).
	OutsideContainer bool `json:"outside_container,omitempty"`
	// Graphics is true for a graphics process: NVML lists it among the
	// graphics processes only and it has no ML runtime loaded (a display
	// server, a compositor, a browser's GPU process). It holds GPU memory
	// (verdict gpu) but is not a job.
	Graphics bool `json:"graphics,omitempty"`
	// BusyFor is how long the process has been at or above the busy
	// threshold; JobOnCPU is true when that meets the window while its
	// verdict is cpu or cuda-idle.
	BusyFor  time.Duration `json:"busy_for_ns,omitempty"`
	JobOnCPU bool          `json:"job_on_cpu"`
}

// Measured reports whether the process's CPU %, CPU time, RSS and start
// time were read. They are not for a PID outside this view
// (OutsideContainer) nor for one no process has (VerdictOrphaned):
// unknown, shown as unknown (null in JSON, "-" in text), never as zero.
func (r Row) Measured() bool { return !r.OutsideContainer && r.Verdict != VerdictOrphaned }

// Job reports whether the row is a job on the GPU: it holds GPU memory
// (verdict gpu) and is not a graphics process.
func (r Row) Job() bool { return r.Verdict == VerdictGPU && !r.Graphics }

// Classify gives each GPU workload and each process NVML lists a verdict;
// NVML PIDs with no process here are orphaned rows where they are known
// to have exited (gone) and OutsideContainer rows otherwise, and an ML
// job whose libraries cannot be read (another user's python) is listed as
// "other". Any other process is left out. envs are the known
// environments by path. tracker (nil for a one-shot `ps`) remembers since
// when each process has been busy; without it, the lifetime average CPU
// decides whether the window is already met. running (HostPIDs; nil
// where this view cannot tell) says whether a PID the driver lists runs.
func Classify(procs []Proc, g gpu.State, envs map[string]*pyenv.Env, kernels *fatbin.Cache, rule BusyRule, tracker *BusyTracker, now time.Time, running func(pid int) bool) []Row {
	onGPU := gpuUse(g)
	byPID := make(map[int]*Proc, len(procs))
	seenHost := make(map[int]bool, len(procs))
	for i := range procs {
		byPID[procs[i].PID] = &procs[i]
		seenHost[procs[i].HostPID] = true
	}
	gone := goneOf(onGPU, seenHost, running)
	// An NVML PID with no process here that did not exit means a PID
	// namespace between the driver and this proc mount: then "holds no
	// GPU memory" cannot be told from "holds memory under a PID that
	// cannot be mapped". A PID that exited (a crashed job) says nothing
	// of the kind, and must not silence JOB_ON_CPU for the others.
	unmapped := false
	for pid := range onGPU {
		unmapped = unmapped || !seenHost[pid] && !gone(pid)
	}
	hasGPU := g.HasDriver() && len(g.Devices) > 0
	lookup := envLookup(envs)
	var rows []Row
	alive := map[trackKey]bool{}
	for i := range procs {
		p := &procs[i]
		u := onGPU[p.HostPID]
		holder := 0
		if u == nil && p.Workload() {
			holder = gpuAncestor(p, byPID, onGPU)
		}
		hidden := u == nil && holder == 0 && !p.Workload() && mapsHidden(p)
		wsl := u == nil && g.WSL && p.DXG
		if u == nil && holder == 0 && !p.Workload() && !hidden && !wsl {
			continue
		}
		r := Row{Proc: *p, GPUs: []int{}}
		if env := lookup(p.EnvPath); env != nil {
			r.Torch = env.Torch()
		}
		zero := uint64(0)
		r.GPUMemoryBytes = &zero
		switch {
		case u != nil:
			r.GPUs = u.gpus
			r.GPUMemoryBytes = u.memory()
			r.SMPercent = u.sm
			r.Verdict, r.Reason = VerdictGPU, gpuReason(u.gpus, r.GPUMemoryBytes)
			if u.graphicsOnly() && !p.Workload() {
				r.Graphics = true
				r.Reason = graphicsReason(u.gpus, r.GPUMemoryBytes)
			}
		case wsl:
			r.GPUMemoryBytes = nil
			r.Verdict, r.Reason = VerdictGPU, wslReason
		case holder != 0:
			r.Verdict, r.Reason = VerdictGPU, fmt.Sprintf("a child of PID %d, which holds memory on the GPU", holder)
		case hidden:
			r.Verdict, r.Reason = VerdictOther, "looks like an ML job, but its loaded libraries cannot be read (another user's or a protected process): whether it has a runtime loaded cannot be told"
		default:
			r.Verdict, r.Reason = offGPU(kindsOf(p.GPULibs), hasGPU)
			// CUDA_VISIBLE_DEVICES hiding every GPU settles it even when
			// NVML's PIDs cannot be mapped.
			hiddenByEnv := r.Verdict == VerdictCUDAIdle && hiddenGPUs(p.CUDAVisibleDevices, g.Devices) != ""
			if r.Verdict == VerdictCUDAIdle {
				r.Reason = cudaIdleReason(p, g.Devices, kernels)
			}
			if r.Verdict == VerdictCUDAIdle && unmapped && !hiddenByEnv {
				r.Verdict, r.Reason = VerdictOther, "a CUDA build is loaded; NVML lists GPU processes under PIDs not visible here (another PID namespace), so whether this one holds GPU memory cannot be told"
			}
		}
		alive[trackKey{p.PID, p.StartTime}] = true
		if tracker != nil {
			r.BusyFor = tracker.observe(p, rule, now)
		} else if rule.lifetimeBusy(p, now) {
			r.BusyFor = now.Sub(p.StartTime)
		}
		r.JobOnCPU = (r.Verdict == VerdictCPU || r.Verdict == VerdictCUDAIdle) && r.BusyFor >= rule.Window && r.BusyFor > 0
		rows = append(rows, r)
	}
	if tracker != nil {
		tracker.retain(alive)
	}
	return append(rows, outsideRows(g, onGPU, seenHost, gone)...)
}

// goneOf says which NVML PIDs no process here has are processes that
// exited. Where alive can tell (this proc mount is the driver's PID
// namespace), a PID it says is not running. Where it cannot (a
// container, or no proc mount at all), a PID is taken to have exited
// when another PID NVML lists is a process here: the driver's PIDs are
// then this view's, so the missing one is no other namespace's; when no
// listed PID is a process here, none is judged gone (another PID
// namespace, as before). Each PID is asked about once, so that a process
// exiting meanwhile cannot be running for one rule and gone for another.
func goneOf(onGPU map[int]*use, seenHost map[int]bool, alive func(int) bool) func(pid int) bool {
	mapped := false
	for pid := range onGPU {
		mapped = mapped || seenHost[pid]
	}
	gone := map[int]bool{}
	for pid := range onGPU {
		switch {
		case seenHost[pid]:
		case alive != nil:
			gone[pid] = !alive(pid)
		default:
			gone[pid] = mapped
		}
	}
	return func(pid int) bool { return gone[pid] }
}

// goneReason is the reason of a row whose PID the driver lists but no
// process has, where that process is known to have exited.
const goneReason = "NVML lists this PID, but no process has it: the process is gone and the driver still holds its GPU memory (GPU_MEMORY_ORPHANED); it is not a job"

// use is what NVML says one PID holds, over all devices.
type use struct {
	gpus []int
	mem  uint64
	na   bool // some device could not say how much
	sm   *uint32
	// compute is true when any device lists the PID as a compute (or MPS)
	// process, not only as a graphics one.
	compute bool
}

// graphicsOnly reports whether NVML lists the PID among graphics
// processes only.
func (u *use) graphicsOnly() bool { return !u.compute }

// memory is the total held; nil ("n/a") when any device could not say.
func (u *use) memory() *uint64 {
	if u.na {
		return nil
	}
	m := u.mem
	return &m
}

// gpuUse sums NVML's process lists by PID.
func gpuUse(g gpu.State) map[int]*use {
	onGPU := map[int]*use{}
	for _, d := range g.Devices {
		for _, p := range d.Processes {
			u := onGPU[p.PID]
			if u == nil {
				u = &use{}
				onGPU[p.PID] = u
			}
			if !slices.Contains(u.gpus, d.Index) {
				u.gpus = append(u.gpus, d.Index)
			}
			u.compute = u.compute || p.Type != "graphics"
			if p.UsedMemoryBytes == nil {
				u.na = true
			} else {
				u.mem += *p.UsedMemoryBytes
			}
			if p.SMPercent != nil && (u.sm == nil || *p.SMPercent > *u.sm) {
				u.sm = p.SMPercent
			}
		}
	}
	return onGPU
}

// gpuAncestor is the nearest ancestor of p that NVML shows on the GPU
// (DataLoader workers and other children share their parent's context);
// 0 when none.
func gpuAncestor(p *Proc, byPID map[int]*Proc, onGPU map[int]*use) int {
	for anc, steps := byPID[p.PPID], 0; anc != nil && steps < 64; anc, steps = byPID[anc.PPID], steps+1 {
		if onGPU[anc.HostPID] != nil {
			return anc.PID
		}
		if anc.PPID == anc.PID {
			break
		}
	}
	return 0
}

// outsideRows lists the NVML PIDs no process here has, in device order:
// orphaned where the process exited, else outside this view.
func outsideRows(g gpu.State, onGPU map[int]*use, seenHost map[int]bool, gone func(int) bool) []Row {
	var rows []Row
	for _, d := range g.Devices {
		for _, gp := range d.Processes {
			if seenHost[gp.PID] {
				continue
			}
			seenHost[gp.PID] = true
			u := onGPU[gp.PID]
			if gone(gp.PID) {
				rows = append(rows, Row{Proc: Proc{PID: gp.PID, HostPID: gp.PID, Name: "(not running)", GPULibs: []string{}},
					GPUs: u.gpus, GPUMemoryBytes: u.memory(), SMPercent: u.sm, Verdict: VerdictOrphaned, Reason: goneReason})
				continue
			}
			r := Row{Proc: Proc{PID: gp.PID, HostPID: gp.PID, Name: "(not visible here)", GPULibs: []string{}},
				GPUs: u.gpus, GPUMemoryBytes: u.memory(), SMPercent: u.sm, Verdict: VerdictGPU, OutsideContainer: true,
				Reason: "NVML lists this PID but no process here has it: it runs outside this container or PID namespace"}
			if u.graphicsOnly() {
				// Its runtimes cannot be read; NVML's word is all there is.
				r.Graphics = true
				r.Reason += "; NVML lists it as a graphics process (a display server or compositor), not a job"
			}
			rows = append(rows, r)
		}
	}
	return rows
}

// envLookup finds a known environment by path, else by real path: the
// kernel shows mapped libraries by real path, while environments are
// known by the path they were found at (a symlinked home, /data -> /mnt).
func envLookup(envs map[string]*pyenv.Env) func(string) *pyenv.Env {
	var byReal map[string]*pyenv.Env
	return func(path string) *pyenv.Env {
		if path == "" {
			return nil
		}
		if e := envs[path]; e != nil {
			return e
		}
		if byReal == nil {
			byReal = make(map[string]*pyenv.Env, len(envs))
			for p, e := range envs {
				if r, err := filepath.EvalSymlinks(p); err == nil {
					byReal[r] = e
				}
			}
		}
		if r, err := filepath.EvalSymlinks(path); err == nil {
			return byReal[r]
		}
		return nil
	}
}

// graphicsReason explains a graphics process.
func graphicsReason(gpus []int, mem *uint64) string {
	return "a graphics process (a display server, compositor or browser; no ML runtime loaded): " + gpuReason(gpus, mem) + ", but it is not a job"
}

func gpuReason(gpus []int, mem *uint64) string {
	if mem == nil {
		return fmt.Sprintf("holds memory on %s (the driver cannot say how much)", gpuList(gpus))
	}
	return fmt.Sprintf("holds %.1f GiB on %s", float64(*mem)/(1<<30), gpuList(gpus))
}

// gpuList names GPUs as a sentence does: "GPU 0", "GPUs 0 and 1",
// "GPUs 0, 1 and 2" (not Go's "GPU [0]").
func gpuList(gpus []int) string {
	names := make([]string, len(gpus))
	for i, g := range gpus {
		names[i] = strconv.Itoa(g)
	}
	switch len(names) {
	case 0:
		return "a GPU"
	case 1:
		return "GPU " + names[0]
	}
	return "GPUs " + strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}

// offGPU explains a workload that holds no GPU memory, from the runtimes
// it has mapped.
func offGPU(k libKind, hasGPU bool) (Verdict, string) {
	cudaLoaded := k&cudaKinds != 0
	switch {
	case !hasGPU:
		if cudaLoaded {
			return VerdictOther, "a CUDA build is loaded, but no NVIDIA GPU is present"
		}
		return VerdictOther, "runs on the CPU; no NVIDIA GPU is present"
	case k&libTorchCPU != 0 && k&(libTorchCUDA|libTorchHIP) == 0:
		return VerdictCPU, "torch is a CPU-only build (libtorch_cpu without libtorch_cuda), although an NVIDIA GPU is present"
	case k&libGGML != 0 && k&(libGGMLCUDA|libGGMLGPU|libCUDART) == 0:
		return VerdictCPU, "llama.cpp is loaded without its CUDA backend (no libggml-cuda): every layer runs on the CPU"
	case cudaLoaded:
		return VerdictCUDAIdle, cudaIdleBase + " (CUDA_VISIBLE_DEVICES empty, device='cpu', or no .to('cuda'))"
	}
	return VerdictOther, "an ML runtime is loaded, but nothing says whether it uses the GPU"
}

const cudaIdleBase = "a CUDA build is loaded, but the process holds no GPU memory: it computes on the CPU"

// cudaIdleReason explains a CUDA build holding no GPU memory as precisely
// as the process's environment allows: CUDA_VISIBLE_DEVICES hiding the
// GPUs, else (when the environment was read and does not) the code.
func cudaIdleReason(p *Proc, devices []gpu.Device, kernels *fatbin.Cache) string {
	if why := hiddenGPUs(p.CUDAVisibleDevices, devices); why != "" {
		return "a CUDA build is loaded, but " + why + ": it computes on the CPU"
	}
	if why := missingKernels(p, devices, kernels); why != "" {
		return "a CUDA build is loaded, but " + why + ": it computes on the CPU"
	}
	for _, u := range p.Unreadable {
		if strings.HasPrefix(u, "environ:") {
			return cudaIdleBase + " (CUDA_VISIBLE_DEVICES empty, device='cpu', or no .to('cuda'))"
		}
	}
	return cudaIdleBase + " (device='cpu', or no .to('cuda'))"
}

// hiddenGPUs says why CUDA_VISIBLE_DEVICES leaves a process no GPU, or ""
// when it is unset or names a GPU here. CUDA enumerates the list up to its
// first invalid entry, so an empty list or an invalid first entry hides
// every device (CUDA C++ Programming Guide, "CUDA Environment Variables":
// https://docs.nvidia.com/cuda/cuda-c-programming-guide/#cuda-environment-variables).
// Entries are indexes or GPU UUIDs (a unique prefix is enough); MIG
// instances are not judged. A first entry that is neither, such as the
// NoDevFiles Slurm may set, names no device and hides them all; one that
// starts like a number but is none ("1.5"), or like a UUID in lower case,
// is not judged.
func hiddenGPUs(cvd *string, devices []gpu.Device) string {
	if cvd == nil {
		return ""
	}
	list := strings.TrimSpace(*cvd)
	if list == "" {
		return "CUDA_VISIBLE_DEVICES is empty in its environment, which hides every GPU"
	}
	first := strings.TrimSpace(strings.Split(list, ",")[0])
	if n, err := strconv.Atoi(first); err == nil {
		if n < 0 || n >= len(devices) {
			return fmt.Sprintf("CUDA_VISIBLE_DEVICES=%s names no GPU here (this machine has %d), which hides every GPU", list, len(devices))
		}
		return ""
	}
	upper := strings.ToUpper(first)
	switch {
	case strings.HasPrefix(upper, "MIG-"), strings.HasPrefix(upper, "GPU-") && !strings.HasPrefix(first, "GPU-"),
		first != "" && strings.ContainsRune("0123456789+-", rune(first[0])):
		return ""
	case !strings.HasPrefix(first, "GPU-"):
		return fmt.Sprintf("CUDA_VISIBLE_DEVICES=%s names no GPU (its first entry is neither an index nor a GPU UUID), which hides every GPU", list)
	}
	for _, d := range devices {
		if d.UUID == "" || strings.HasPrefix(d.UUID, first) {
			return ""
		}
	}
	return fmt.Sprintf("CUDA_VISIBLE_DEVICES=%s names no GPU here, which hides every GPU", list)
}

// mlCommands are the programs whose processes are listed even when their
// maps cannot be read, by base name prefix: the ML jobs a user would look
// for in `ps`. Other users' daemons, whose maps are as unreadable, are not.
var mlCommands = []string{"python", "torchrun", "accelerate", "deepspeed", "llama", "ollama", "vllm", "text-generation", "jupyter", "koboldcpp"}

// libsUnreadable are the Unreadable entries that say a process's
// libraries could not be read: its maps on Linux, its modules on Windows.
var libsUnreadable = []string{"maps:", "modules:"}

// mapsHidden reports whether p looks like an ML job whose libraries could
// not be read.
func mapsHidden(p *Proc) bool {
	unreadable := false
	for _, u := range p.Unreadable {
		for _, prefix := range libsUnreadable {
			unreadable = unreadable || strings.HasPrefix(u, prefix)
		}
	}
	if !unreadable {
		return false
	}
	names := []string{p.Name}
	if len(p.Cmdline) > 0 {
		names = append(names, filepath.Base(p.Cmdline[0]))
	}
	for _, n := range names {
		for _, c := range mlCommands {
			if strings.HasPrefix(strings.ToLower(n), c) {
				return true
			}
		}
	}
	return false
}
