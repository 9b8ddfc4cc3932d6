//go:build linux

package engine_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/gpucanary/gpucanary/monitor"
	"github.com/gpucanary/gpucanary/monitor/engine"
	"github.com/gpucanary/gpucanary/monitor/monitortest"
	"github.com/gpucanary/gpucanary/monitor/procs"
	"github.com/gpucanary/gpucanary/monitor/wheeltest"
)

// benchEngine runs an engine over paths for a benchmark, as `watch` runs
// it (the real process source, the default interval), and returns a
// subscription to its events.
func benchEngine(b *testing.B, paths []string) (<-chan monitor.Event, *engine.Monitor) {
	b.Helper()
	e := monitortest.Start(b, engine.Options{Paths: paths, Processes: procs.NewSource(procs.Options{}), Interval: 2 * time.Second})
	ch, unsubscribe := e.M.Subscribe()
	b.Cleanup(unsubscribe)
	return ch, e.M
}

// BenchmarkEventLatency measures the time from the installer's exit to the
// event (goal: at most 500 ms). Each iteration is a real pip overwrite,
// alternating CPU and CUDA builds.
func BenchmarkEventLatency(b *testing.B) {
	py := wheeltest.Python(b)
	links := b.TempDir()
	for _, s := range []wheeltest.Spec{wheeltest.Torch("2.5.1", "cu121"), wheeltest.Torch("2.5.1", "cpu")} {
		if _, err := wheeltest.Write(links, s); err != nil {
			b.Fatal(err)
		}
	}
	venv := filepath.Join(b.TempDir(), ".venv")
	wheeltest.NewVenv(b, py, venv)
	wheeltest.Pip(b, py, venv, "install", "--no-index", "--find-links", links, "torch==2.5.1+cu121")
	events, _ := benchEngine(b, []string{venv})

	versions := []string{"2.5.1+cpu", "2.5.1+cu121"}
	var total time.Duration
	n := 0
	for b.Loop() {
		v := versions[n%2]
		cmd := wheeltest.PipCommand(py, venv, "install", "--no-index", "--find-links", links, "--force-reinstall", "torch=="+v)
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("pip: %v\n%s", err, out)
		}
		exited := time.Now()
		for ev := range events {
			if (ev.Kind == monitor.KindCUDAWheelReplaced || ev.Kind == monitor.KindTorchChanged) && ev.After != nil && ev.After.Version == v {
				total += time.Since(exited)
				break
			}
		}
		n++
	}
	b.ReportMetric(float64(total.Microseconds())/1000/float64(n), "ms-after-exit")
}

// BenchmarkIdleWatch50 watches 50 environments with nothing happening and
// reports the CPU the engine used (goal: at most 0.5 % of a core) and the
// inotify watches per environment (goal: at most 3). The window is 60 s;
// GPUCANARY_IDLE_SECONDS shortens it.
func BenchmarkIdleWatch50(b *testing.B) {
	py := wheeltest.Python(b)
	links := b.TempDir()
	if _, err := wheeltest.Write(links, wheeltest.Torch("2.5.1", "cu121")); err != nil {
		b.Fatal(err)
	}
	root := b.TempDir()
	model := filepath.Join(root, "env00", ".venv")
	wheeltest.NewVenv(b, py, model)
	wheeltest.Pip(b, py, model, "install", "--no-index", "--find-links", links, "torch==2.5.1+cu121")
	paths := []string{model}
	for i := 1; i < 50; i++ {
		p := filepath.Join(root, fmt.Sprintf("env%02d", i), ".venv")
		os.MkdirAll(filepath.Dir(p), 0o755)
		if out, err := exec.Command("cp", "-a", model, p).CombinedOutput(); err != nil {
			b.Fatalf("cp: %v %s", err, out)
		}
		paths = append(paths, p)
	}
	window := 60 * time.Second
	if s, err := strconv.Atoi(os.Getenv("GPUCANARY_IDLE_SECONDS")); err == nil && s > 0 {
		window = time.Duration(s) * time.Second
	}
	_, m := benchEngine(b, paths)
	if n := len(m.State().Envs); n != 50 {
		b.Fatalf("%d environments", n)
	}
	var pct float64
	for b.Loop() {
		start := cpuTime()
		time.Sleep(window)
		pct = 100 * float64(cpuTime()-start) / float64(window)
	}
	b.ReportMetric(pct, "%-of-a-core")
	b.ReportMetric(float64(monitortest.InotifyWatches(b))/50, "watches/env")
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
