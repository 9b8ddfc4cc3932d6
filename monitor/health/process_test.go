package health

import (
	"strings"
	"testing"
	"time"

	"github.com/gpucanary/gpucanary/monitor/finding"
	"github.com/gpucanary/gpucanary/monitor/procs"
)

func TestCheckProcess(t *testing.T) {
	script := "import mmap, sys\nx = 0\nwhile True:\n    x += 1\n" + strings.Repeat("# padding ünïcode\n", 10)
	cpu := procs.Row{Proc: procs.Proc{PID: 17566, Name: "python", Cmdline: []string{"/home/ada/llm/.venv/bin/python", "-c", script}, EnvPath: "/home/ada/llm/.venv"},
		Verdict: procs.VerdictCPU, Reason: "torch is a CPU-only build (libtorch_cpu without libtorch_cuda), although an NVIDIA GPU is present",
		BusyFor: 25 * time.Second, JobOnCPU: true}
	fs := CheckProcess(cpu)
	if len(fs) != 1 || fs[0].Code != finding.CodeJobOnCPU || fs[0].Severity != finding.SeverityError || fs[0].PID != 17566 || fs[0].Env != cpu.EnvPath {
		t.Fatalf("findings %+v", fs)
	}
	msg := fs[0].Message
	for _, want := range []string{"(PID 17566) in /home/ada/llm/.venv has been busy on the CPU for 25s: torch is a CPU-only build", "`/home/ada/llm/.venv/bin/python -c import mmap, sys x = 0 while True: x += 1"} {
		if !strings.Contains(msg, want) {
			t.Errorf("message %q lacks %q", msg, want)
		}
	}
	if strings.Contains(msg, "\n") || strings.Count(msg, "NVIDIA GPU is present") != 1 || !strings.Contains(msg, "…`") {
		t.Errorf("message is not one line, repeats itself or is not cut: %q", msg)
	}

	idle := cpu
	idle.Verdict, idle.Reason = procs.VerdictCUDAIdle, "a CUDA build is loaded, but the process holds no GPU memory"
	if fs := CheckProcess(idle); len(fs) != 1 || fs[0].Severity != finding.SeverityWarning {
		t.Errorf("cuda-idle: %+v", fs)
	}
	calm := cpu
	calm.JobOnCPU = false
	if fs := CheckProcess(calm); fs != nil {
		t.Errorf("a process not busy for the window: %+v", fs)
	}
}
