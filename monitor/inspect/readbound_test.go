package inspect

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gpucanary/gpucanary/monitor"
	"github.com/gpucanary/gpucanary/monitor/finding"
	"github.com/gpucanary/gpucanary/monitor/gpu"
	"github.com/gpucanary/gpucanary/monitor/health"
	"github.com/gpucanary/gpucanary/monitor/pyenv"
	"github.com/gpucanary/gpucanary/monitor/pyenv/envsearch"
	"github.com/gpucanary/gpucanary/monitor/pyenv/pyenvtest"
)

// TestAStuckReadHoldsNothing: an environment whose read never returns
// (a hung file system, which no open flag can prevent) is reported
// unreadable after ReadTimeout; the others are read as usual, a second
// read of the stuck one answers at once without starting another, and a
// cancelled context ends the wait.
func TestAStuckReadHoldsNothing(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good", ".venv")
	hung := filepath.Join(dir, "hung", ".venv")
	for _, p := range []string{good, hung} {
		if err := pyenvtest.Write(p, pyenvtest.Spec{Torch: &pyenvtest.Torch{DistVersion: "2.5.1+cu121", CUDA: "12.1"}}); err != nil {
			t.Fatal(err)
		}
	}
	release := make(chan struct{})
	calls := make(chan string, 10)
	old, oldTimeout := readEnv, ReadTimeout
	readEnv = func(_ *pyenv.Reader, p string, _ pyenv.InspectOptions) (*pyenv.Env, error) {
		calls <- p
		if p == hung {
			<-release
		}
		return pyenv.Inspect(p)
	}
	ReadTimeout = 200 * time.Millisecond
	t.Cleanup(func() { close(release); readEnv, ReadTimeout = old, oldTimeout })

	res := Check(context.Background(), nil, gpu.State{}, []envsearch.Found{{Path: hung}, {Path: good}}, health.Options{})
	if res.Envs[1].Torch() == nil || res.Envs[1].Verdict == monitor.VerdictError {
		t.Errorf("the good environment was not read: %+v", res.Envs[1])
	}
	if f := res.Envs[0].Findings; len(f) != 1 || f[0].Code != finding.CodeEnvUnreadable || !strings.Contains(f[0].Message, "not answering") {
		t.Errorf("the stuck environment: %+v", f)
	}
	for len(calls) > 0 {
		<-calls
	}
	// Again: answered at once, and no second read is started.
	r := InspectOne(context.Background(), nil, envsearch.Found{Path: hung}, gpu.State{}, health.Options{})
	if !strings.Contains(r.Findings[0].Message, "has still not returned") {
		t.Errorf("second read: %s", r.Findings[0].Message)
	}
	if len(calls) != 0 {
		t.Errorf("a second read of a stuck environment was started: %s", <-calls)
	}
	// A cancelled context does not wait for the deadline.
	ReadTimeout = time.Hour
	other := filepath.Join(dir, "other")
	readEnv = func(_ *pyenv.Reader, p string, _ pyenv.InspectOptions) (*pyenv.Env, error) {
		<-release
		return nil, nil
	}
	ctx, cancel := context.WithCancel(context.Background())
	go func() { time.Sleep(50 * time.Millisecond); cancel() }()
	done := make(chan monitor.EnvReport, 1)
	go func() { done <- InspectOne(ctx, nil, envsearch.Found{Path: other}, gpu.State{}, health.Options{}) }()
	select {
	case r := <-done:
		if r.Verdict != monitor.VerdictError {
			t.Errorf("cancelled read: %+v", r)
		}
	case <-time.After(time.Minute):
		t.Fatal("a cancelled read waited")
	}
}
