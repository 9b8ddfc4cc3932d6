//go:build linux || windows

package procs

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gpucanary/gpucanary/monitor/gpu"
)

// The test binary doubles as the workload: with GPUCANARY_PROCS_HELPER set
// it loads the libraries named in GPUCANARY_PROCS_MAP (mapped on Linux,
// LoadLibrary on Windows: helper_linux_test.go, helper_windows_test.go),
// as a Python process with torch imported has them, then spins or sleeps.
func TestMain(m *testing.M) {
	if mode := os.Getenv("GPUCANARY_PROCS_HELPER"); mode != "" {
		helper(mode)
		return
	}
	os.Exit(m.Run())
}

func helper(mode string) {
	if mode == "late" {
		// Load only when told to: a Python process importing torch after
		// it started.
		fmt.Println("ready")
		bufio.NewReader(os.Stdin).ReadString('\n')
		mode = "sleep"
	}
	var libs []string
	for _, path := range filepath.SplitList(os.Getenv("GPUCANARY_PROCS_MAP")) {
		if path != "" {
			libs = append(libs, path)
		}
	}
	keep, err := loadLibs(libs)
	if err != nil {
		fmt.Println("error", err)
		os.Exit(1)
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

// fixtureEnv makes a venv in this platform's layout (sitePackagesOf)
// with the given runtime libraries in site-packages/torch/lib, and
// returns ENV and the library paths.
func fixtureEnv(t *testing.T, libs ...string) (string, []string) {
	t.Helper()
	env := filepath.Join(t.TempDir(), "proj", ".venv")
	libdir := filepath.Join(sitePackagesOf(env), "torch", "lib")
	if err := os.MkdirAll(libdir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(env, "pyvenv.cfg"), []byte("home = /usr/bin\nversion = 3.11.7\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, l := range libs {
		p := filepath.Join(libdir, l)
		writeLib(t, p)
		paths = append(paths, p)
	}
	return env, paths
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
		writeLib(t, p)
		paths = append(paths, p)
	}
	return paths
}

// libNames are this platform's file names of the libraries with the
// given stems ("torch_cuda": libtorch_cuda.so, torch_cuda.dll).
func libNames(stems ...string) []string {
	out := make([]string, len(stems))
	for i, s := range stems {
		out[i] = libName(s)
	}
	return out
}

type helperProc struct {
	cmd   *exec.Cmd
	child int
	in    io.WriteCloser
	out   *bufio.Scanner
}

// startHelper runs the test binary as a workload loading libs.
func startHelper(t *testing.T, mode string, libs []string, extraEnv ...string) *helperProc {
	t.Helper()
	return startHelperAs(t, os.Args[0], mode, libs, extraEnv...)
}

// startHelperAs runs the test binary through exe (a link to it, or a
// copy, named like an interpreter).
func startHelperAs(t *testing.T, exe, mode string, libs []string, extraEnv ...string) *helperProc {
	t.Helper()
	return startHelperCmd(t, exec.Command(exe, "-test.run=^$"), mode, libs, extraEnv...)
}

// startHelperCmd runs cmd, a command running the test binary, as a
// workload, with an environment free of the test run's own VIRTUAL_ENV,
// CONDA_PREFIX and CUDA_VISIBLE_DEVICES.
func startHelperCmd(t *testing.T, cmd *exec.Cmd, mode string, libs []string, extraEnv ...string) *helperProc {
	t.Helper()
	cmd.Env = slices.DeleteFunc(os.Environ(), func(kv string) bool {
		k, _, _ := strings.Cut(strings.ToUpper(kv), "=")
		return k == "VIRTUAL_ENV" || k == "CONDA_PREFIX" || k == "CUDA_VISIBLE_DEVICES"
	})
	cmd.Env = append(cmd.Env, "GPUCANARY_PROCS_HELPER="+mode, "GPUCANARY_PROCS_MAP="+strings.Join(libs, string(os.PathListSeparator)))
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
			if c, err := os.FindProcess(h.child); err == nil {
				c.Kill()
			}
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

func scanTwice(t *testing.T, s Source) []Proc {
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

// findProc is the process pid in ps.
func findProc(t *testing.T, ps []Proc, pid int) Proc {
	t.Helper()
	for _, p := range ps {
		if p.PID == pid {
			return p
		}
	}
	t.Fatalf("PID %d not scanned", pid)
	return Proc{}
}
