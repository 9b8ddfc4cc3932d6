package words

import (
	"strings"
	"testing"

	"github.com/gpucanary/gpucanary/monitor"
	"github.com/gpucanary/gpucanary/monitor/gpu"
	"github.com/gpucanary/gpucanary/monitor/procs"
)

// TestSummaryJobsAreNotGraphics: a display server holding GPU memory is
// not a "job on GPU" in the summary the tray shows, and a job computing
// on the CPU is not counted among the jobs on the GPU (CountJobs's own
// test counts the same rows).
func TestSummaryJobsAreNotGraphics(t *testing.T) {
	row := func(pid int, v procs.Verdict, graphics bool) monitor.Process {
		return monitor.Process{Row: procs.Row{Proc: procs.Proc{PID: pid}, Verdict: v, Graphics: graphics}}
	}
	rows := []monitor.Process{
		row(1, procs.VerdictGPU, false),      // train.py
		row(2, procs.VerdictGPU, true),       // Xorg
		row(3, procs.VerdictGPU, true),       // gnome-shell
		row(4, procs.VerdictCUDAIdle, false), // a CUDA build computing on the CPU
		row(5, procs.VerdictCPU, false),      // a CPU build
		row(6, procs.VerdictOther, false),
	}
	s := monitor.State{GPU: gpu.State{Driver: "550.54.15", Devices: []gpu.Device{{Name: "A100"}}}, Processes: rows}
	if got, want := Summarize(s).String(), "1 GPU · 1 job on GPU · 0 envs"; got != want {
		t.Errorf("Summary = %q, want %q", got, want)
	}
	s.Processes = rows[1:3]
	if got := Summarize(s).String(); got != "1 GPU · 0 jobs on GPU · 0 envs" {
		t.Errorf("only graphics: %q", got)
	}
	// A crashed job's PID, still listed by the driver, is no job on the
	// GPU: the summary says it is orphaned.
	s.Processes = []monitor.Process{row(7, procs.VerdictOrphaned, false)}
	if got := Summarize(s).String(); got != "1 GPU · 0 jobs on GPU · 1 orphaned PID · 0 envs" {
		t.Errorf("an orphaned PID: %q", got)
	}
}

// TestSummarySaysSearchIncomplete: a search cut short by its budget is
// never silent in the summary, from the engine or from a one-shot check
// (whose SearchStopped gives a reason when the search gave none).
func TestSummarySaysSearchIncomplete(t *testing.T) {
	s := monitor.State{SearchStopped: "the search of /home/me stopped at its budget of 200000 entries"}
	if got := Summarize(s).String(); !strings.HasSuffix(got, " · search incomplete") {
		t.Errorf("Summary = %q", got)
	}
	if got := Summarize(monitor.State{}).String(); strings.Contains(got, "incomplete") {
		t.Errorf("complete search: Summary = %q", got)
	}
	check := func(r monitor.CheckResult) string {
		return Summarize(monitor.State{GPU: r.GPU, Envs: r.Envs, SearchStopped: SearchStopped(r)}).String()
	}
	if got := check(monitor.CheckResult{Complete: false}); !strings.Contains(got, "search incomplete") {
		t.Errorf("a check cut short: %q", got)
	}
	if got := check(monitor.CheckResult{Complete: true}); strings.Contains(got, "incomplete") {
		t.Errorf("a complete check: %q", got)
	}
	if got := SearchStopped(monitor.CheckResult{SearchStopped: "the deadline passed"}); got != "the deadline passed" {
		t.Errorf("SearchStopped kept its reason as %q", got)
	}
}

// TestSummarySaysWSL: under WSL2 the tray's status says so, since the
// process list is thinner there.
func TestSummarySaysWSL(t *testing.T) {
	g := gpu.State{Driver: "566.36", WSL: true, Devices: []gpu.Device{{Name: "NVIDIA GeForce RTX 4090"}}}
	if got := Summarize(monitor.State{GPU: g}).String(); !strings.HasPrefix(got, "1 GPU (WSL)") {
		t.Errorf("Summary = %q", got)
	}
	g.WSL = false
	if got := Summarize(monitor.State{GPU: g}).String(); strings.Contains(got, "WSL") {
		t.Errorf("Summary = %q", got)
	}
}

// TestSummaryChecked: check's last line and the status line are the same
// count: both say the environments, the broken ones and the warned ones,
// and the line under a listing says 0 rather than leaving a count out.
func TestSummaryChecked(t *testing.T) {
	envs := []monitor.EnvReport{{Verdict: monitor.VerdictError}, {Verdict: monitor.VerdictWarning}, {Verdict: monitor.VerdictOK}, {Verdict: monitor.VerdictNoTorch}}
	s := Summarize(monitor.State{GPU: gpu.State{Simulated: true, Devices: []gpu.Device{{}, {}}}, Envs: envs})
	if got, want := s.Checked(), "4 environments checked: 1 with errors, 1 with warnings."; got != want {
		t.Errorf("Checked = %q, want %q", got, want)
	}
	if got, want := s.String(), "2 GPUs (simulated) · 4 envs · 1 env broken · 1 warning"; got != want {
		t.Errorf("String = %q, want %q", got, want)
	}
	if got, want := Summarize(monitor.State{Envs: envs[2:3]}).Checked(), "1 environment checked: 0 with errors, 0 with warnings."; got != want {
		t.Errorf("one environment: %q, want %q", got, want)
	}
	if got, want := Summarize(monitor.State{}).String(), "no NVIDIA driver · 0 envs"; got != want {
		t.Errorf("no driver: %q, want %q", got, want)
	}
}

// TestVerdictWord: the views name a verdict in words (the JSON keeps the
// code), and a verdict a newer engine adds still shows, as its code.
func TestVerdictWord(t *testing.T) {
	for v, want := range map[monitor.Verdict]string{monitor.VerdictOK: "OK", monitor.VerdictError: "ERROR", monitor.VerdictNoTorch: "NO TORCH", "stale": "STALE"} {
		if got := VerdictWord(v); got != want {
			t.Errorf("VerdictWord(%q) = %q, want %q", v, got, want)
		}
	}
	if n := len(VerdictWords()); n != 4 {
		t.Errorf("VerdictWords has %d words, want 4", n)
	}
}
