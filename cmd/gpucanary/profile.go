package main

import (
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
)

// Hidden variables for measuring this program as it runs (make bench and
// issue 34's profiles): GPUCANARY_CPUPROFILE names a file for a CPU
// profile of the whole run, GPUCANARY_MEMPROFILE one for the heap's
// allocations at its end. Neither is part of the documented interface.
const (
	cpuProfileVariable = "GPUCANARY_CPUPROFILE"
	memProfileVariable = "GPUCANARY_MEMPROFILE"
)

// startProfiles starts what the profile variables ask for and returns
// the function that ends them and writes their files.
func startProfiles() (stop func()) {
	cpu, mem := os.Getenv(cpuProfileVariable), os.Getenv(memProfileVariable)
	if cpu == "" && mem == "" {
		return func() {}
	}
	var cpuFile *os.File
	if cpu != "" {
		f, err := os.Create(cpu)
		if err == nil {
			err = pprof.StartCPUProfile(f)
		}
		if err != nil {
			fmt.Fprintf(os.Stderr, "gpucanary: writing a CPU profile to %s: %v\n", cpu, err)
		} else {
			cpuFile = f
		}
	}
	if mem != "" {
		runtime.MemProfileRate = 4096
	}
	return func() {
		if cpuFile != nil {
			pprof.StopCPUProfile()
			cpuFile.Close()
		}
		if mem == "" {
			return
		}
		f, err := os.Create(mem)
		if err == nil {
			err = pprof.Lookup("allocs").WriteTo(f, 0)
			f.Close()
		}
		if err != nil {
			fmt.Fprintf(os.Stderr, "gpucanary: writing a memory profile to %s: %v\n", mem, err)
		}
	}
}
