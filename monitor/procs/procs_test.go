//go:build linux

package procs

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
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
}

// startHelper runs the test binary as a workload mapping libs.
func startHelper(t *testing.T, mode string, libs []string, extraEnv ...string) *helperProc {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "GPUCANARY_PROCS_HELPER="+mode, "GPUCANARY_PROCS_MAP="+strings.Join(libs, ":"))
	cmd.Env = append(cmd.Env, extraEnv...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	h := &helperProc{cmd: cmd}
	t.Cleanup(func() {
		if h.child > 0 {
			syscall.Kill(h.child, syscall.SIGKILL)
		}
		cmd.Process.Kill()
		cmd.Wait()
	})
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		line := sc.Text()
		if c, ok := strings.CutPrefix(line, "child "); ok {
			h.child, _ = strconv.Atoi(c)
		}
		if line == "ready" {
			return h
		}
		if strings.HasPrefix(line, "error") {
			t.Fatal(line)
		}
	}
	t.Fatal("helper exited before it was ready")
	return nil
}

func a100With(procs ...gpu.Process) gpu.State {
	return gpu.State{Driver: "550.54.15", CUDADriver: "12.4", Devices: []gpu.Device{{Index: 0, Name: "NVIDIA A100", ComputeCapability: "8.0", Processes: procs}}}
}

func mem(n uint64) *uint64 { return &n }

func rowOf(t *testing.T, rows []Row, pid int) Row {
	t.Helper()
	for _, r := range rows {
		if r.PID == pid {
			return r
		}
	}
	t.Fatalf("PID %d not in rows", pid)
	return Row{}
}

func scanTwice(t *testing.T, s *Scanner) []Proc {
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

func TestVerdictsOfRealProcesses(t *testing.T) {
	cudaEnv, cudaLibs := fixtureEnv(t, "libtorch_cpu.so", "libtorch_cuda.so", "libc10_cuda.so")
	cpuEnv, cpuLibs := fixtureEnv(t, "libtorch_cpu.so", "libc10.so")
	_, llamaLibs := fixtureEnv(t, "libllama.so", "libggml.so", "libggml-cpu.so")

	onGPU := startHelper(t, "sleep", cudaLibs, "VIRTUAL_ENV="+cudaEnv, "GPUCANARY_PROCS_CHILD=1")
	idle := startHelper(t, "spin", cudaLibs)
	cpu := startHelper(t, "spin", cpuLibs)
	llama := startHelper(t, "sleep", llamaLibs)

	s := NewScanner(Options{})
	ps := scanTwice(t, s)
	g := a100With(gpu.Process{PID: onGPU.cmd.Process.Pid, Type: "compute", UsedMemoryBytes: mem(2 << 30)})
	envs := map[string]*pyenv.Env{cudaEnv: {Path: cudaEnv, Packages: map[string]*pyenv.Package{"torch": {Version: "2.5.1+cu121", Build: pyenv.BuildCUDA, CUDA: "12.1"}}}}
	rows := Classify(ps, g, envs, DefaultBusyRule, nil, time.Now())

	r := rowOf(t, rows, onGPU.cmd.Process.Pid)
	if r.Verdict != VerdictGPU || *r.GPUMemoryBytes != 2<<30 || r.EnvPath != cudaEnv || r.EnvVia != "VIRTUAL_ENV" || r.Torch == nil || r.Torch.CUDA != "12.1" {
		t.Errorf("GPU process = %+v", r)
	}
	if !slices.Equal(r.GPULibs, []string{"libc10_cuda.so", "libtorch_cpu.so", "libtorch_cuda.so"}) {
		t.Errorf("gpu libs = %v", r.GPULibs)
	}
	child := rowOf(t, rows, onGPU.child)
	if child.Verdict != VerdictGPU || !strings.Contains(child.Reason, "child of PID") {
		t.Errorf("child of the GPU process = %+v", child)
	}
	r = rowOf(t, rows, idle.cmd.Process.Pid)
	if r.Verdict != VerdictCUDAIdle || r.EnvVia != "libraries" || filepath.Base(r.EnvPath) != ".venv" || r.CPUPercent <= 0 {
		t.Errorf("CUDA build off the GPU = %+v", r)
	}
	r = rowOf(t, rows, cpu.cmd.Process.Pid)
	if r.Verdict != VerdictCPU || r.EnvPath != cpuEnv || !strings.Contains(r.Reason, "CPU-only build") {
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

	// Without a GPU, nothing is "on the CPU although a GPU is there".
	for _, r := range Classify(ps, gpu.State{}, nil, DefaultBusyRule, nil, time.Now()) {
		if r.Verdict != VerdictOther {
			t.Errorf("no GPU: %d has verdict %s", r.PID, r.Verdict)
		}
	}
}

func TestBusyWindow(t *testing.T) {
	_, cpuLibs := fixtureEnv(t, "libtorch_cpu.so")
	spinner := startHelper(t, "spin", cpuLibs)
	s := NewScanner(Options{})
	ps := scanTwice(t, s)
	g := a100With()
	// A low threshold: the spinner shares two cores with the rest of the
	// test run, and this test is about the window, not the threshold.
	rule := BusyRule{MinCPUPercent: 5, Window: 20 * time.Second}
	tracker := NewBusyTracker()
	now := time.Now()
	r := rowOf(t, Classify(ps, g, nil, rule, tracker, now), spinner.cmd.Process.Pid)
	if r.JobOnCPU {
		t.Fatal("JOB_ON_CPU before the window")
	}
	r = rowOf(t, Classify(ps, g, nil, rule, tracker, now.Add(21*time.Second)), spinner.cmd.Process.Pid)
	if !r.JobOnCPU || r.BusyFor < 20*time.Second {
		t.Errorf("after the window: %+v", r)
	}
	// Calm for one scan resets the window.
	calm := slices.Clone(ps)
	for i := range calm {
		calm[i].CPUPercent = 0
	}
	Classify(calm, g, nil, rule, tracker, now.Add(22*time.Second))
	r = rowOf(t, Classify(ps, g, nil, rule, tracker, now.Add(23*time.Second)), spinner.cmd.Process.Pid)
	if r.JobOnCPU {
		t.Error("the window did not reset when the process calmed down")
	}
	// One-shot: the lifetime average decides, once the process is old enough.
	old := rowOf(t, Classify(ps, g, nil, BusyRule{MinCPUPercent: 5, Window: 100 * time.Millisecond}, nil, time.Now()), spinner.cmd.Process.Pid)
	if !old.JobOnCPU {
		t.Errorf("one-shot with the window met: %+v", old)
	}
}

func TestExitedAndOutsideProcesses(t *testing.T) {
	_, libs := fixtureEnv(t, "libtorch_cuda.so")
	h := startHelper(t, "sleep", libs)
	s := NewScanner(Options{})
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

// TestUnreadableProcFiles uses a proc tree of its own: tests run as root,
// who can read every real process.
func TestUnreadableProcFiles(t *testing.T) {
	root := t.TempDir()
	write := func(rel, content string) {
		p := filepath.Join(root, rel)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("stat", "cpu 1 2 3\nbtime 1700000000\n")
	write("4242/stat", "4242 (python3) S 1 4242 4242 0 -1 4194560 1 0 0 0 1000 500 0 0 20 0 1 0 12345 1000 100 18446744073709551615\n")
	write("4242/cmdline", "python3\x00train.py\x00--hf-token\x00hf_secret\x00")
	write("4242/status", "Name:\tpython3\nUid:\t1000\t1000\t1000\t1000\nNSpid:\t4242\t17\n")
	os.MkdirAll(filepath.Join(root, "4242", "maps"), 0o755)    // unreadable: a directory
	os.MkdirAll(filepath.Join(root, "4242", "environ"), 0o755) // likewise
	s := NewScanner(Options{ProcRoot: root})
	ps, err := s.Scan(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(ps) != 1 {
		t.Fatalf("procs = %+v", ps)
	}
	p := ps[0]
	if p.PID != 4242 || p.HostPID != 4242 || p.Name != "python3" || p.RSSBytes != 100*uint64(os.Getpagesize()) {
		t.Errorf("proc = %+v", p)
	}
	if !slices.Equal(p.Cmdline, []string{"python3", "train.py", "--hf-token", "***"}) {
		t.Errorf("cmdline not redacted: %v", p.Cmdline)
	}
	joined := strings.Join(p.Unreadable, "; ")
	if !strings.Contains(joined, "maps:") || !strings.Contains(joined, "environ:") {
		t.Errorf("unreadable = %v", p.Unreadable)
	}
}

func TestParseNSpid(t *testing.T) {
	for status, want := range map[string]int{
		"Name:\tx\nNSpid:\t4242\t17\n": 4242,
		"NSpid:\t17\n":                 17,
		"Name:\tx\n":                   0,
		"NSpid:\n":                     0,
	} {
		got, ok := ParseNSpid([]byte(status))
		if got != want || ok != (want != 0) {
			t.Errorf("ParseNSpid(%q) = %d, %v", status, got, ok)
		}
	}
}

func TestParseMaps(t *testing.T) {
	maps := `55d4c8a00000-55d4c8a2c000 r--p 00000000 fd:01 1234   /usr/bin/python3.11
55d4c8a2c000-55d4c8b00000 r-xp 0002c000 fd:01 1234   /usr/bin/python3.11
7f0000000000-7f0000021000 rw-p 00000000 00:00 0
7f1000000000-7f1000100000 r--p 00000000 fd:01 99   /home/u/my env/.venv/lib/python3.11/site-packages/torch/lib/libtorch_cuda.so
7f1000100000-7f1000200000 r-xp 00100000 fd:01 99   /home/u/my env/.venv/lib/python3.11/site-packages/torch/lib/libtorch_cuda.so
7f2000000000-7f2000001000 r--p 00000000 fd:01 77   /usr/lib/x86_64-linux-gnu/libcuda.so.1 (deleted)
7ffd00000000-7ffd00021000 rw-p 00000000 00:00 0                          [stack]
7ffd00030000-7ffd00032000 r-xp 00000000 00:00 0                          [vdso]
`
	var got []string
	if err := ParseMaps(strings.NewReader(maps), func(p string) { got = append(got, p) }); err != nil {
		t.Fatal(err)
	}
	want := []string{"/usr/bin/python3.11", "/home/u/my env/.venv/lib/python3.11/site-packages/torch/lib/libtorch_cuda.so", "/usr/lib/x86_64-linux-gnu/libcuda.so.1"}
	if !slices.Equal(got, want) {
		t.Errorf("paths:\n%q\nwant\n%q", got, want)
	}
	if env := envOfSitePackages(want[1]); env != "/home/u/my env/.venv" {
		t.Errorf("env of %s = %q", want[1], env)
	}
}

func TestRuntimeLib(t *testing.T) {
	for path, want := range map[string]string{
		"/x/torch/lib/libtorch_cuda.so":                        libTorchCUDA,
		`C:\env\Lib\site-packages\torch\lib\torch_cuda.dll`:    libTorchCUDA,
		"/x/libc10_cuda.so":                                    libTorchCUDA,
		"/x/libtorch_cpu.so":                                   libTorchCPU,
		"/x/nvidia/cuda_runtime/lib/libcudart.so.12":           libCUDART,
		`C:\x\cudart64_12.dll`:                                 libCUDART,
		"/usr/lib/x86_64-linux-gnu/libcuda.so.1":               libCUDADrv,
		`C:\Windows\System32\nvcuda.dll`:                       libCUDADrv,
		"/x/llama_cpp/lib/libggml-cuda.so":                     libGGMLCUDA,
		`C:\x\ggml-cuda.dll`:                                   libGGMLCUDA,
		"/x/llama_cpp/lib/libllama.so":                         libGGML,
		"/x/llama_cpp/lib/libggml-vulkan.so":                   libGGMLGPU,
		"/x/onnxruntime/capi/libonnxruntime_providers_cuda.so": libONNXCUDA,
		"/usr/lib/libc.so.6":                                   "",
		"/usr/lib/libcudnn.so.9":                               "",
	} {
		got, _ := runtimeLib(path)
		if got != want {
			t.Errorf("runtimeLib(%q) = %q, want %q", path, got, want)
		}
	}
}

func TestRedact(t *testing.T) {
	tests := []struct{ in, want []string }{
		{[]string{"python", "train.py", "--token=abc123"}, []string{"python", "train.py", "--token=***"}},
		{[]string{"python", "train.py", "--hf-token", "abc123", "--lr", "3e-4"}, []string{"python", "train.py", "--hf-token", "***", "--lr", "3e-4"}},
		{[]string{"env", "HF_TOKEN=hf_xyz", "python"}, []string{"env", "HF_TOKEN=***", "python"}},
		{[]string{"serve", "api_key=sk-123", "--password", "pw"}, []string{"serve", "api_key=***", "--password", "***"}},
		{[]string{"pip", "install", "--index-url", "https://user:s3cret@pypi.example.com/simple"}, []string{"pip", "install", "--index-url", "https://user:***@pypi.example.com/simple"}},
		{[]string{"git", "clone", "https://example.com/repo.git"}, []string{"git", "clone", "https://example.com/repo.git"}},
		{[]string{"python", "--author", "me"}, []string{"python", "--author", "me"}},
	}
	for _, tt := range tests {
		if got := Redact(tt.in); !slices.Equal(got, tt.want) {
			t.Errorf("Redact(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func FuzzParseMaps(f *testing.F) {
	f.Add([]byte("7f1000000000-7f1000100000 r--p 00000000 fd:01 99   /a/libtorch_cuda.so\n"))
	f.Add([]byte("x\n\n   \n7f-7f r 0 0 0 /p (deleted)"))
	f.Fuzz(func(t *testing.T, data []byte) {
		seen := map[string]bool{}
		prev := ""
		err := ParseMaps(strings.NewReader(string(data)), func(p string) {
			if !strings.HasPrefix(p, "/") || p == prev {
				t.Fatalf("bad or repeated path %q", p)
			}
			prev = p
			seen[p] = true
		})
		if err != nil {
			t.Fatal(err)
		}
	})
}
