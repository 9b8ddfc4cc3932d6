package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"
)

// jobScript maps the libraries it is given, says "ready" and sleeps: a
// real process whose /proc/PID/maps shows a CUDA build of torch. It is
// several lines, as `python -c` jobs are.
const jobScript = `import mmap, sys, time
files = [open(p, 'rb') for p in sys.argv[1:]]
maps = [mmap.mmap(f.fileno(), 0, prot=mmap.PROT_READ) for f in files]
print('ready', flush=True)
time.sleep(120)
`

// startJob runs python3 -c jobScript with the fake torch libraries of
// venv mapped, VIRTUAL_ENV pointing at venv, and env added.
func startJob(t *testing.T, py, venv string, env ...string) int {
	t.Helper()
	lib := filepath.Join(venv, "lib", "python3.12", "site-packages", "torch", "lib")
	cmd := exec.Command(py, "-c", jobScript, filepath.Join(lib, "libtorch_cpu.so"), filepath.Join(lib, "libtorch_cuda.so"))
	cmd.Args[0] = "python3" // short, so that the script's first newline falls inside the column
	cmd.Env = slices.DeleteFunc(os.Environ(), func(kv string) bool {
		return strings.HasPrefix(kv, "VIRTUAL_ENV=") || strings.HasPrefix(kv, "CONDA_PREFIX=") || strings.HasPrefix(kv, "CUDA_VISIBLE_DEVICES=")
	})
	cmd.Env = append(append(cmd.Env, "VIRTUAL_ENV="+venv), env...)
	if line, _ := startReading(t, cmd).ReadString('\n'); line != "ready\n" {
		t.Fatalf("job said %q, not ready", line)
	}
	return cmd.Process.Pid
}

// startReading starts cmd, its stderr the test's, and returns its
// standard output; it is killed when the test ends.
func startReading(t *testing.T, cmd *exec.Cmd) *bufio.Reader {
	t.Helper()
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	return bufio.NewReader(out)
}

// TestPsCommand runs `gpucanary ps` over two real python jobs of one CUDA
// build: one NVML (simulated) shows holding memory, one started with
// CUDA_VISIBLE_DEVICES empty. The table keeps each process on one line
// although their command lines hold a script of several; the JSON carries
// the verdicts and the reason names the variable.
func TestPsCommand(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc")
	}
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("no python3")
	}
	// The interpreter itself, not a shim (pyenv's) that execs another.
	exe, err := exec.Command("python3", "-c", "import sys; print(sys.executable)").Output()
	if err != nil {
		t.Fatal(err)
	}
	py := strings.TrimSpace(string(exe))
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	venv := filepath.Join(t.TempDir(), "venv")
	lib := filepath.Join(venv, "lib", "python3.12", "site-packages", "torch", "lib")
	if err := os.MkdirAll(lib, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"libtorch_cpu.so", "libtorch_cuda.so"} {
		if err := os.WriteFile(filepath.Join(lib, name), []byte("\x7fELF not really"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	onGPU := startJob(t, py, venv)
	hidden := startJob(t, py, venv, "CUDA_VISIBLE_DEVICES=")
	sim := simFile(t, fmt.Sprintf(`{"driver": "550.54.15", "cuda_driver": "12.4",
 "devices": [{"name": "NVIDIA A100-SXM4-40GB", "uuid": "GPU-0000", "compute_capability": "8.0",
              "memory_total_bytes": 42949672960, "processes": [{"pid": %d, "used_memory_bytes": 2147483648}]}]}`, onGPU))

	out, stderr, code := runCLI(t, "--gpu-sim", sim, "ps")
	if code != 0 {
		t.Fatalf("ps: exit %d\n%s%s", code, out, stderr)
	}
	lines := map[int]string{}
	for _, l := range strings.Split(out, "\n") {
		for _, pid := range []int{onGPU, hidden} {
			if f := strings.Fields(l); len(f) > 1 && f[1] == fmt.Sprint(pid) {
				lines[pid] = l
			}
		}
		if strings.HasPrefix(strings.TrimSpace(l), "files = ") || strings.HasPrefix(strings.TrimSpace(l), "time.sleep") {
			t.Errorf("a command line's script spilled onto its own line: %q\n%s", l, out)
		}
	}
	// The script's lines joined by spaces, whole: piped, nothing is cut.
	oneLine := "python3 -c import mmap, sys, time files = [open(p, 'rb') for p in sys.argv[1:]] maps = [mmap.mmap(f.fileno(), 0, prot=mmap.PROT_READ) for f in files] print('ready', flush=True) time.sleep(120) "
	for pid, want := range map[int][]string{
		onGPU:  {"2.0 GiB", " gpu ", oneLine},
		hidden: {"cuda-idle", oneLine},
	} {
		for _, w := range want {
			if !strings.Contains(lines[pid], w) {
				t.Errorf("PID %d's line %q lacks %q\n%s", pid, lines[pid], w, out)
			}
		}
	}
	// The row off the GPU says why beneath it.
	if !strings.Contains(out, "\n     a CUDA build is loaded, but CUDA_VISIBLE_DEVICES is empty in its environment, which hides every GPU: it computes on the CPU\n") {
		t.Errorf("the reason for cuda-idle is not under its row:\n%s", out)
	}
	if !strings.Contains(out, "[simulated]") {
		t.Errorf("a simulated GPU is not said to be simulated:\n%s", out)
	}

	out, stderr, code = runCLI(t, "--gpu-sim", sim, "ps", "--json")
	if code != 0 {
		t.Fatalf("ps --json: exit %d\n%s", code, stderr)
	}
	var got struct {
		Hostname  string    `json:"hostname"`
		QueryTime time.Time `json:"query_time"`
		Processes []struct {
			PID                int      `json:"pid"`
			Verdict            string   `json:"verdict"`
			Reason             string   `json:"reason"`
			Env                string   `json:"env"`
			Cmdline            []string `json:"cmdline"`
			CUDAVisibleDevices *string  `json:"cuda_visible_devices"`
			GPUMemoryBytes     *uint64  `json:"gpu_memory_bytes"`
		} `json:"processes"`
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("ps --json: %v\n%s", err, out)
	}
	// As gpustat's JSON: which host, and when.
	if host, _ := os.Hostname(); got.Hostname != host || time.Since(got.QueryTime) > time.Hour || got.QueryTime.After(time.Now()) {
		t.Errorf("ps --json: hostname %q (want %q), query_time %s", got.Hostname, host, got.QueryTime)
	}
	seen := 0
	for _, p := range got.Processes {
		switch p.PID {
		case onGPU:
			seen++
			if p.Verdict != "gpu" || p.GPUMemoryBytes == nil || *p.GPUMemoryBytes != 2<<30 || p.Env != venv || p.CUDAVisibleDevices != nil {
				t.Errorf("GPU job = %+v", p)
			}
		case hidden:
			seen++
			if p.Verdict != "cuda-idle" || p.CUDAVisibleDevices == nil || *p.CUDAVisibleDevices != "" ||
				!strings.Contains(p.Reason, "CUDA_VISIBLE_DEVICES is empty") || p.Env != venv {
				t.Errorf("job with CUDA_VISIBLE_DEVICES= : %+v", p)
			}
			// JSON keeps the arguments as they are: the script's newlines.
			if len(p.Cmdline) < 3 || p.Cmdline[2] != jobScript {
				t.Errorf("cmdline = %q", p.Cmdline)
			}
		}
	}
	if seen != 2 {
		t.Errorf("%d of the 2 jobs listed:\n%s", seen, out)
	}
}

// TestPsWatchJSONIsOneObjectALine runs `ps --watch --json` as a script
// would, its output a pipe: each refresh is one line holding one whole
// JSON object (JSON lines, as watch --json writes), never an indented
// document spread over many lines.
func TestPsWatchJSONIsOneObjectALine(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	lines := startReading(t, programCommand(t, "--gpu-sim", simFile(t, simA100), "ps", "--watch", "--json"))
	for i := range 2 { // the first refresh and the next
		line, err := lines.ReadString('\n')
		if err != nil {
			t.Fatalf("refresh %d: %v after %q", i, err, line)
		}
		var refresh struct {
			Hostname  string            `json:"hostname"`
			Processes []json.RawMessage `json:"processes"`
		}
		if err := json.Unmarshal([]byte(line), &refresh); err != nil || refresh.Processes == nil {
			t.Fatalf("refresh %d is not one JSON object on its line (%v): %q", i, err, line)
		}
	}
}
