// Package procs is the process side of "who is using the GPU": one scan of
// the process table per refresh, the ML runtimes each process has mapped,
// the environment it runs from, a verdict that says whether a GPU
// workload is really on the GPU, and the search for the installer that is
// changing an environment right now.
//
// Source is the one way every reader sees processes (ps, fix's in-use
// guard, the report, the engine and its culprit search). Each platform
// implements it in its own files behind NewSource: on Linux the /proc
// reader (*_linux.go); on Windows the system snapshot, the PEB and module
// snapshots (*_windows.go, see scan_windows.go); elsewhere a Source that
// says it cannot list processes. Everything else here (verdicts, the busy
// rule, redaction, attribution by path, which loaded library is which
// runtime, the installer scoring) is platform-independent and works on
// what a Source read.
//
// On Linux, gopsutil lists the processes and reads each one's command
// line, once per process. Everything read on every refresh (CPU time, RSS,
// the mapped files) and the identity (user, start time, NSpid) are parsed
// from /proc directly with reused buffers: gopsutil's per-process calls
// for CPU, RSS and parent alone cost 50-80 ms and 11 MB a refresh with
// 1000 processes (BenchmarkGopsutilCPURSS1000), against a budget of 25 ms
// and 2 MB that the whole refresh meets (BenchmarkScan1000: about 17 ms,
// 0.5 MB).
package procs

import (
	"context"
	"log/slog"
	"time"
)

// Source is every reader's one way to see processes (ps, fix's in-use
// guard, report, the culprit search, the engine). Scan is not safe for
// concurrent use with itself; Installer may run while a Scan does (the
// engine calls it from its file watcher's goroutine).
type Source interface {
	// Scan lists processes; CPU % is over the interval since the previous Scan.
	Scan(ctx context.Context) ([]Proc, error)
	// Installer returns the process installing into env right now, or nil.
	Installer(ctx context.Context, env string) *Installer
}

// Installer is a process caught installing into an environment. Command
// is redacted of secrets, its program shortened to the base name
// ("uv pip install torch").
type Installer struct {
	PID     int
	Command string
}

// Options configures a Source.
type Options struct {
	// ProcRoot is where proc is mounted ("" = /proc); Linux only.
	ProcRoot string
	// PodLogRoot is the kubelet's pod log folder, which names pods by UID
	// ("" = DefaultPodLogRoot); Linux only.
	PodLogRoot string
	// WSL says the machine is WSL2, where a process's GPU use is read
	// from /dev/dxg in its open files (gpu.DetectWSL); Linux only.
	WSL    bool
	Logger *slog.Logger
	// Now is the clock (tests inject one).
	Now func() time.Time
}

// NewSource returns this platform's process source.
func NewSource(o Options) Source { return newSource(o) }
