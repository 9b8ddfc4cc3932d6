package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// baselineRev is the release the speed goals are measured against: the
// build of 2026-11-23, before the deeper reading of environments.
const baselineRev = "5466d2d"

var (
	baselineOnce sync.Once
	baselinePath string
	baselineErr  error
)

// baselineBinary builds baselineRev's GUI-free binary from this checkout's
// history, once, into the user's cache (it is rebuilt only when the cache
// is emptied). A clone without that commit (a shallow one) cannot compare.
func baselineBinary(b *testing.B) string {
	baselineOnce.Do(func() {
		cache, err := os.UserCacheDir()
		if err != nil {
			baselineErr = fmt.Errorf("finding the cache folder: %w", err)
			return
		}
		dir := filepath.Join(cache, "gpucanary-bench", baselineRev)
		bin := filepath.Join(dir, "gpucanary-cli")
		if _, err := os.Stat(bin); err == nil {
			baselinePath = bin
			return
		}
		src := filepath.Join(dir, "src")
		if err := os.RemoveAll(src); err != nil {
			baselineErr = err
			return
		}
		if err := os.MkdirAll(src, 0o755); err != nil {
			baselineErr = err
			return
		}
		archive := exec.Command("sh", "-c", `cd "$(git rev-parse --show-toplevel)" && git archive "$1" | tar -x -C "$2"`, "sh", baselineRev, src)
		if out, err := archive.CombinedOutput(); err != nil {
			baselineErr = fmt.Errorf("extracting %s from git (a shallow clone lacks it): %v\n%s", baselineRev, err, out)
			return
		}
		build := exec.Command("go", "build", "-trimpath", "-tags", "nogui", "-o", bin, "./cmd/gpucanary")
		build.Dir = src
		if out, err := build.CombinedOutput(); err != nil {
			baselineErr = fmt.Errorf("building %s: %v\n%s", baselineRev, err, out)
			return
		}
		baselinePath = bin
	})
	if baselineErr != nil {
		// A skipped benchmark prints nothing without -v: say it anyway.
		fmt.Fprintf(os.Stderr, "SKIP %s: no %s build to compare with: %v\n", b.Name(), baselineRev, baselineErr)
		b.Skip(baselineErr)
	}
	return baselinePath
}

// timedRun runs one command to its end and returns its wall time and peak
// resident memory. Output is discarded: a check that finds errors exits 1,
// which is an answer, not a failure of the run.
//
// The peak is read by /usr/bin/time (GNU time, %M), not from this
// process's wait: Go starts a child with vfork semantics, and Linux
// carries the parent's high-water RSS into the child's ru_maxrss across
// exec, so every child would report at least this test's own peak.
func timedRun(b *testing.B, bin string, args, env []string) (time.Duration, int64) {
	b.Helper()
	peakFile := filepath.Join(b.TempDir(), "peak")
	cmd := exec.Command("/usr/bin/time", append([]string{"-f", "%M", "-o", peakFile, bin}, args...)...)
	cmd.Env = append(os.Environ(), env...)
	start := time.Now()
	out, err := cmd.Output()
	took := time.Since(start)
	if err != nil && len(out) == 0 {
		b.Fatalf("%s %s: %v", bin, strings.Join(args[:min(len(args), 4)], " "), err)
	}
	kb, err := os.ReadFile(peakFile)
	if err != nil {
		b.Fatalf("reading the peak memory /usr/bin/time wrote: %v", err)
	}
	rss, err := strconv.ParseInt(strings.TrimSpace(string(kb)), 10, 64)
	if err != nil {
		b.Fatalf("/usr/bin/time wrote %q for the peak memory", kb)
	}
	return took, rss * 1024
}

// compareWithBaseline runs this build and the baseline's alternately, one
// of each per iteration, so that load on the machine falls on both alike,
// and reports each one's mean time and peak memory and the ratio.
func compareWithBaseline(b *testing.B, args, env []string) {
	if _, err := os.Stat("/usr/bin/time"); err != nil {
		fmt.Fprintf(os.Stderr, "SKIP %s: /usr/bin/time (Debian's time) measures the peak memory: %v\n", b.Name(), err)
		b.Skip(err)
	}
	base := baselineBinary(b)
	cur := cliBinary(b)
	// One run of each first: the page cache holds the fixtures for both.
	timedRun(b, cur, args, env)
	timedRun(b, base, args, env)
	var curT, baseT time.Duration
	var curPeak, basePeak int64
	n := 0
	for b.Loop() {
		t, m := timedRun(b, cur, args, env)
		curT, curPeak = curT+t, max(curPeak, m)
		t, m = timedRun(b, base, args, env)
		baseT, basePeak = baseT+t, max(basePeak, m)
		n++
	}
	b.ReportMetric(float64(curT.Milliseconds())/float64(n), "ms/check")
	b.ReportMetric(float64(baseT.Milliseconds())/float64(n), "ms/check-"+baselineRev)
	b.ReportMetric(float64(curT)/float64(baseT), "ratio")
	b.ReportMetric(float64(curPeak)/(1<<20), "peak-MB")
	b.ReportMetric(float64(basePeak)/(1<<20), "peak-MB-"+baselineRev)
}

// BenchmarkCheck1000EnvsVsBaseline is `check --json` of 1000 healthy
// environments named on the command line, this build beside baselineRev's
// in the same run (issue goal: at most its time, a peak of at most
// 35 MB): the check a user runs again, with the file facts the first run
// kept (a RECORD's libraries and sizes, small site files: monitor/
// filefacts) in the benchmark's own cache folder, which the first,
// unmeasured, run fills. make bench runs it; make test does not build
// the baseline.
func BenchmarkCheck1000EnvsVsBaseline(b *testing.B) {
	args := check1000Args(b)
	compareWithBaseline(b, args, []string{"XDG_CONFIG_HOME=" + b.TempDir(), "XDG_CACHE_HOME=" + b.TempDir()})
}

// BenchmarkCheck1000EnvsUncachedVsBaseline is the same check with
// nothing kept on disk (GPUCANARY_KERNEL_CACHE=off: no file facts or
// kernel cache), every file of every environment read (goal: at most
// 1.3 times the baseline's time): what a first run costs.
func BenchmarkCheck1000EnvsUncachedVsBaseline(b *testing.B) {
	args := check1000Args(b)
	compareWithBaseline(b, args, []string{"XDG_CONFIG_HOME=" + b.TempDir(), "XDG_CACHE_HOME=" + b.TempDir(), kernelCacheVariable + "=off"})
}

// check1000Args is `check --json` of 1000 healthy environments on a
// simulated A100.
func check1000Args(b *testing.B) []string {
	paths := benchEnvs(b, 1000)
	sim := filepath.Join(b.TempDir(), "gpu.json")
	if err := os.WriteFile(sim, []byte(simA100), 0o644); err != nil {
		b.Fatal(err)
	}
	return append([]string{"--gpu-sim", sim, "check", "--json"}, paths...)
}

// BenchmarkDiscoverCheck1000EnvsVsBaseline is `check --json` with no
// path, in a home holding the same 1000 environments: discovery (the
// bounded walk of home) and reading, beside baselineRev's.
func BenchmarkDiscoverCheck1000EnvsVsBaseline(b *testing.B) {
	paths := benchEnvs(b, 1000)
	home := filepath.Dir(filepath.Dir(paths[0]))
	sim := filepath.Join(b.TempDir(), "gpu.json")
	if err := os.WriteFile(sim, []byte(simA100), 0o644); err != nil {
		b.Fatal(err)
	}
	env := []string{"HOME=" + home, "XDG_CONFIG_HOME=" + b.TempDir(), "XDG_DATA_HOME=" + b.TempDir(), "XDG_CACHE_HOME=" + b.TempDir(),
		"XDG_STATE_HOME=" + b.TempDir(), "VIRTUAL_ENV=", "CONDA_PREFIX="}
	compareWithBaseline(b, []string{"--gpu-sim", sim, "check", "--json"}, env)
}
