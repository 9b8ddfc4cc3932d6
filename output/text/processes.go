package text

import (
	"fmt"
	"strings"

	"github.com/gpucanary/gpucanary/monitor"
	"github.com/gpucanary/gpucanary/monitor/gpu"
	"github.com/gpucanary/gpucanary/monitor/human"
	"github.com/gpucanary/gpucanary/monitor/procs"
)

// Processes prints the nvitop-like table of `gpucanary ps`: the GPU with a
// memory bar per device, then one line per process in the order given,
// its findings (or why it is off the GPU) beneath it.
func (p Printer) Processes(st gpu.State, rows []monitor.Process) {
	p.GPU(st)
	for _, d := range st.Devices {
		if d.MemoryTotalBytes > 0 {
			fmt.Fprintf(p.W, "     memory %s\n", bar(d.MemoryUsedBytes, d.MemoryTotalBytes, 30))
		}
	}
	fmt.Fprintln(p.W)
	if len(rows) == 0 {
		fmt.Fprintln(p.W, "No GPU workloads: no process holds GPU memory or has an ML runtime loaded.")
		return
	}
	fmt.Fprintf(p.W, "%-4s %7s %-9s %-22s %9s %4s %6s %8s %8s %-9s %s\n", "GPU", "PID", "USER", "ENVIRONMENT", "GPU-MEM", "SM%", "CPU%", "RSS", "TIME", "VERDICT", "COMMAND")
	now := p.now()
	for _, r := range rows {
		gpuCol := "-"
		if len(r.GPUs) > 0 {
			gpuCol = fmt.Sprint(r.GPUs[0])
		}
		mem := "n/a"
		if r.GPUMemoryBytes != nil {
			mem = human.Bytes(*r.GPUMemoryBytes)
		}
		sm := "-"
		if r.SMPercent != nil {
			sm = fmt.Sprint(*r.SMPercent)
		}
		env := "-"
		if r.EnvPath != "" {
			env = human.Truncate(p.short(r.EnvPath), 22)
		}
		runtime := "-"
		if !r.StartTime.IsZero() {
			runtime = human.Duration(now.Sub(r.StartTime))
		}
		c := dim
		switch r.Verdict {
		case procs.VerdictGPU:
			c = green
		case procs.VerdictCPU:
			c = red
		case procs.VerdictCUDAIdle:
			c = yellow
		}
		cmd := r.Command()
		cpu, rss := "-", "-" // unknown for a process outside this view, never 0
		if r.Measured() {
			cpu, rss = fmt.Sprintf("%.1f", r.CPUPercent), human.Bytes(r.RSSBytes)
		}
		fmt.Fprintf(p.W, "%-4s %7d %-9s %-22s %9s %4s %6s %8s %8s %s %s\n", gpuCol, r.PID, human.Truncate(r.User, 9), env, mem, sm,
			cpu, rss, runtime, p.paint(c, fmt.Sprintf("%-9s", r.Verdict)), human.Truncate(cmd, 60))
		for _, f := range r.Findings {
			p.Finding(f, "     ")
		}
		// Why a workload is off the GPU, unless a finding already says it.
		if r.Verdict != procs.VerdictGPU && len(r.Findings) == 0 && r.Reason != "" {
			fmt.Fprintf(p.W, "     %s\n", p.paint(dim, r.Reason))
		}
	}
}

func bar(used, total uint64, width int) string {
	n := int(float64(used) / float64(total) * float64(width))
	n = max(0, min(width, n))
	return fmt.Sprintf("[%s%s] %s / %s", strings.Repeat("█", n), strings.Repeat("·", width-n), human.Bytes(used), human.Bytes(total))
}
