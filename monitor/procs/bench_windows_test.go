package procs

import (
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/sys/windows"
)

// startSleepers starts n processes that sleep (the stand-in workload,
// testdata/winstub/workload.c, with --sleep and no library), and stops
// them at the end.
func startSleepers(b *testing.B, n int) {
	b.Helper()
	exe := filepath.Join(stubDir(b), "workload.exe")
	cmds := make([]*exec.Cmd, 0, n)
	b.Cleanup(func() {
		for _, c := range cmds {
			c.Process.Kill()
			c.Wait()
		}
	})
	for i := 0; i < n; i++ {
		c := exec.Command(exe, "--sleep")
		if err := c.Start(); err != nil {
			b.Fatalf("starting sleeper %d: %v", i, err)
		}
		cmds = append(cmds, c)
	}
}

// cpuTime is the CPU time this process has spent.
func cpuTime() time.Duration {
	var c, e, k, u windows.Filetime
	if err := windows.GetProcessTimes(windows.CurrentProcess(), &c, &e, &k, &u); err != nil {
		return 0
	}
	ticks := func(f windows.Filetime) int64 { return int64(f.HighDateTime)<<32 | int64(f.LowDateTime) }
	return time.Duration((ticks(k) + ticks(u)) * 100)
}
