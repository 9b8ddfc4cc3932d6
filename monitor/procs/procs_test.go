//go:build linux

package procs

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gpucanary/gpucanary/monitor/gpu"
	"github.com/gpucanary/gpucanary/monitor/pyenv"
)

// The test binary doubles as the workload: with GPUCANARY_PROCS_HELPER set
// it maps the files named in GPUCANARY_PROCS_MAP, as a Python process with
// torch loaded maps torch's libraries, then spins or sleeps.
func TestMain(m *testing.M) {
	if mode := os.Getenv("GPUCANARY_PROCS_HELPER"); mode != "" {
		helper(mode)
		return
	}
	os.Exit(m.Run())
}

func helper(mode string) {
	var keep [][]byte
	if mode == "late" {
		// Map only when told to: a Python process importing torch after
		// it started.
		fmt.Println("ready")
		bufio.NewReader(os.Stdin).ReadString('\n')
		mode = "sleep"
	}
	for _, path := range strings.Split(os.Getenv("GPUCANARY_PROCS_MAP"), ":") {
		if path == "" {
			continue
		}
		f, err := os.Open(path)
		if err != nil {
			fmt.Println("error", err)
			os.Exit(1)
		}
		b, err := syscall.Mmap(int(f.Fd()), 0, 4096, syscall.PROT_READ, syscall.MAP_SHARED)
		if err != nil {
			fmt.Println("error", err)
			os.Exit(1)
		}
		keep = append(keep, b)
		f.Close()
	}
	if os.Getenv("GPUCANARY_PROCS_CHILD") == "1" {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(slices.DeleteFunc(os.Environ(), func(s string) bool { return strings.HasPrefix(s, "GPUCANARY_PROCS_CHILD=") }), "GPUCANARY_PROCS_CHILD=0")
		if err := cmd.Start(); err != nil {
			fmt.Println("error", err)
			os.Exit(1)
		}
		fmt.Println("child", cmd.Process.Pid)
	}
	fmt.Println("ready")
	deadline := time.Now().Add(60 * time.Second)
	x := 0
	for time.Now().Before(deadline) {
		if mode == "spin" {
			for i := 0; i < 1e6; i++ {
				x += i
			}
			continue
		}
		time.Sleep(100 * time.Millisecond)
	}
	_ = keep
	_ = x
}

// fixtureEnv makes ENV/lib/python3.11/site-packages/torch/lib with the
// given library files and returns ENV and the library paths.
func fixtureEnv(t *testing.T, libs ...string) (string, []string) {
	t.Helper()
	env := filepath.Join(t.TempDir(), "proj", ".venv")
	libdir := filepath.Join(env, "lib", "python3.11", "site-packages", "torch", "lib")
	if err := os.MkdirAll(libdir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(env, "pyvenv.cfg"), []byte("home = /usr/bin\nversion = 3.11.7\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, l := range libs {
		p := filepath.Join(libdir, l)
		if err := os.WriteFile(p, make([]byte, 8192), 0o644); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	return env, paths
}

type helperProc struct {
	cmd   *exec.Cmd
	child int
	in    io.WriteCloser
	out   *bufio.Scanner
}

// startHelper runs the test binary as a workload mapping libs.
func startHelper(t *testing.T, mode string, libs []string, extraEnv ...string) *helperProc {
	t.Helper()
	return startHelperAs(t, os.Args[0], mode, libs, extraEnv...)
}

// startHelperAs runs the test binary through exe (a link to it named like
// an interpreter), with an environment free of the test run's own
// VIRTUAL_ENV, CONDA_PREFIX and CUDA_VISIBLE_DEVICES.
func startHelperAs(t *testing.T, exe, mode string, libs []string, extraEnv ...string) *helperProc {
	t.Helper()
	cmd := exec.Command(exe, "-test.run=^$")
	cmd.Env = slices.DeleteFunc(os.Environ(), func(kv string) bool {
		return strings.HasPrefix(kv, "VIRTUAL_ENV=") || strings.HasPrefix(kv, "CONDA_PREFIX=") || strings.HasPrefix(kv, "CUDA_VISIBLE_DEVICES=")
	})
	cmd.Env = append(cmd.Env, "GPUCANARY_PROCS_HELPER="+mode, "GPUCANARY_PROCS_MAP="+strings.Join(libs, ":"))
	cmd.Env = append(cmd.Env, extraEnv...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	h := &helperProc{cmd: cmd, in: in, out: bufio.NewScanner(out)}
	t.Cleanup(func() {
		if h.child > 0 {
			syscall.Kill(h.child, syscall.SIGKILL)
		}
		cmd.Process.Kill()
		cmd.Wait()
	})
	h.wait(t)
	return h
}

// wait reads the helper's output up to its next "ready".
func (h *helperProc) wait(t *testing.T) {
	t.Helper()
	sc := h.out
	for sc.Scan() {
		line := sc.Text()
		if c, ok := strings.CutPrefix(line, "child "); ok {
			h.child, _ = strconv.Atoi(c)
		}
		if line == "ready" {
			return
		}
		if strings.HasPrefix(line, "error") {
			t.Fatal(line)
		}
	}
	t.Fatal("helper exited before it was ready")
}

func a100With(procs ...gpu.Process) gpu.State {
	return gpu.State{Driver: "550.54.15", CUDADriver: "12.4", Devices: []gpu.Device{{Index: 0, Name: "NVIDIA A100", ComputeCapability: "8.0", Processes: procs}}}
}

func scanTwice(t *testing.T, s *scanner) []Proc {
	t.Helper()
	if _, err := s.Scan(context.Background()); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond)
	ps, err := s.Scan(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return ps
}

// looseLibs makes runtime library files outside any environment.
func looseLibs(t *testing.T, names ...string) []string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "opt", "lib")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, n := range names {
		p := filepath.Join(dir, n)
		if err := os.WriteFile(p, make([]byte, 8192), 0o644); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	return paths
}

func TestVerdictsOfRealProcesses(t *testing.T) {
	cudaEnv, cudaLibs := fixtureEnv(t, "libtorch_cpu.so", "libtorch_cuda.so", "libc10_cuda.so")
	_, cpuLibs := fixtureEnv(t, "libtorch_cpu.so", "libc10.so")
	_, llamaLibs := fixtureEnv(t, "libllama.so", "libggml.so", "libggml-cpu.so")

	onGPU := startHelper(t, "sleep", cudaLibs, "VIRTUAL_ENV="+cudaEnv, "GPUCANARY_PROCS_CHILD=1")
	idle := startHelper(t, "spin", cudaLibs)
	hidden := startHelper(t, "sleep", cudaLibs, "CUDA_VISIBLE_DEVICES=")
	cpu := startHelper(t, "spin", cpuLibs)
	llama := startHelper(t, "sleep", llamaLibs)

	s := newScanner(Options{})
	ps := scanTwice(t, s)
	g := a100With(gpu.Process{PID: onGPU.cmd.Process.Pid, Type: "compute", UsedMemoryBytes: mem(2 << 30)})
	envs := map[string]*pyenv.Env{cudaEnv: {Path: cudaEnv, Packages: map[string]*pyenv.Package{"torch": {Version: "2.5.1+cu121", Build: pyenv.BuildCUDA, CUDA: "12.1"}}}}
	rows := Classify(ps, g, envs, DefaultBusyRule, nil, time.Now())

	r := rowOf(t, rows, onGPU.cmd.Process.Pid)
	if r.Verdict != VerdictGPU || *r.GPUMemoryBytes != 2<<30 || r.Torch == nil || r.Torch.CUDA != "12.1" {
		t.Errorf("GPU process = %+v", r)
	}
	if want := []string{"libc10_cuda.so", "libtorch_cpu.so", "libtorch_cuda.so"}; !slices.Equal(r.GPULibs, want) {
		t.Errorf("gpu libs = %v, want %v", r.GPULibs, want)
	}
	for i, p := range r.LibPaths {
		if filepath.Base(p) != r.GPULibs[i] || !filepath.IsAbs(p) {
			t.Errorf("LibPaths[%d] = %s, GPULibs[%d] = %s", i, p, i, r.GPULibs[i])
		}
	}
	if me, err := user.Current(); err == nil && r.User != me.Username {
		t.Errorf("user = %q, want %q", r.User, me.Username)
	}
	if d := time.Since(r.StartTime); d < 0 || d > time.Minute {
		t.Errorf("start time %s is not the last minute", r.StartTime)
	}
	if r.RSSBytes == 0 || r.HostPID != r.PID || r.PPID != os.Getpid() {
		t.Errorf("rss %d, host PID %d, PPID %d (want %d)", r.RSSBytes, r.HostPID, r.PPID, os.Getpid())
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
	// The test process itself maps nothing of the sort: left out.
	for _, r := range rows {
		if r.PID == os.Getpid() {
			t.Errorf("a non-workload was listed: %+v", r)
		}
	}
}

// TestEnvironmentAttribution runs a workload for each way its environment
// can be found, in order of precedence.
func TestEnvironmentAttribution(t *testing.T) {
	venv, venvLibs := fixtureEnv(t, "libtorch_cpu.so", "libtorch_cuda.so")
	conda, _ := fixtureEnv(t)
	interp, _ := fixtureEnv(t)
	loose := looseLibs(t, "libtorch_cpu.so", "libtorch_cuda.so")
	python := filepath.Join(interp, "bin", "python3.11")
	if err := os.MkdirAll(filepath.Dir(python), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(os.Args[0], python); err != nil {
		t.Fatal(err)
	}
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
		{"site-packages of the mapped libraries", os.Args[0], venvLibs, nil, venv, "libraries"},
		{"nothing says", os.Args[0], loose, nil, "", ""},
	}
	helpers := make([]*helperProc, len(tests))
	for i, tt := range tests {
		helpers[i] = startHelperAs(t, tt.exe, "sleep", tt.libs, tt.env...)
	}
	ps, err := newScanner(Options{}).Scan(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var p *Proc
			for j := range ps {
				if ps[j].PID == helpers[i].cmd.Process.Pid {
					p = &ps[j]
				}
			}
			if p == nil {
				t.Fatal("helper not scanned")
			}
			if p.EnvPath != tt.wantPath || p.EnvVia != tt.wantVia {
				t.Errorf("env = %q via %q, want %q via %q", p.EnvPath, p.EnvVia, tt.wantPath, tt.wantVia)
			}
			if tt.exe == python && p.Name != "python3.11" {
				t.Errorf("name = %q, want python3.11", p.Name)
			}
			if !p.Workload() || len(p.Unreadable) > 0 {
				t.Errorf("libs %v, unreadable %v", p.GPULibs, p.Unreadable)
			}
		})
	}
}

func TestCPUPercentOverTheInterval(t *testing.T) {
	_, cpuLibs := fixtureEnv(t, "libtorch_cpu.so")
	spinner := startHelper(t, "spin", cpuLibs)
	sleeper := startHelper(t, "sleep", cpuLibs)
	s := newScanner(Options{})
	ps := scanTwice(t, s)
	rows := Classify(ps, a100With(), nil, DefaultBusyRule, nil, time.Now())
	spin, sleep := rowOf(t, rows, spinner.cmd.Process.Pid), rowOf(t, rows, sleeper.cmd.Process.Pid)
	// Shared, loaded cores: the spinner gets some share, the sleeper ~none.
	// /proc counts CPU time in clock ticks (10 ms), so a sleeper that woke
	// a few times can be charged one or two whole ticks over the 300 ms
	// between scans: 2 ticks is 6.7 %. Anything above that is real work.
	if spin.CPUPercent < 1 || spin.CPUPercent > 105 || sleep.CPUPercent > 6.7 || sleep.CPUPercent >= spin.CPUPercent {
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
	rows = Classify(ps, a100With(), nil, rule, nil, now)
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
func lifetimeAverages(t *testing.T, s *scanner, spinPID, sleepPID int) (spin, sleep float64, ps []Proc, now time.Time) {
	t.Helper()
	avg := func(p *Proc, now time.Time) float64 {
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
		var sp, sl *Proc
		for i := range ps {
			switch ps[i].PID {
			case spinPID:
				sp = &ps[i]
			case sleepPID:
				sl = &ps[i]
			}
		}
		if sp == nil || sl == nil {
			t.Fatal("a helper was not scanned")
		}
		spin, sleep = avg(sp, now), avg(sl, now)
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
	_, libs := fixtureEnv(t, "libtorch_cuda.so")
	h := startHelper(t, "sleep", libs)
	s := newScanner(Options{})
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
	rows := Classify(ps, a100With(gpu.Process{PID: 999999, UsedMemoryBytes: nil}), nil, DefaultBusyRule, nil, time.Now())
	r := rowOf(t, rows, 999999)
	if !r.OutsideContainer || r.Verdict != VerdictGPU || r.GPUMemoryBytes != nil {
		t.Errorf("unmapped NVML PID = %+v", r)
	}
}

// TestLibrariesLoadedLater: maps are read again when the address space
// grows, at most every mapsRecheck for a process that is not yet a
// workload. The clock is injected; the process is real.
func TestLibrariesLoadedLater(t *testing.T) {
	_, libs := fixtureEnv(t, "libtorch_cpu.so", "libtorch_cuda.so")
	h := startHelper(t, "late", libs)
	now := time.Now()
	s := newScanner(Options{Now: func() time.Time { return now }})
	find := func() Proc {
		t.Helper()
		ps, err := s.Scan(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range ps {
			if p.PID == h.cmd.Process.Pid {
				return p
			}
		}
		t.Fatal("helper not scanned")
		return Proc{}
	}
	if p := find(); p.Workload() {
		t.Fatalf("a workload before it mapped anything: %v", p.GPULibs)
	}
	if _, err := io.WriteString(h.in, "map\n"); err != nil {
		t.Fatal(err)
	}
	h.wait(t)
	now = now.Add(time.Second)
	if p := find(); p.Workload() {
		t.Errorf("maps read again before mapsRecheck: %v", p.GPULibs)
	}
	now = now.Add(mapsRecheck)
	if p := find(); !slices.Equal(p.GPULibs, []string{"libtorch_cpu.so", "libtorch_cuda.so"}) || p.EnvVia != "libraries" {
		t.Errorf("after mapsRecheck: libs %v, env %q via %q", p.GPULibs, p.EnvPath, p.EnvVia)
	}
}

// TestFixtureProcTree uses a proc tree of its own: tests run as root, who
// can read every real process, and a real PID namespace needs privileges.
func TestFixtureProcTree(t *testing.T) {
	root := t.TempDir()
	write := func(rel, content string) {
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("stat", "cpu 1 2 3\nbtime 1700000000\n")
	// 4242: another user's job in a container; maps and environ cannot be read.
	write("4242/stat", "4242 (python3) S 1 4242 4242 0 -1 4194560 1 0 0 0 1000 500 0 0 20 0 1 0 12345 1000 100 18446744073709551615\n")
	write("4242/cmdline", "python3\x00train.py\x00--hf-token\x00hf_secret\x00")
	write("4242/status", "Name:\tpython3\nUid:\t4000000\t4000000\t4000000\t4000000\nNSpid:\t4242\t17\n")
	for _, dir := range []string{"4242/maps", "4242/environ"} { // a directory cannot be read as a file
		if err := os.MkdirAll(filepath.Join(root, dir), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// 5000: a kernel thread (parent kthreadd): left out.
	write("5000/stat", "5000 (kworker/0:1) I 2 0 0 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 50 0 0 0\n")
	// 6000: exited between the listing and the read: no stat.
	if err := os.MkdirAll(filepath.Join(root, "6000"), 0o755); err != nil {
		t.Fatal(err)
	}
	// 7000: a name longer than comm's 15 bytes, and a readable maps file.
	write("7000/stat", "7000 (llama-server-cu) R 1 7000 7000 0 -1 0 0 0 0 0 30000 100 0 0 20 0 1 0 12345 1000 100 0\n")
	write("7000/status", "Name:\tllama-server-cu\nUid:\t0\t0\t0\t0\nNSpid:\t7000\n")
	write("7000/cmdline", "/opt/llama-server-cuda\x00-m\x00model.gguf\x00")
	write("7000/environ", "HOME=/root\x00")
	write("7000/maps", "7f1000000000-7f1000100000 r-xp 00000000 fd:01 99 /opt/lib/libggml-cuda.so\n7f2000000000-7f2000100000 r-xp 00000000 fd:01 98 /opt/lib/libllama.so\n")

	s := newScanner(Options{ProcRoot: root})
	ps, err := s.Scan(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(ps) != 2 {
		t.Fatalf("procs = %+v, want 4242 and 7000", ps)
	}
	p := ps[0]
	if p.PID != 4242 || p.HostPID != 4242 || p.NSPID != 17 || p.Name != "python3" || p.User != "4000000" || p.RSSBytes != 100*uint64(os.Getpagesize()) || p.CPUTimeSeconds != 15 {
		t.Errorf("proc = %+v", p)
	}
	if want := time.Unix(1700000000, 0).Add(123450 * time.Millisecond); !p.StartTime.Equal(want) {
		t.Errorf("start = %s, want %s", p.StartTime, want)
	}
	if !slices.Equal(p.Cmdline, []string{"python3", "train.py", "--hf-token", "***"}) {
		t.Errorf("cmdline not redacted: %v", p.Cmdline)
	}
	if want := []string{"environ: is a directory", "maps: is a directory"}; !slices.Equal(slices.Sorted(slices.Values(p.Unreadable)), want) {
		t.Errorf("unreadable = %q, want %q", p.Unreadable, want)
	}
	q := ps[1]
	if q.PID != 7000 || q.Name != "llama-server-cuda" || q.User != "root" || q.NSPID != 0 || len(q.Unreadable) != 0 ||
		!slices.Equal(q.GPULibs, []string{"libggml-cuda.so", "libllama.so"}) {
		t.Errorf("proc = %+v", q)
	}
	// Listed with what is known: its verdict says nothing it cannot know.
	r := rowOf(t, Classify(ps, a100With(), nil, DefaultBusyRule, nil, time.Now()), 7000)
	if r.Verdict != VerdictCUDAIdle {
		t.Errorf("llama.cpp with CUDA, no memory = %s", r.Verdict)
	}
}
