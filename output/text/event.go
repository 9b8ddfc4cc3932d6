package text

import (
	"strings"

	"github.com/gpucanary/gpucanary/monitor"
	"github.com/gpucanary/gpucanary/monitor/human"
	"github.com/gpucanary/gpucanary/output/words"
)

// Event prints one event of `gpucanary watch`: local time, kind, the
// environment it is about (every event that has one names it, so lines
// from several environments read apart), message, and the fix command
// beneath when it has one.
func (p Printer) Event(e monitor.Event) {
	c := dim
	switch {
	case e.Kind == monitor.KindCUDAWheelReplaced || e.Kind == monitor.KindJobOnCPU:
		c = red
	case e.Finding != nil && e.Finding.Severity == "error" && e.Kind == monitor.KindFindingRaised:
		c = red
	case e.Kind == monitor.KindFindingCleared || e.Kind == monitor.KindJobOnCPUCleared:
		c = green
	case e.Kind == monitor.KindJobEnded && e.Job != nil && e.Job.How == "crashed":
		c = red
	case e.Kind == monitor.KindJobEnded && e.Job != nil && e.Job.How == "finished":
		c = green
	case e.Notify:
		c = yellow
	}
	env := safe("")
	if e.Env != "" {
		env = safe(human.Visible(p.short(e.Env)) + "  ")
	}
	p.printf("%s  %s  %s%s\n", e.Time.Local().Format("2006-01-02 15:04:05"), p.paint(c, string(e.Kind)), env, e.Message)
	if e.Fix != "" {
		p.printf("    fix: %s\n", e.Fix)
	}
}

// Watching is what `gpucanary watch` prints once its first read is done,
// before any event: the GPU it sees (or that there is no driver, or that
// it is simulated) and every environment it watches with how it was found.
func (p Printer) Watching(st monitor.State) {
	p.GPU(st.GPU)
	if len(st.Envs) == 0 {
		p.printf("Watching no environment yet: none was found. Pass a path: gpucanary watch PATH\n")
	} else {
		p.printf("Watching %s:\n", words.Count(len(st.Envs), "environment", "environments"))
	}
	for _, e := range st.Envs {
		torch := "no torch"
		if t := e.Torch(); t != nil {
			torch = "torch " + t.Version
		}
		// Said as check says it (manager, Python), and how it came to be
		// watched when a person chose it.
		meta := words.EnvMeta(e)
		if e.Via == "argument" || e.Via == "cwd" || (e.Via != "" && strings.ToUpper(e.Via) == e.Via) {
			meta = append(meta, foundVia(e.Via))
		}
		p.printf("  %s  %s  %s  %s\n", p.paint(bold, p.short(e.Path)), p.paint(dim, "("+strings.Join(meta, ", ")+")"), torch, p.verdict(e.Verdict))
	}
	// Said as check says it: why, and how to reach what it missed.
	if !st.DiscoveryComplete && len(st.Envs) > 0 {
		stopped := words.SearchStopped(monitor.CheckResult{Complete: false, SearchStopped: st.SearchStopped})
		p.printf("  %s\n", p.paint(yellow, words.SearchIncomplete(stopped, "watch", "watched")))
	}
}

// foundVia words how an environment a person chose came to be watched:
// named, the current folder, or the active environment's variable.
func foundVia(via string) string {
	switch via {
	case "argument":
		return "named on the command line"
	case "cwd":
		return "in the current folder"
	}
	return "from $" + via // VIRTUAL_ENV, CONDA_PREFIX: the active environment
}
