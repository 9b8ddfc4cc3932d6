//go:build linux

package fix

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gpucanary/gpucanary/monitor/procs"
)

// jobScript maps the library named by argv[1] as the loader maps
// libtorch, moves to another working folder (argv[2]), says so, and
// waits for its stdin to close.
const jobScript = `import mmap, os, sys
f = open(sys.argv[1], "rb")
m = mmap.mmap(f.fileno(), 0, prot=mmap.PROT_READ)
os.chdir(sys.argv[2])
print("ready", flush=True)
sys.stdin.read()
`

// TestInUseThroughLinks runs real jobs from an environment that is also
// reachable through a symlink, each with the environment's libtorch
// mapped, and asks the guard about the environment by the other name:
// started through the link and asked about the real path, the reverse,
// and started relatively from the parent folder then moved away. Each
// is named; a job of another environment is not.
func TestInUseThroughLinks(t *testing.T) {
	// The interpreter itself, not a launcher (a pyenv shim is a script
	// that starts it under another name).
	host, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("no python3 on PATH to run a job")
	}
	out, err := exec.Command(host, "-c", "import os, sys; print(os.path.realpath(sys.executable))").Output()
	if err != nil {
		t.Fatal(err)
	}
	py := strings.TrimSpace(string(out))
	root := t.TempDir()
	real := filepath.Join(root, "projects", "llm", ".venv")
	writeEnv(t, real, cpuTorch)
	link := filepath.Join(root, "llm-link")
	must(t, os.Symlink(filepath.Join(root, "projects", "llm"), link))
	other := filepath.Join(root, "other", ".venv")
	writeEnv(t, other, cpuTorch)
	for _, env := range []string{real, other} {
		bin := filepath.Join(env, "bin", "python")
		must(t, os.Remove(bin))
		must(t, os.Symlink(py, bin))
	}
	lib := func(env string) string {
		return filepath.Join(env, "lib", "python3.11", "site-packages", "torch", "lib", "libtorch_cpu.so")
	}
	linked := filepath.Join(link, ".venv")
	for _, tc := range []struct {
		name, dir, program, lib, ask string
		want                         bool
	}{
		{"started through the link, asked by the real path", "", filepath.Join(linked, "bin", "python"), lib(linked), real, true},
		{"started by the real path, asked through the link", "", filepath.Join(real, "bin", "python"), lib(real), linked, true},
		{"started relatively, then moved away", filepath.Dir(real), filepath.Join(".venv", "bin", "python"), lib(real), real, true},
		{"started relatively through the link, asked by the real path", link, filepath.Join(".venv", "bin", "python"), lib(real), real, true},
		{"another environment's job", "", filepath.Join(other, "bin", "python"), lib(other), linked, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			job := exec.Command(tc.program, "-c", jobScript, tc.lib, t.TempDir())
			job.Dir = tc.dir
			job.Env = withoutVenv(os.Environ())
			in, err := job.StdinPipe()
			must(t, err)
			out, err := job.StdoutPipe()
			must(t, err)
			job.Stderr = os.Stderr
			must(t, job.Start())
			t.Cleanup(func() { in.Close(); job.Wait() })
			if l, err := bufio.NewReader(out).ReadString('\n'); err != nil || l != "ready\n" {
				t.Fatalf("the job said %q, %v", l, err)
			}
			err = Service{Processes: procs.NewSource(procs.Options{})}.InUse(context.Background(), tc.ask)
			var inUse *InUseError
			named := errors.As(err, &inUse) && strings.Contains(strings.Join(inUse.Processes, ","), fmt.Sprintf("PID %d ", job.Process.Pid))
			if named != tc.want {
				t.Errorf("InUse(%s) = %v; want the job (PID %d) named: %v", tc.ask, err, job.Process.Pid, tc.want)
			}
		})
	}
}

// withoutVenv drops the variables that would attribute a job to an
// environment by name, so that only its paths can.
func withoutVenv(env []string) []string {
	var out []string
	for _, kv := range env {
		if !strings.HasPrefix(kv, "VIRTUAL_ENV=") && !strings.HasPrefix(kv, "CONDA_PREFIX=") {
			out = append(out, kv)
		}
	}
	return out
}
