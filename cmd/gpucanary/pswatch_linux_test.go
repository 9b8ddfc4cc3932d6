package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// openPTY opens a pseudo-terminal of cols×rows: the controller end the
// test types into and reads from, and the terminal end the program gets.
func openPTY(t *testing.T, cols, rows uint16) (ctl, tty *os.File) {
	t.Helper()
	ctl, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals: %v", err)
	}
	var unlock int32
	if _, _, e := unix.Syscall(unix.SYS_IOCTL, ctl.Fd(), unix.TIOCSPTLCK, uintptr(unsafe.Pointer(&unlock))); e != 0 {
		t.Fatalf("unlockpt: %v", e)
	}
	n, err := unix.IoctlGetUint32(int(ctl.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Fatalf("ptsname: %v", err)
	}
	tty, err = os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := unix.IoctlSetWinsize(int(tty.Fd()), unix.TIOCSWINSZ, &unix.Winsize{Col: cols, Row: rows}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ctl.Close(); tty.Close() })
	return ctl, tty
}

// TestPsWatchIsATop runs `ps --watch` on an 80-column terminal as a user
// would: a header with the time and each GPU's utilization, memory,
// temperature and power ("-" for what the driver does not say), rows that
// never wrap, q to quit, and the terminal as it was afterwards.
func TestPsWatchIsATop(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	ctl, tty := openPTY(t, 80, 24)
	before, err := unix.IoctlGetTermios(int(tty.Fd()), unix.TCGETS)
	if err != nil {
		t.Fatal(err)
	}
	// A real job with a long command line, shown on the simulated GPU.
	venv := filepath.Join(t.TempDir(), "a-rather-long-project-name", ".venv")
	lib := filepath.Join(venv, "lib", "python3.12", "site-packages", "torch", "lib")
	if err := os.MkdirAll(lib, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"libtorch_cpu.so", "libtorch_cuda.so"} {
		if err := os.WriteFile(filepath.Join(lib, name), []byte("\x7fELF not really"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	py := pythonOrSkip(t)
	job := startJob(t, py, venv)
	sim := simFile(t, fmt.Sprintf(`{"driver": "550.54.15", "cuda_driver": "12.4",
 "devices": [{"name": "NVIDIA A100-SXM4-40GB", "compute_capability": "8.0", "memory_total_bytes": 42949672960,
              "utilization_gpu_percent": 87, "temperature_c": 65, "power_watts": 251.4, "power_limit_watts": 400,
              "processes": [{"pid": %d, "used_memory_bytes": 2147483648}]},
             {"name": "Tesla T4", "compute_capability": "7.5", "memory_total_bytes": 16106127360, "processes": []}]}`, job))

	cmd := programCommand(t, "--gpu-sim", sim, "ps", "--watch")
	cmd.Stdin, cmd.Stdout, cmd.Stderr = tty, tty, tty
	cmd.Env = append(cmd.Env, "TERM=xterm", "NO_COLOR=")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var screen lockedBuffer
	copied := make(chan struct{})
	go func() { defer close(copied); io.Copy(&screen, ctl) }()
	// Wait for the first table, then press q.
	waitFor(t, &screen, "python3 -c")
	if _, err := ctl.Write([]byte("q")); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	select {
	case err := <-exited:
		if err != nil {
			t.Errorf("ps --watch after q: %v\n%s", err, screen.String())
		}
	case <-time.After(20 * time.Second):
		cmd.Process.Kill()
		t.Fatalf("q did not quit ps --watch:\n%s", screen.String())
	}
	after, err := unix.IoctlGetTermios(int(tty.Fd()), unix.TCGETS)
	if err != nil {
		t.Fatal(err)
	}
	if after.Lflag != before.Lflag {
		t.Errorf("the terminal's mode was not restored: lflag %#x, was %#x", after.Lflag, before.Lflag)
	}
	out := regexp.MustCompile(`\x1b\[[0-9;]*m`).ReplaceAllString(screen.String(), "")
	for _, want := range []string{
		"gpucanary ps", "every 2s · q quits",
		"util 87%  temp 65°C  power 251 / 400 W  mem [",
		"util -  temp -  power -  mem [",
		"2.0 GiB", "python3 -c",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the screen lacks %q:\n%s", want, out)
		}
	}
	plain := strings.ReplaceAll(out, "\x1b[H\x1b[2J", "\n")
	sc := bufio.NewScanner(strings.NewReader(plain))
	for sc.Scan() {
		line := strings.TrimRight(sc.Text(), "\r")
		if n := len([]rune(line)); n > 80 {
			t.Errorf("a line of %d columns wraps an 80-column terminal: %q", n, line)
		}
	}
}

// pythonOrSkip is the python3 interpreter itself (not a shim).
func pythonOrSkip(t *testing.T) string {
	t.Helper()
	exe, err := exec.Command("python3", "-c", "import sys; print(sys.executable)").Output()
	if err != nil {
		t.Skipf("no python3: %v", err)
	}
	return strings.TrimSpace(string(exe))
}

// waitFor waits until the screen shows s (a condition, not a clock: the
// deadline only ends a test that would otherwise hang).
func waitFor(t *testing.T, screen *lockedBuffer, s string) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for !strings.Contains(screen.String(), s) {
		if time.Now().After(deadline) {
			t.Fatalf("the screen never showed %q:\n%s", s, screen.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}
