package tray

import (
	"testing"

	"github.com/gpucanary/gpucanary/app/link"
	"github.com/gpucanary/gpucanary/app/present/presenttest"
	"github.com/gpucanary/gpucanary/monitor"
	"github.com/gpucanary/gpucanary/monitor/gpu"
	"github.com/gpucanary/gpucanary/monitor/pyenv"
)

// TestStateMessageSendsEnvironmentsWhenChanged: the windows process gets
// the environments with the first state, when they change and after a
// hello, and only the rest (EnvsSame) otherwise; the GPU always.
func TestStateMessageSendsEnvironmentsWhenChanged(t *testing.T) {
	a := []monitor.EnvReport{{Env: &pyenv.Env{Path: "/a/.venv"}, Verdict: monitor.VerdictOK}}
	b := []monitor.EnvReport{{Env: &pyenv.Env{Path: "/a/.venv"}, Verdict: monitor.VerdictError}}
	h := start(t, presenttest.A100, nil)
	tr := h.tr
	steps := []struct {
		name  string
		envs  []monitor.EnvReport
		hello bool
		same  bool
	}{
		{"first", a, false, false},
		{"unchanged", a, false, true},
		{"unchanged again", a, false, true},
		{"changed", b, false, false},
		{"unchanged after the change", b, false, true},
		{"after a hello", b, true, false},
		{"unchanged after the hello", b, false, true},
	}
	for i, st := range steps {
		if st.hello {
			tr.Hello()
		}
		s := monitor.State{GPU: gpu.State{Driver: string(rune('a' + i))}, Envs: st.envs}
		var m link.ToWindows
		done := make(chan struct{})
		tr.do(func() { m = tr.stateMessage(s); close(done) }) // on the loop, as render
		<-done
		if m.State == nil || m.State.GPU.Driver != s.GPU.Driver {
			t.Fatalf("%s: no state with the GPU: %+v", st.name, m)
		}
		if m.EnvsSame != st.same || (st.same && m.State.Envs != nil) || (!st.same && len(m.State.Envs) != len(st.envs)) {
			t.Errorf("%s: EnvsSame %v with %d envs, want EnvsSame %v", st.name, m.EnvsSame, len(m.State.Envs), st.same)
		}
	}
}
