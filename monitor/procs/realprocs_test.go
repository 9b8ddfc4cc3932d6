//go:build linux || windows

package procs

import (
	"context"
	"io"
	"os"
	"os/user"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gpucanary/gpucanary/monitor/gpu"
	"github.com/gpucanary/gpucanary/monitor/pyenv"
)

// Tests on real processes, through NewSource: the same on Linux (the
// /proc reader, libraries mapped) and on Windows (the snapshot reader,
// DLLs loaded; run under wine by scripts/test-windows.sh). helper_test.go
// starts the workloads; helper_linux_test.go and helper_windows_test.go
// say what a library and a venv look like on each.

func TestVerdictsOfRealProcesses(t *testing.T) {
	cudaEnv, cudaLibs := fixtureEnv(t, libNames("torch_cpu", "torch_cuda", "c10_cuda")...)
	_, cpuLibs := fixtureEnv(t, libNames("torch_cpu", "c10")...)
	_, llamaLibs := fixtureEnv(t, libNames("llama", "ggml", "ggml-cpu")...)

	onGPU := startHelper(t, "sleep", cudaLibs, "VIRTUAL_ENV="+cudaEnv, "GPUCANARY_PROCS_CHILD=1")
	idle := startHelper(t, "spin", cudaLibs)
	hidden := startHelper(t, "sleep", cudaLibs, "CUDA_VISIBLE_DEVICES=")
	cpu := startHelper(t, "spin", cpuLibs)
	llama := startHelper(t, "sleep", llamaLibs)

	ps := scanTwice(t, NewSource(Options{}))
	g := a100With(gpu.Process{PID: onGPU.cmd.Process.Pid, Type: "compute", UsedMemoryBytes: mem(2 << 30)})
	envs := map[string]*pyenv.Env{cudaEnv: {Path: cudaEnv, Packages: map[string]*pyenv.Package{"torch": {Version: "2.5.1+cu121", Build: pyenv.BuildCUDA, CUDA: "12.1"}}}}
	rows := Classify(ps, g, envs, nil, DefaultBusyRule, nil, time.Now(), nil)

	r := rowOf(t, rows, onGPU.cmd.Process.Pid)
	if r.Verdict != VerdictGPU || *r.GPUMemoryBytes != 2<<30 || r.Torch == nil || r.Torch.CUDA != "12.1" {
		t.Errorf("GPU process = %+v", r)
	}
	if want := libNames("c10_cuda", "torch_cpu", "torch_cuda"); !slices.Equal(r.GPULibs, want) {
		t.Errorf("gpu libs = %v, want %v", r.GPULibs, want)
	}
	for i, p := range r.LibPaths {
		if filepath.Base(p) != r.GPULibs[i] || !filepath.IsAbs(p) || !strings.EqualFold(filepath.Dir(p), filepath.Dir(cudaLibs[0])) {
			t.Errorf("LibPaths[%d] = %s, GPULibs[%d] = %s", i, p, i, r.GPULibs[i])
		}
	}
	if me, err := user.Current(); err == nil && r.User != me.Username && !strings.HasSuffix(me.Username, `\`+r.User) {
		t.Errorf("user = %q, want %q", r.User, me.Username)
	}
	if d := time.Since(r.StartTime); d < 0 || d > time.Minute {
		t.Errorf("start time %s is not the last minute", r.StartTime)
	}
	if r.RSSBytes == 0 || r.HostPID != r.PID || r.PPID != os.Getpid() || len(r.Unreadable) > 0 {
		t.Errorf("rss %d, host PID %d, PPID %d (want %d), unreadable %q", r.RSSBytes, r.HostPID, r.PPID, os.Getpid(), r.Unreadable)
	}
	if r.EnvPath != cudaEnv || r.EnvVia != viaVirtualEnv {
		t.Errorf("env = %q via %q, want %q via VIRTUAL_ENV", r.EnvPath, r.EnvVia, cudaEnv)
	}
	child := rowOf(t, rows, onGPU.child)
	if child.Verdict != VerdictGPU || !strings.Contains(child.Reason, "child of PID") {
		t.Errorf("child of the GPU process = %+v", child)
	}
	r = rowOf(t, rows, idle.cmd.Process.Pid)
	if r.Verdict != VerdictCUDAIdle || r.CPUPercent <= 0 {
		t.Errorf("CUDA build off the GPU = %+v", r)
	}
	if r.CUDAVisibleDevices != nil || strings.Contains(r.Reason, "CUDA_VISIBLE_DEVICES") {
		t.Errorf("CUDA_VISIBLE_DEVICES unset: read as %v, reason %q", r.CUDAVisibleDevices, r.Reason)
	}
	r = rowOf(t, rows, hidden.cmd.Process.Pid)
	if r.Verdict != VerdictCUDAIdle || r.CUDAVisibleDevices == nil || *r.CUDAVisibleDevices != "" || !strings.Contains(r.Reason, "CUDA_VISIBLE_DEVICES is empty") {
		t.Errorf("CUDA build started with CUDA_VISIBLE_DEVICES= : %s %v %q", r.Verdict, r.CUDAVisibleDevices, r.Reason)
	}
	r = rowOf(t, rows, cpu.cmd.Process.Pid)
	if r.Verdict != VerdictCPU || !strings.Contains(r.Reason, "CPU-only build") || r.CPUPercent <= 0 || r.CPUTimeSeconds <= 0 {
		t.Errorf("CPU build = %+v", r)
	}
	r = rowOf(t, rows, llama.cmd.Process.Pid)
	if r.Verdict != VerdictCPU || !strings.Contains(r.Reason, "llama.cpp") {
		t.Errorf("llama.cpp without CUDA = %+v", r)
	}
	// The test process itself loads nothing of the sort: left out.
	for _, r := range rows {
		if r.PID == os.Getpid() {
			t.Errorf("a non-workload was listed: %+v", r)
		}
	}
}

// TestEnvironmentAttribution runs a workload for each way its environment
// can be found, in order of precedence.
func TestEnvironmentAttribution(t *testing.T) {
	venv, venvLibs := fixtureEnv(t, libNames("torch_cpu", "torch_cuda")...)
	conda, _ := fixtureEnv(t)
	interp, _ := fixtureEnv(t)
	loose := looseLibs(t, libNames("torch_cpu", "torch_cuda")...)
	python, pythonName := interpreterOf(interp)
	installAs(t, python)
	tests := []struct {
		name     string
		exe      string
		libs     []string
		env      []string
		wantPath string
		wantVia  string
	}{
		{"VIRTUAL_ENV wins over CONDA_PREFIX and libraries", os.Args[0], venvLibs, []string{"CONDA_PREFIX=" + conda, "VIRTUAL_ENV=" + venv + "/"}, venv, "VIRTUAL_ENV"},
		{"CONDA_PREFIX", os.Args[0], venvLibs, []string{"CONDA_PREFIX=" + conda}, conda, "CONDA_PREFIX"},
		{"interpreter on the command line", python, venvLibs, nil, interp, "interpreter"},
		{"site-packages of the loaded libraries", os.Args[0], venvLibs, nil, venv, "libraries"},
		{"nothing says", os.Args[0], loose, nil, "", ""},
	}
	helpers := make([]*helperProc, len(tests))
	for i, tt := range tests {
		helpers[i] = startHelperAs(t, tt.exe, "sleep", tt.libs, tt.env...)
	}
	ps, err := NewSource(Options{}).Scan(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := findProc(t, ps, helpers[i].cmd.Process.Pid)
			if p.EnvPath != tt.wantPath || p.EnvVia != tt.wantVia {
				t.Errorf("env = %q via %q, want %q via %q", p.EnvPath, p.EnvVia, tt.wantPath, tt.wantVia)
			}
			if tt.exe == python && p.Name != pythonName {
				t.Errorf("name = %q, want %s", p.Name, pythonName)
			}
			if !p.Workload() || len(p.Unreadable) > 0 {
				t.Errorf("libs %v, unreadable %v", p.GPULibs, p.Unreadable)
			}
		})
	}
}

func TestCPUPercentOverTheInterval(t *testing.T) {
	_, cpuLibs := fixtureEnv(t, libName("torch_cpu"))
	spinner := startHelper(t, "spin", cpuLibs)
	sleeper := startHelper(t, "sleep", cpuLibs)
	s := NewSource(Options{})
	ps := scanTwice(t, s)
	rows := Classify(ps, a100With(), nil, nil, DefaultBusyRule, nil, time.Now(), nil)
	spin, sleep := rowOf(t, rows, spinner.cmd.Process.Pid), rowOf(t, rows, sleeper.cmd.Process.Pid)
	// Shared, loaded cores: the spinner gets some share, the sleeper ~none.
	// CPU time is counted in ticks, so a sleeper that woke a few times can
	// be charged one or two whole ticks over the 300 ms between scans
	// (sleeperMaxPercent). Anything above that is real work.
	if spin.CPUPercent < 1 || spin.CPUPercent > 105 || sleep.CPUPercent > sleeperMaxPercent || sleep.CPUPercent >= spin.CPUPercent {
		t.Errorf("spinner %.1f%%, sleeper %.1f%%", spin.CPUPercent, sleep.CPUPercent)
	}
	// One-shot: the lifetime average (CPU time since start over age),
	// once older than the window. Both helpers paid the same start-up (a
	// race-built binary spends tens of ms of CPU starting, which a loaded
	// machine stretches), so no fixed threshold separates a sleeper from a
	// spinner on every machine. Wait until the spinner has clearly out-worked
	// the sleeper, then put the threshold between the two measured averages:
	// the rule must then flag the one and not the other.
	spinAvg, sleepAvg, ps, now := lifetimeAverages(t, s, spinner.cmd.Process.Pid, sleeper.cmd.Process.Pid)
	rule := BusyRule{MinCPUPercent: (spinAvg + sleepAvg) / 2, Window: 100 * time.Millisecond}
	rows = Classify(ps, a100With(), nil, nil, rule, nil, now, nil)
	if r := rowOf(t, rows, spinner.cmd.Process.Pid); !r.JobOnCPU {
		t.Errorf("one-shot: spinner at %.1f%% over its life not flagged at %.1f%%: %+v", spinAvg, rule.MinCPUPercent, r)
	}
	if r := rowOf(t, rows, sleeper.cmd.Process.Pid); r.JobOnCPU {
		t.Errorf("one-shot: sleeper at %.1f%% over its life flagged at %.1f%%: %+v", sleepAvg, rule.MinCPUPercent, r)
	}
}

// lifetimeAverages scans until the spinner's lifetime CPU average is at
// least twice the sleeper's plus a point (the sleeper's falls as it ages,
// the spinner's holds at its share of a core), and returns both and the
// scan with the time the averages are taken at. It waits on that condition, not on a clock: a loaded machine only
// makes it take longer.
func lifetimeAverages(t *testing.T, s Source, spinPID, sleepPID int) (spin, sleep float64, ps []Proc, now time.Time) {
	t.Helper()
	avg := func(p Proc, now time.Time) float64 {
		return 100 * p.CPUTimeSeconds / now.Sub(p.StartTime).Seconds()
	}
	deadline := time.Now().Add(2 * time.Minute)
	for {
		var err error
		ps, err = s.Scan(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		now = time.Now()
		spin, sleep = avg(findProc(t, ps, spinPID), now), avg(findProc(t, ps, sleepPID), now)
		if spin >= 2*sleep+1 {
			return spin, sleep, ps, now
		}
		if time.Now().After(deadline) {
			t.Fatalf("after 2 minutes the spinner averages %.1f%% over its life and the sleeper %.1f%%", spin, sleep)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func TestExitedAndOutsideProcesses(t *testing.T) {
	_, libs := fixtureEnv(t, libName("torch_cuda"))
	h := startHelper(t, "sleep", libs)
	s := NewSource(Options{})
	if _, err := s.Scan(context.Background()); err != nil {
		t.Fatal(err)
	}
	h.cmd.Process.Kill()
	h.cmd.Wait()
	ps, err := s.Scan(context.Background())
	if err != nil {
		t.Fatalf("a process that exited made the scan fail: %v", err)
	}
	for _, p := range ps {
		if p.PID == h.cmd.Process.Pid {
			t.Error("an exited process is still listed")
		}
	}
	rows := Classify(ps, a100With(gpu.Process{PID: 999999, UsedMemoryBytes: nil}), nil, nil, DefaultBusyRule, nil, time.Now(), nil)
	r := rowOf(t, rows, 999999)
	if !r.OutsideContainer || r.Verdict != VerdictGPU || r.GPUMemoryBytes != nil {
		t.Errorf("unmapped NVML PID = %+v", r)
	}
}

// TestLibrariesLoadedLater: libraries are read again when the address
// space grows, at most every mapsRecheck for a process that is not yet a
// workload. The clock is injected; the process is real.
func TestLibrariesLoadedLater(t *testing.T) {
	_, libs := fixtureEnv(t, libNames("torch_cpu", "torch_cuda")...)
	h := startHelper(t, "late", libs)
	now := time.Now()
	s := NewSource(Options{Now: func() time.Time { return now }})
	find := func() Proc {
		t.Helper()
		ps, err := s.Scan(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		return findProc(t, ps, h.cmd.Process.Pid)
	}
	if p := find(); p.Workload() {
		t.Fatalf("a workload before it loaded anything: %v", p.GPULibs)
	}
	if _, err := io.WriteString(h.in, "load\n"); err != nil {
		t.Fatal(err)
	}
	h.wait(t)
	now = now.Add(time.Second)
	if p := find(); p.Workload() {
		t.Errorf("libraries read again before mapsRecheck: %v", p.GPULibs)
	}
	now = now.Add(mapsRecheck)
	if p := find(); !slices.Equal(p.GPULibs, libNames("torch_cpu", "torch_cuda")) || p.EnvVia != "libraries" {
		t.Errorf("after mapsRecheck: libs %v, env %q via %q", p.GPULibs, p.EnvPath, p.EnvVia)
	}
}
