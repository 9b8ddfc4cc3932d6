package prom

import (
	"fmt"
	"syscall"
)

// collectProcess adds the process_ metrics Windows gives cheaply: CPU
// time and the start time (GetProcessTimes). proc is not used.
func collectProcess(b *batch, _ string) {
	h, err := syscall.GetCurrentProcess()
	if err != nil {
		b.fail(fmt.Errorf("reading the agent's process metrics: %w", err))
		return
	}
	var created, exited, kernel, user syscall.Filetime
	if err := syscall.GetProcessTimes(h, &created, &exited, &kernel, &user); err != nil {
		b.fail(fmt.Errorf("reading the agent's process times: %w", err))
		return
	}
	// Kernel and user times are durations in 100 ns units.
	ticks := func(t syscall.Filetime) float64 {
		return float64(uint64(t.HighDateTime)<<32|uint64(t.LowDateTime)) / 1e7
	}
	b.add(descCPUSeconds, ticks(kernel)+ticks(user))
	b.add(descStartSeconds, float64(created.Nanoseconds())/1e9)
}
