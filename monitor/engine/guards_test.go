package engine_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gpucanary/gpucanary/monitor"
	"github.com/gpucanary/gpucanary/monitor/engine"
	"github.com/gpucanary/gpucanary/monitor/guard"
	"github.com/gpucanary/gpucanary/monitor/monitortest"
	"github.com/gpucanary/gpucanary/monitor/pyenv/pyenvtest"
)

// TestGuardChangedByHandIsAnEvent: the engine shows a guarded
// environment as guarded, and a guard file removed by hand is one
// GUARD_CHANGED event, in history, never a notification.
func TestGuardChangedByHandIsAnEvent(t *testing.T) {
	root := t.TempDir()
	env, state := filepath.Join(root, ".venv"), filepath.Join(root, "state")
	if err := pyenvtest.Write(env, pyenvtest.Spec{Torch: &pyenvtest.Torch{DistVersion: "2.5.1+cu124", CUDA: "12.4", Installer: "pip"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := (guard.Keeper{StateDir: state}).Guard(env); err != nil {
		t.Fatal(err)
	}
	e := monitortest.Start(t, engine.Options{Paths: []string{env}, Guards: state})
	if st := e.M.State(); len(st.Envs) != 1 || !st.Envs[0].Guarded {
		t.Fatalf("engine state: guarded %v", st.Envs)
	}
	if err := os.Remove(filepath.Join(env, "pip.conf")); err != nil {
		t.Fatal(err)
	}
	ev := e.Wait(10*time.Second, monitortest.Kind(monitor.KindGuardChanged, env))
	if ev.Notify || !strings.Contains(ev.Message, "pip.conf removed") || !strings.Contains(ev.Message, "gpucanary unguard --force "+env) {
		t.Errorf("event: %+v", ev)
	}
	if st := e.M.State(); st.Envs[0].Guarded || len(st.Envs[0].GuardChanged) != 1 {
		t.Errorf("after the removal: guarded %v, changed %v", st.Envs[0].Guarded, st.Envs[0].GuardChanged)
	}
}
