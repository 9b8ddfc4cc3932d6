package text

import (
	"fmt"

	"github.com/gpucanary/gpucanary/monitor"
)

// Event prints one event of `gpucanary watch`: local time, kind, message,
// and the fix command beneath when it has one.
func (p Printer) Event(e monitor.Event) {
	c := dim
	switch {
	case e.Kind == monitor.KindCUDAWheelReplaced || e.Kind == monitor.KindJobOnCPU:
		c = red
	case e.Finding != nil && e.Finding.Severity == "error" && e.Kind == monitor.KindFindingRaised:
		c = red
	case e.Kind == monitor.KindFindingCleared || e.Kind == monitor.KindJobOnCPUCleared:
		c = green
	case e.Notify:
		c = yellow
	}
	fmt.Fprintf(p.W, "%s  %s  %s\n", e.Time.Local().Format("2006-01-02 15:04:05"), p.paint(c, string(e.Kind)), e.Message)
	if e.Fix != "" {
		fmt.Fprintf(p.W, "    fix: %s\n", e.Fix)
	}
}
