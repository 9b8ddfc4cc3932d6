package presenttest

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/gpucanary/gpucanary/monitor/engine"
	"github.com/gpucanary/gpucanary/monitor/monitortest"
	"github.com/gpucanary/gpucanary/monitor/pyenv/pyenvtest"
)

// A100 is a simulated A100 on driver 550, 40 % busy.
const A100 = `{"driver": "550.54.15", "cuda_driver": "12.4",
 "devices": [{"name": "NVIDIA A100-SXM4-40GB", "uuid": "GPU-0000", "compute_capability": "8.0",
              "memory_total_bytes": 42949672960, "utilization_gpu_percent": 40, "processes": []}]}`

// Engine runs an engine (monitortest's harness) over a good and a broken
// environment (real files) with the GPU of scenario, until the test ends,
// and returns it once it has read them.
func Engine(t testing.TB, scenario string) (*engine.Monitor, []string) {
	t.Helper()
	root := t.TempDir()
	good, bad := filepath.Join(root, "good", ".venv"), filepath.Join(root, "llm", ".venv")
	if err := pyenvtest.Write(good, pyenvtest.Spec{Torch: &pyenvtest.Torch{DistVersion: "2.5.1+cu121", CUDA: "12.1"}}); err != nil {
		t.Fatal(err)
	}
	if err := pyenvtest.Write(bad, pyenvtest.Spec{Manager: "uv", Torch: &pyenvtest.Torch{DistVersion: "2.10.0", Installer: "uv"}}); err != nil {
		t.Fatal(err)
	}
	e := monitortest.Start(t, engine.Options{Paths: []string{good, bad}, GPU: monitortest.SimGPU(t, scenario), Interval: 2 * time.Second})
	return e.M, []string{good, bad}
}
