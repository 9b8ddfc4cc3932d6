package procs

// wslReason is the reason of a process on the GPU under WSL2, where NVML
// names none: it has /dev/dxg open, and what it holds is not known.
const wslReason = "uses the GPU (WSL): it has /dev/dxg open; under WSL2 the Windows driver (WDDM) owns the GPU memory and NVML lists no processes, so how much this one holds is not known"
