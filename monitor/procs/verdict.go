package procs

import (
	"fmt"
	"slices"
	"time"

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
	// maps to (another container, or the host).
	OutsideContainer bool `json:"outside_container,omitempty"`
	// BusyFor is how long the process has been at or above the busy
	// threshold; JobOnCPU is true when that meets the window while its
	// verdict is cpu or cuda-idle.
	BusyFor  time.Duration `json:"busy_for_ns,omitempty"`
	JobOnCPU bool          `json:"job_on_cpu"`
}

// BusyRule decides when a busy process off the GPU becomes JOB_ON_CPU.
type BusyRule struct {
	MinCPUPercent float64
	Window        time.Duration
}

// DefaultBusyRule is half a core for 20 seconds.
var DefaultBusyRule = BusyRule{MinCPUPercent: 50, Window: 20 * time.Second}

// Classify gives each GPU workload and each process NVML lists a verdict.
// Processes that are neither are left out. envs are the known
// environments by path. tracker (nil for a one-shot `ps`) remembers since
// when each process has been busy.
func Classify(procs []Proc, g gpu.State, envs map[string]*pyenv.Env, rule BusyRule, tracker *BusyTracker, now time.Time) []Row {
	type use struct {
		gpus []int
		mem  uint64
		na   bool
		sm   *uint32
	}
	onGPU := map[int]*use{}
	for _, d := range g.Devices {
		for _, p := range d.Processes {
			u := onGPU[p.PID]
			if u == nil {
				u = &use{}
				onGPU[p.PID] = u
			}
			u.gpus = append(u.gpus, d.Index)
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
	byPID := make(map[int]*Proc, len(procs))
	seenHost := map[int]bool{}
	for i := range procs {
		byPID[procs[i].PID] = &procs[i]
		seenHost[procs[i].HostPID] = true
	}
	hasGPU := g.HasDriver() && len(g.Devices) > 0
	var rows []Row
	alive := map[trackKey]bool{}
	for i := range procs {
		p := &procs[i]
		u := onGPU[p.HostPID]
		holder := 0
		if u == nil {
			// A child of a GPU process (a DataLoader worker) is on the GPU
			// with its parent.
			for anc, steps := byPID[p.PPID], 0; anc != nil && steps < 32; anc, steps = byPID[anc.PPID], steps+1 {
				if onGPU[anc.HostPID] != nil && p.Workload() {
					holder = anc.PID
					break
				}
				if anc.PPID == anc.PID {
					break
				}
			}
		}
		if u == nil && holder == 0 && !p.Workload() {
			continue
		}
		r := Row{Proc: *p, GPUs: []int{}}
		if env := envs[p.EnvPath]; env != nil {
			r.Torch = env.Torch()
		}
		zero := uint64(0)
		r.GPUMemoryBytes = &zero
		switch {
		case u != nil:
			r.GPUs = slices.Compact(u.gpus)
			if u.na {
				r.GPUMemoryBytes = nil
			} else {
				m := u.mem
				r.GPUMemoryBytes = &m
			}
			r.SMPercent = u.sm
			r.Verdict, r.Reason = VerdictGPU, gpuReason(u.gpus, r.GPUMemoryBytes)
		case holder != 0:
			r.Verdict, r.Reason = VerdictGPU, fmt.Sprintf("a child of PID %d, which holds memory on the GPU", holder)
		default:
			r.Verdict, r.Reason = offGPU(p, hasGPU)
		}
		key := trackKey{p.PID, p.StartTime}
		alive[key] = true
		busy := p.CPUPercent >= rule.MinCPUPercent
		if tracker != nil {
			r.BusyFor = tracker.observe(key, busy, now)
		} else if age := now.Sub(p.StartTime); !p.StartTime.IsZero() && age >= rule.Window && p.CPUTimeSeconds/age.Seconds()*100 >= rule.MinCPUPercent {
			// One-shot: the lifetime average shows the window already met.
			r.BusyFor = age
		}
		r.JobOnCPU = (r.Verdict == VerdictCPU || r.Verdict == VerdictCUDAIdle) && r.BusyFor >= rule.Window && rule.Window >= 0
		rows = append(rows, r)
	}
	if tracker != nil {
		tracker.retain(alive)
	}
	// NVML PIDs with no process here: another container, or the host.
	for _, d := range g.Devices {
		for _, gp := range d.Processes {
			if seenHost[gp.PID] {
				continue
			}
			seenHost[gp.PID] = true
			u := onGPU[gp.PID]
			r := Row{Proc: Proc{PID: gp.PID, HostPID: gp.PID, Name: "(not visible here)", GPULibs: []string{}},
				GPUs: slices.Compact(u.gpus), SMPercent: u.sm, Verdict: VerdictGPU, OutsideContainer: true,
				Reason: "NVML lists this PID but no process here has it: it runs in another container or PID namespace"}
			if !u.na {
				m := u.mem
				r.GPUMemoryBytes = &m
			}
			rows = append(rows, r)
		}
	}
	return rows
}

func gpuReason(gpus []int, mem *uint64) string {
	if mem == nil {
		return fmt.Sprintf("holds memory on GPU %v (the driver cannot say how much)", gpus)
	}
	return fmt.Sprintf("holds %.1f GiB on GPU %v", float64(*mem)/(1<<30), gpus)
}

// offGPU explains a workload that holds no GPU memory.
func offGPU(p *Proc, hasGPU bool) (Verdict, string) {
	k := p.kinds
	cudaLoaded := k[libTorchCUDA] || k[libGGMLCUDA] || k[libONNXCUDA] || k[libCUDART] || k[libCUDADrv]
	switch {
	case !hasGPU:
		if cudaLoaded {
			return VerdictOther, "a CUDA build is loaded, but no NVIDIA GPU is present"
		}
		return VerdictOther, "runs on the CPU; no NVIDIA GPU is present"
	case k[libTorchCPU] && !k[libTorchCUDA] && !k[libTorchHIP]:
		return VerdictCPU, "torch is a CPU-only build (libtorch_cpu without libtorch_cuda), although an NVIDIA GPU is present"
	case k[libGGML] && !k[libGGMLCUDA] && !k[libGGMLGPU] && !k[libCUDART]:
		return VerdictCPU, "llama.cpp is loaded without its CUDA backend (no libggml-cuda): every layer runs on the CPU"
	case cudaLoaded:
		return VerdictCUDAIdle, "a CUDA build is loaded, but the process holds no GPU memory: it computes on the CPU (CUDA_VISIBLE_DEVICES empty, device='cpu', or no .to('cuda'))"
	}
	return VerdictOther, "an ML runtime is loaded, but nothing says whether it uses the GPU"
}

type trackKey struct {
	pid   int
	start time.Time
}

// BusyTracker remembers since when each process has been busy. The start
// time is part of the key, so a reused PID starts afresh.
type BusyTracker struct {
	since map[trackKey]time.Time
}

// NewBusyTracker returns an empty tracker.
func NewBusyTracker() *BusyTracker { return &BusyTracker{since: map[trackKey]time.Time{}} }

func (t *BusyTracker) observe(k trackKey, busy bool, now time.Time) time.Duration {
	if !busy {
		delete(t.since, k)
		return 0
	}
	s, ok := t.since[k]
	if !ok {
		t.since[k] = now
		return 0
	}
	return now.Sub(s)
}

func (t *BusyTracker) retain(alive map[trackKey]bool) {
	for k := range t.since {
		if !alive[k] {
			delete(t.since, k)
		}
	}
}
