package text

import (
	"strings"

	"github.com/gpucanary/gpucanary/monitor"
	"github.com/gpucanary/gpucanary/monitor/finding"
	"github.com/gpucanary/gpucanary/monitor/gpu"
	"github.com/gpucanary/gpucanary/monitor/human"
	"github.com/gpucanary/gpucanary/monitor/pyenv"
	"github.com/gpucanary/gpucanary/output/words"
)

// Check prints `gpucanary check`'s answer: the GPU, the machine's
// findings, each environment (errors first, then warnings, then the
// healthy ones; those with neither torch nor anything to say one line per
// manager at the end), and a summary line.
func (p Printer) Check(r monitor.CheckResult) {
	p.GPU(r.GPU)
	for _, f := range r.Findings {
		p.Finding(f, "  ")
	}
	if len(r.Envs) == 0 {
		p.printf("\nNo Python environments found. Pass a path: gpucanary check PATH\n")
	} else {
		shown, bare := quietOrder(r.Envs)
		for _, e := range shown {
			p.Env(e)
		}
		p.bare(bare)
		p.printf("\n%s\n", words.Summarize(monitor.State{Envs: r.Envs}).Checked())
	}
	// A search cut short is never silent: what it did not reach is not
	// listed, and says so.
	if stopped := words.SearchStopped(r); stopped != "" {
		p.printf("%s\n", p.paint(yellow, words.SearchIncomplete(stopped, "check", "listed")))
	}
}

// GPU prints the driver and one line per device.
func (p Printer) GPU(g gpu.State) { p.gpu(g, false) }

// gpu prints the driver and each device, with its live numbers beneath it
// when stats is set (ps).
func (p Printer) gpu(g gpu.State, stats bool) {
	sim := safe("")
	if g.Simulated {
		sim = p.paint(yellow, " [simulated]")
	}
	if g.WSL {
		sim += " (WSL)"
	}
	if !g.HasDriver() {
		p.printf("GPU   %s%s\n", words.NoDriver, sim)
		return
	}
	cuda := g.CUDADriver
	if cuda == "" && g.CUDADriverDerived != "" {
		// the driver did not say; its version's floor does
		cuda = "≥ " + g.CUDADriverDerived + " (derived from the driver version)"
	}
	p.printf("GPU   driver %s · CUDA %s%s\n", g.Driver, orDash(cuda), sim)
	for _, d := range g.Devices {
		arch := d.Architecture
		if arch != "" {
			arch += ", "
		}
		state := safe("")
		if d.Asleep {
			state = " · asleep"
		}
		if d.Lost {
			state = " · " + p.paint(red, "lost (not answering the driver)")
		}
		sm := "compute capability not known"
		if d.ComputeCapability != "" {
			sm = "sm_" + strings.ReplaceAll(d.ComputeCapability, ".", "")
		}
		p.printf("  %d  %s (%s%s) · %s%s\n", d.Index, d.Name, arch, sm, human.Bytes(d.MemoryTotalBytes), state)
		if stats {
			p.deviceStats(d)
		}
		if d.Error != "" {
			p.printf("     %s\n", p.paint(yellow, d.Error))
		}
	}
}

// Env prints one environment: its path, what it is, its verdict, the
// packages that matter and its findings.
func (p Printer) Env(e monitor.EnvReport) {
	head := p.short(e.Path)
	meta := words.EnvMeta(e)
	p.printf("\n%s  %s  %s\n", p.paint(bold, head), p.paint(dim, "("+strings.Join(meta, ", ")+")"), p.verdict(e.Verdict))
	if len(e.GuardChanged) > 0 {
		p.printf("  %s\n", p.paint(dim, "guard changed by hand: "+strings.Join(e.GuardChanged, "; ")+" (gpucanary unguard --force, then gpucanary guard, sets it again)"))
	}
	if e.Via == "argument" && strings.Contains(e.From, "→") {
		p.printf("  %s\n", p.paint(dim, "resolved: "+e.From))
	}
	for _, name := range []string{pyenv.Torch, pyenv.TorchVision, pyenv.TorchAudio, pyenv.BitsAndBytes, pyenv.LlamaCppPython} {
		if pkg := e.Packages[name]; pkg != nil {
			p.printf("  %-17s %-22s %s\n", name, pkg.Version, pyenv.Describe(name, pkg))
			if folder, says, ok := e.Origin(pkg); ok {
				// Not the environment's own copy: a user-site torch that
				// hides a conda env's reads as if it were the env's.
				p.printf("  %-17s %s\n", "", p.paint(dim, "loaded from "+p.short(folder)+" ("+says+")"))
			}
		}
	}
	if e.Torch() == nil && e.Packages != nil {
		p.printf("  %s\n", p.paint(dim, "torch is not installed"))
	}
	p.kernels(e)
	for _, f := range e.Findings {
		p.Finding(f, "  ")
	}
}

// verdict is an environment's verdict in words' word, coloured by how
// bad it is.
func (p Printer) verdict(v monitor.Verdict) safe {
	c := dim
	switch v {
	case monitor.VerdictError:
		c = red
	case monitor.VerdictWarning:
		c = yellow
	case monitor.VerdictOK:
		c = green
	}
	return p.paint(c, words.VerdictWord(v))
}

// Finding prints one finding after indent, and its fix command beneath.
func (p Printer) Finding(f finding.Finding, indent string) {
	mark, c := "i", dim
	switch f.Severity {
	case finding.SeverityError:
		mark, c = "✗", red
	case finding.SeverityWarning:
		mark, c = "!", yellow
	}
	p.printf("%s%s %s  %s\n", indent, p.paint(c, mark), p.paint(c, f.Code), f.Message)
	if f.Fix != "" {
		p.printf("%s    fix: %s\n", indent, f.Fix)
	}
}
