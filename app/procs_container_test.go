package app

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"

	"github.com/gpucanary/gpucanary/monitor"
	"github.com/gpucanary/gpucanary/monitor/procs"
)

// TestProcessesWindowSaysTheContainer: the line about the selected process
// names its pod and container; a process on the host names none.
func TestProcessesWindowSaysTheContainer(t *testing.T) {
	a := test.NewTempApp(t)
	u := newUI(a, Deps{})
	p := newProcsWindow(u.wins)
	st := goldenState()
	st.Processes = slices.Clone(st.Processes)
	i := slices.IndexFunc(st.Processes, func(r monitor.Process) bool { return r.PID == 4242 })
	st.Processes[i].Container = &procs.Container{ID: strings.Repeat("ab", 32), Runtime: "containerd",
		PodUID: "6e6e2a8c-1b2c-4d3e-8f90-a1b2c3d4e5f6", Pod: "train-llama", Namespace: "ml"}
	p.refresh(st)
	for row, r := range p.rows {
		p.table.Select(widget.TableCellID{Row: row, Col: 0})
		inPod := strings.HasPrefix(p.why.Text, "PID 4242 in pod ml/train-llama, container abababababab (containerd) · python train.py --epochs 10 · gpu: ")
		onHost := strings.HasPrefix(p.why.Text, fmt.Sprintf("PID %d · ", r.PID))
		if (r.PID == 4242) != inPod || (r.PID != 4242) != onHost {
			t.Errorf("PID %d: why = %q", r.PID, p.why.Text)
		}
	}
}
