package link

import (
	"encoding/json"
	"io"
	"testing"
	"time"

	"github.com/gpucanary/gpucanary/monitor"
	"github.com/gpucanary/gpucanary/monitor/gpu"
	"github.com/gpucanary/gpucanary/monitor/pyenv"
)

// TestEnvsSameKeepsTheEnvironments: a state sent with EnvsSame replaces
// the GPU and the rest and keeps the environments last sent; one without
// it replaces them too.
func TestEnvsSameKeepsTheEnvironments(t *testing.T) {
	r, w := io.Pipe()
	enc := json.NewEncoder(w)
	envs := []monitor.EnvReport{{Env: &pyenv.Env{Path: "/a/.venv"}, Verdict: monitor.VerdictOK}}
	go func() {
		enc.Encode(ToWindows{Hello: &Hello{State: monitor.State{Envs: envs}}})
		enc.Encode(ToWindows{State: &monitor.State{GPU: gpu.State{Driver: "1"}}, EnvsSame: true})
	}()
	tr, err := dial(r, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	waitState := func(driver string) monitor.State {
		t.Helper()
		deadline := time.Now().Add(5 * time.Second)
		for {
			if s := tr.State(); s.GPU.Driver == driver {
				return s
			}
			if time.Now().After(deadline) {
				t.Fatalf("no state with driver %q", driver)
			}
			time.Sleep(time.Millisecond)
		}
	}
	if s := waitState("1"); len(s.Envs) != 1 || s.Envs[0].Path != "/a/.venv" {
		t.Errorf("after EnvsSame: envs %v, want the hello's", s.Envs)
	}
	go enc.Encode(ToWindows{State: &monitor.State{GPU: gpu.State{Driver: "2"}}})
	if s := waitState("2"); len(s.Envs) != 0 {
		t.Errorf("after a whole state with none: envs %v, want none", s.Envs)
	}
	w.Close()
}
