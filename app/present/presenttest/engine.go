package presenttest

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/gpucanary/gpucanary/monitor"
	"github.com/gpucanary/gpucanary/monitor/gpu"
	"github.com/gpucanary/gpucanary/monitor/pyenv/pyenvtest"
)

// A100 is a simulated A100 on driver 550, 40 % busy.
const A100 = `{"driver": "550.54.15", "cuda_driver": "12.4",
 "devices": [{"name": "NVIDIA A100-SXM4-40GB", "uuid": "GPU-0000", "compute_capability": "8.0",
              "memory_total_bytes": 42949672960, "utilization_gpu_percent": 40, "processes": []}]}`

// Engine runs a monitor over a good and a broken environment (real
// files) until the test ends, and returns it once it has read them.
func Engine(t testing.TB, scenario string) (*monitor.Monitor, []string) {
	t.Helper()
	root := t.TempDir()
	good, bad := filepath.Join(root, "good", ".venv"), filepath.Join(root, "llm", ".venv")
	if err := pyenvtest.Write(good, pyenvtest.Spec{Torch: &pyenvtest.Torch{DistVersion: "2.5.1+cu121", CUDA: "12.1"}}); err != nil {
		t.Fatal(err)
	}
	if err := pyenvtest.Write(bad, pyenvtest.Spec{Manager: "uv", Torch: &pyenvtest.Torch{DistVersion: "2.10.0", Installer: "uv"}}); err != nil {
		t.Fatal(err)
	}
	sim := filepath.Join(root, "gpu.json")
	os.WriteFile(sim, []byte(scenario), 0o644)
	b := gpu.Open(gpu.Options{SimFile: sim})
	t.Cleanup(func() { b.Close() })
	m := monitor.New(monitor.Options{Paths: []string{good, bad}, GPU: b, Rediscover: -1})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); m.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	deadline := time.Now().Add(5 * time.Second)
	for !m.State().Started {
		if time.Now().After(deadline) {
			t.Fatal("engine did not start")
		}
		time.Sleep(10 * time.Millisecond)
	}
	return m, []string{good, bad}
}
