package procs

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gpucanary/gpucanary/monitor/gpu"
	"github.com/gpucanary/gpucanary/monitor/pyenv"
)

var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

func proc(pid, ppid int, libs ...string) Proc {
	return Proc{PID: pid, HostPID: pid, PPID: ppid, Name: "python", StartTime: t0, GPULibs: libs}
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

func u32(n uint32) *uint32 { return &n }

func TestClassifyVerdicts(t *testing.T) {
	procs := []Proc{
		proc(1, 0),
		proc(100, 1, "libc10_cuda.so", "libtorch_cpu.so", "libtorch_cuda.so"), // on the GPU
		proc(101, 100, "libtorch_cpu.so", "libtorch_cuda.so"),                 // its DataLoader worker
		proc(102, 101, "libtorch_cpu.so", "libtorch_cuda.so"),                 // a grandchild
		proc(103, 100), // a child that maps nothing: not listed
		proc(200, 1, "libtorch_cpu.so", "libtorch_cuda.so"), // CUDA build, no memory
		proc(300, 1, "libtorch_cpu.so"),                     // CPU build
		proc(400, 1, "libllama.so", "libggml.so"),           // llama.cpp, CPU
		proc(401, 1, "libllama.so", "libggml-cuda.so"),      // llama.cpp, CUDA, idle
		proc(500, 1, "libonnxruntime_providers_cuda.so"),    // onnxruntime CUDA, idle
		proc(600, 1), // not a workload: not listed
		proc(700, 1), // not a workload, but NVML lists it
	}
	g := gpu.State{Driver: "550.54.15", Devices: []gpu.Device{
		{Index: 0, Processes: []gpu.Process{{PID: 100, UsedMemoryBytes: mem(3 << 30), SMPercent: u32(40)}, {PID: 700, UsedMemoryBytes: mem(1 << 30)}}},
		{Index: 1, Processes: []gpu.Process{{PID: 100, UsedMemoryBytes: mem(1 << 30), SMPercent: u32(90)}}},
	}}
	rows := Classify(procs, g, nil, nil, DefaultBusyRule, nil, t0.Add(time.Minute), nil)
	tests := []struct {
		pid    int
		want   Verdict
		reason string
	}{
		{100, VerdictGPU, "holds 4.0 GiB on GPUs 0 and 1"},
		{101, VerdictGPU, "child of PID 100"},
		{102, VerdictGPU, "child of PID 100"},
		{200, VerdictCUDAIdle, "holds no GPU memory"},
		{300, VerdictCPU, "CPU-only build"},
		{400, VerdictCPU, "llama.cpp"},
		{401, VerdictCUDAIdle, "CUDA build"},
		{500, VerdictCUDAIdle, "CUDA build"},
		{700, VerdictGPU, "holds 1.0 GiB"},
	}
	for _, tt := range tests {
		t.Run(string(tt.want)+"/"+tt.reason, func(t *testing.T) {
			r := rowOf(t, rows, tt.pid)
			if r.Verdict != tt.want || !strings.Contains(r.Reason, tt.reason) || r.OutsideContainer {
				t.Errorf("PID %d: %s %q, want %s ~%q", tt.pid, r.Verdict, r.Reason, tt.want, tt.reason)
			}
		})
	}
	if r := rowOf(t, rows, 100); *r.GPUMemoryBytes != 4<<30 || *r.SMPercent != 90 {
		t.Errorf("GPU totals = %d bytes, SM %d", *r.GPUMemoryBytes, *r.SMPercent)
	}
	if len(rows) != len(tests) {
		for _, r := range rows {
			t.Logf("row %d %s", r.PID, r.Verdict)
		}
		t.Errorf("%d rows, want %d", len(rows), len(tests))
	}
}

func TestClassifyUnreadableMaps(t *testing.T) {
	job := proc(10, 1)
	job.Name, job.User, job.Unreadable = "python3", "bob", []string{"maps: permission denied", "environ: permission denied"}
	daemon := proc(11, 1)
	daemon.Name, daemon.Unreadable = "sshd", []string{"maps: permission denied"}
	onGPU := proc(12, 1)
	onGPU.Name, onGPU.Unreadable = "sshd", []string{"maps: permission denied"}
	g := gpu.State{Driver: "550", Devices: []gpu.Device{{Index: 0, Processes: []gpu.Process{{PID: 12, UsedMemoryBytes: mem(1 << 30)}}}}}
	rows := Classify([]Proc{job, daemon, onGPU}, g, nil, nil, DefaultBusyRule, nil, t0, nil)
	if r := rowOf(t, rows, 10); r.Verdict != VerdictOther || !strings.Contains(r.Reason, "cannot be read") || len(r.Unreadable) != 2 {
		t.Errorf("another user's python = %s %q %v", r.Verdict, r.Reason, r.Unreadable)
	}
	if r := rowOf(t, rows, 12); r.Verdict != VerdictGPU {
		t.Errorf("unreadable process on the GPU = %s", r.Verdict)
	}
	if len(rows) != 2 {
		t.Errorf("%d rows, want 2 (the daemon off the GPU is left out)", len(rows))
	}
}

func TestClassifyAcrossPIDNamespaces(t *testing.T) {
	procs := []Proc{proc(10, 1, "libtorch_cpu.so", "libtorch_cuda.so"), proc(11, 1, "libtorch_cpu.so")}
	// NVML speaks of host PIDs; this proc mount shows none of them.
	g := gpu.State{Driver: "550", Devices: []gpu.Device{{Index: 0, Processes: []gpu.Process{{PID: 84210, UsedMemoryBytes: nil}}}}}
	rows := Classify(procs, g, nil, nil, DefaultBusyRule, nil, t0, nil)
	out := rowOf(t, rows, 84210)
	if !out.OutsideContainer || out.Verdict != VerdictGPU || out.GPUMemoryBytes != nil {
		t.Errorf("unmapped NVML PID = %+v", out)
	}
	if r := rowOf(t, rows, 10); r.Verdict != VerdictOther || !strings.Contains(r.Reason, "PID namespace") {
		t.Errorf("a CUDA build that may be the unmapped PID = %s %q, want other", r.Verdict, r.Reason)
	}
	// A CPU-only build cannot be the one holding memory: still cpu.
	if r := rowOf(t, rows, 11); r.Verdict != VerdictCPU {
		t.Errorf("CPU build = %s", r.Verdict)
	}
}

// TestClassifyStalePID: a PID NVML lists that no process runs under (a
// crashed job) is orphaned: no job, not on the GPU, and it does not make
// a busy CUDA build elsewhere "other" as a PID namespace would; JOB_ON_CPU
// stands. Where running can tell, it decides alone (the stale PID may be
// the only one listed); where it cannot, another listed PID being a
// process here shows the driver's PIDs are this view's. A PID that runs
// but is not in the scan, or a list none of whose PIDs is here with no
// way to tell, is still another namespace's.
func TestClassifyStalePID(t *testing.T) {
	busy := proc(10, 1, "libtorch_cpu.so", "libtorch_cuda.so")
	busy.CPUTimeSeconds = 60 * 99 // 99% of a CPU for its whole minute
	holder := proc(20, 1, "libtorch_cpu.so", "libtorch_cuda.so")
	listed := func(pids ...int) gpu.State {
		var ps []gpu.Process
		for _, pid := range pids {
			ps = append(ps, gpu.Process{PID: pid, UsedMemoryBytes: mem(2 << 30)})
		}
		return gpu.State{Driver: "550", Devices: []gpu.Device{{Index: 0, Processes: ps}}}
	}
	gone := func(pid int) bool { return pid != 66666 } // 66666 exited; every other PID runs
	for _, tc := range []struct {
		name    string
		procs   []Proc
		g       gpu.State
		running func(int) bool
		stale   Verdict // of PID 66666
		onCPU   bool    // PID 10 is JOB_ON_CPU (else other, for the namespace)
	}{
		{"the host's view, the stale PID alone", []Proc{busy}, listed(66666), gone, VerdictOrphaned, true},
		{"the host's view, beside a job on the GPU", []Proc{busy, holder}, listed(66666, 20), gone, VerdictOrphaned, true},
		{"cannot tell, another listed PID is here", []Proc{busy, holder}, listed(66666, 20), nil, VerdictOrphaned, true},
		{"cannot tell, no listed PID is here: another namespace", []Proc{busy}, listed(66666), nil, VerdictGPU, false},
		{"the host's view, a running PID not in the scan", []Proc{busy}, listed(66666), func(int) bool { return true }, VerdictGPU, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rows := Classify(tc.procs, tc.g, nil, nil, DefaultBusyRule, nil, t0.Add(time.Minute), tc.running)
			r := rowOf(t, rows, 66666)
			if r.Verdict != tc.stale || r.Job() == (tc.stale == VerdictOrphaned) || r.OutsideContainer == (tc.stale == VerdictOrphaned) || r.Measured() {
				t.Errorf("PID 66666: %s (job %v, outside %v, measured %v) %q, want %s", r.Verdict, r.Job(), r.OutsideContainer, r.Measured(), r.Reason, tc.stale)
			}
			if tc.stale == VerdictOrphaned && (r.Name != "(not running)" || *r.GPUMemoryBytes != 2<<30 || !strings.Contains(r.Reason, "GPU_MEMORY_ORPHANED")) {
				t.Errorf("orphaned row: %+v", r)
			}
			b := rowOf(t, rows, 10)
			if tc.onCPU && (b.Verdict != VerdictCUDAIdle || !b.JobOnCPU || strings.Contains(b.Reason, "namespace")) {
				t.Errorf("busy CUDA build: %s (JOB_ON_CPU %v) %q, want cuda-idle on the CPU", b.Verdict, b.JobOnCPU, b.Reason)
			}
			if !tc.onCPU && (b.Verdict != VerdictOther || b.JobOnCPU || !strings.Contains(b.Reason, "another PID namespace")) {
				t.Errorf("busy CUDA build: %s (JOB_ON_CPU %v) %q, want other (another namespace)", b.Verdict, b.JobOnCPU, b.Reason)
			}
		})
	}
}

// TestCUDAVisibleDevices: a CUDA build whose CUDA_VISIBLE_DEVICES hides
// every GPU is explained by it; one that names a GPU here, or a form not
// judged (MIG), keeps the general explanation.
func TestCUDAVisibleDevices(t *testing.T) {
	g := gpu.State{Driver: "550", Devices: []gpu.Device{
		{Index: 0, UUID: "GPU-8932f937-d72c-4106-c12f-20bd9faed9f6"},
		{Index: 1, UUID: "GPU-1d3a9c44-0000-4000-8000-000000000001"},
	}}
	str := func(s string) *string { return &s }
	tests := []struct {
		name   string
		cvd    *string
		reason string // in the reason; "" when CUDA_VISIBLE_DEVICES is not named
	}{
		{"unset", nil, ""},
		{"empty", str(""), "CUDA_VISIBLE_DEVICES is empty"},
		{"blank", str("  "), "CUDA_VISIBLE_DEVICES is empty"},
		{"minus one", str("-1"), "CUDA_VISIBLE_DEVICES=-1 names no GPU here (this machine has 2)"},
		{"index past the end", str("2"), "CUDA_VISIBLE_DEVICES=2 names no GPU here"},
		{"invalid first entry hides the rest", str("5,0"), "CUDA_VISIBLE_DEVICES=5,0 names no GPU here"},
		{"a valid index", str("1"), ""},
		{"valid first, invalid later", str("0,7"), ""},
		{"a UUID prefix of a GPU here", str("GPU-8932f937"), ""},
		{"a UUID of no GPU here", str("GPU-ffffffff"), "CUDA_VISIBLE_DEVICES=GPU-ffffffff names no GPU here"},
		{"MIG is not judged", str("MIG-0e7a6c1f-0000-5000-8000-000000000000"), ""},
		// A value Slurm may set: neither an index nor a UUID, so CUDA
		// sees no device.
		{"NoDevFiles", str("NoDevFiles"), "CUDA_VISIBLE_DEVICES=NoDevFiles names no GPU (its first entry is neither an index nor a GPU UUID)"},
		{"a word first hides the rest", str("none,0"), "CUDA_VISIBLE_DEVICES=none,0 names no GPU"},
		{"an empty first entry", str(",0"), "CUDA_VISIBLE_DEVICES=,0 names no GPU"},
		{"minus one first", str("-1,0"), "CUDA_VISIBLE_DEVICES=-1,0 names no GPU here"},
		{"a number that is no index is not judged", str("1.5"), ""},
		{"a lower-case UUID is not judged", str("gpu-ffffffff"), ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := proc(10, 1, "libtorch_cpu.so", "libtorch_cuda.so")
			p.CUDAVisibleDevices = tt.cvd
			r := rowOf(t, Classify([]Proc{p}, g, nil, nil, DefaultBusyRule, nil, t0, nil), 10)
			if r.Verdict != VerdictCUDAIdle {
				t.Fatalf("verdict = %s, want cuda-idle", r.Verdict)
			}
			if tt.reason == "" {
				if strings.Contains(r.Reason, "CUDA_VISIBLE_DEVICES") || !strings.Contains(r.Reason, "no .to('cuda')") {
					t.Errorf("reason = %q, want the general one without CUDA_VISIBLE_DEVICES (the environment was read)", r.Reason)
				}
				return
			}
			if !strings.Contains(r.Reason, tt.reason) || !strings.HasSuffix(r.Reason, "it computes on the CPU") {
				t.Errorf("reason = %q, want ~%q", r.Reason, tt.reason)
			}
		})
	}
	// An unreadable environment leaves CUDA_VISIBLE_DEVICES among the causes.
	p := proc(10, 1, "libtorch_cpu.so", "libtorch_cuda.so")
	p.Unreadable = []string{"environ: permission denied"}
	if r := rowOf(t, Classify([]Proc{p}, g, nil, nil, DefaultBusyRule, nil, t0, nil), 10); !strings.Contains(r.Reason, "CUDA_VISIBLE_DEVICES empty") {
		t.Errorf("environment unreadable: reason = %q", r.Reason)
	}
	// Hidden GPUs settle it even when NVML's PIDs cannot be mapped here.
	p = proc(10, 1, "libtorch_cpu.so", "libtorch_cuda.so")
	p.CUDAVisibleDevices = str("")
	g.Devices[0].Processes = []gpu.Process{{PID: 84210}}
	if r := rowOf(t, Classify([]Proc{p}, g, nil, nil, DefaultBusyRule, nil, t0, nil), 10); r.Verdict != VerdictCUDAIdle {
		t.Errorf("hidden GPUs across PID namespaces = %s %q, want cuda-idle", r.Verdict, r.Reason)
	}
}

func TestClassifyWithoutGPU(t *testing.T) {
	procs := []Proc{proc(10, 1, "libtorch_cpu.so", "libtorch_cuda.so"), proc(11, 1, "libtorch_cpu.so")}
	for _, r := range Classify(procs, gpu.State{Source: "none"}, nil, nil, DefaultBusyRule, nil, t0, nil) {
		if r.Verdict != VerdictOther || r.JobOnCPU {
			t.Errorf("no GPU: PID %d is %s", r.PID, r.Verdict)
		}
	}
}

func TestClassifyEnvBySymlink(t *testing.T) {
	dir := t.TempDir()
	real := filepath.Join(dir, "data", "proj", ".venv")
	if err := os.MkdirAll(real, 0o755); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "home")
	err := os.Symlink(filepath.Join(dir, "data"), link)
	if err == nil {
		_, err = os.Lstat(link)
	}
	if err != nil {
		// Windows without the privilege refuses; wine 8 reports success
		// and makes nothing.
		t.Skipf("this system makes no symlink here: %v", err)
	}
	torch := &pyenv.Package{Version: "2.5.1+cpu", Build: pyenv.BuildCPU}
	// pyenv found it through the link; the kernel shows the real path.
	envs := map[string]*pyenv.Env{filepath.Join(link, "proj", ".venv"): {Packages: map[string]*pyenv.Package{pyenv.Torch: torch}}}
	p := proc(10, 1, "libtorch_cpu.so")
	p.EnvPath, p.EnvVia = real, viaLibraries
	r := rowOf(t, Classify([]Proc{p}, gpu.State{Driver: "550"}, envs, nil, DefaultBusyRule, nil, t0, nil), 10)
	if r.Torch != torch {
		t.Errorf("torch of an env known by a symlinked path = %+v", r.Torch)
	}
}

func TestBusyTracker(t *testing.T) {
	rule := BusyRule{MinCPUPercent: 50, Window: 20 * time.Second}
	g := gpu.State{Driver: "550", Devices: []gpu.Device{{Index: 0}}}
	type step struct {
		at      time.Duration // since t0
		cpu     float64
		start   time.Time // zero: t0
		cpuTime float64
		want    bool
	}
	tests := []struct {
		name  string
		libs  []string
		steps []step
	}{
		{"busy for the window", []string{"libtorch_cpu.so"}, []step{{0, 90, time.Time{}, 0, false}, {10 * time.Second, 90, time.Time{}, 0, false}, {20 * time.Second, 90, time.Time{}, 0, true}, {25 * time.Second, 60, time.Time{}, 0, true}}},
		{"a calm scan resets", []string{"libtorch_cpu.so"}, []step{{0, 90, time.Time{}, 0, false}, {15 * time.Second, 10, time.Time{}, 0, false}, {25 * time.Second, 90, time.Time{}, 0, false}, {44 * time.Second, 90, time.Time{}, 0, false}, {45 * time.Second, 90, time.Time{}, 0, true}}},
		{"below the threshold never", []string{"libtorch_cpu.so"}, []step{{0, 49, time.Time{}, 0, false}, {time.Minute, 49, time.Time{}, 0, false}}},
		{"on the GPU never", []string{"libtorch_cpu.so", "libtorch_cuda.so", "GPU"}, []step{{0, 400, time.Time{}, 0, false}, {time.Minute, 400, time.Time{}, 0, false}}},
		{"cuda-idle too", []string{"libtorch_cpu.so", "libtorch_cuda.so"}, []step{{0, 100, time.Time{}, 0, false}, {21 * time.Second, 100, time.Time{}, 0, true}}},
		{"PID reused by a new process starts afresh", []string{"libtorch_cpu.so"}, []step{{0, 90, time.Time{}, 0, false}, {30 * time.Second, 90, time.Time{}, 0, true}, {31 * time.Second, 90, t0.Add(31 * time.Second), 0, false}}},
		{"lifetime average proves the window at first sight", []string{"libtorch_cpu.so"}, []step{{time.Hour, 80, time.Time{}, 0.8 * 3600, true}}},
		{"young process is not proven", []string{"libtorch_cpu.so"}, []step{{10 * time.Second, 100, time.Time{}, 10, false}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tracker := NewBusyTracker()
			for i, s := range tt.steps {
				libs := tt.libs
				gs := g
				if libs[len(libs)-1] == "GPU" {
					libs = libs[:len(libs)-1]
					gs = gpu.State{Driver: "550", Devices: []gpu.Device{{Index: 0, Processes: []gpu.Process{{PID: 10, UsedMemoryBytes: mem(1)}}}}}
				}
				p := proc(10, 1, libs...)
				if !s.start.IsZero() {
					p.StartTime = s.start
				}
				p.CPUPercent, p.CPUTimeSeconds = s.cpu, s.cpuTime
				r := rowOf(t, Classify([]Proc{p}, gs, nil, nil, rule, tracker, t0.Add(s.at), nil), 10)
				if r.JobOnCPU != s.want {
					t.Errorf("step %d (%s, %.0f%%): JobOnCPU = %v, busy for %s", i, s.at, s.cpu, r.JobOnCPU, r.BusyFor)
				}
			}
		})
	}
	t.Run("exited processes are forgotten", func(t *testing.T) {
		tracker := NewBusyTracker()
		p := proc(10, 1, "libtorch_cpu.so")
		p.CPUPercent = 90
		Classify([]Proc{p}, g, nil, nil, rule, tracker, t0, nil)
		Classify(nil, g, nil, nil, rule, tracker, t0.Add(time.Second), nil)
		if len(tracker.since) != 0 {
			t.Errorf("tracker still holds %v", tracker.since)
		}
	})
}

func TestOneShotBusy(t *testing.T) {
	rule := BusyRule{MinCPUPercent: 50, Window: 20 * time.Second}
	g := gpu.State{Driver: "550", Devices: []gpu.Device{{Index: 0}}}
	tests := []struct {
		name    string
		age     time.Duration
		cpuTime float64
		want    bool
	}{
		{"busy all its life, older than the window", time.Minute, 45, true},
		{"busy, younger than the window", 10 * time.Second, 10, false},
		{"mostly idle", time.Hour, 60, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := proc(10, 1, "libtorch_cpu.so")
			p.CPUTimeSeconds = tt.cpuTime
			r := rowOf(t, Classify([]Proc{p}, g, nil, nil, rule, nil, t0.Add(tt.age), nil), 10)
			if r.JobOnCPU != tt.want {
				t.Errorf("JobOnCPU = %v (busy for %s), want %v", r.JobOnCPU, r.BusyFor, tt.want)
			}
		})
	}
}

func TestGPUList(t *testing.T) {
	for _, tc := range []struct {
		gpus []int
		want string
	}{{[]int{0}, "GPU 0"}, {[]int{0, 1}, "GPUs 0 and 1"}, {[]int{0, 2, 3}, "GPUs 0, 2 and 3"}, {nil, "a GPU"}} {
		if got := gpuList(tc.gpus); got != tc.want {
			t.Errorf("gpuList(%v) = %q, want %q", tc.gpus, got, tc.want)
		}
	}
}
