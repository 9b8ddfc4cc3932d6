package engine_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gpucanary/gpucanary/monitor"
	"github.com/gpucanary/gpucanary/monitor/engine"
	"github.com/gpucanary/gpucanary/monitor/monitortest"
	"github.com/gpucanary/gpucanary/monitor/pyenv/pyenvtest"
)

// TestEmbeddedOverwriteIsCaught: ComfyUI portable's embedded Python is
// watched like any environment: a custom node's requirements replacing
// its CUDA torch with a CPU build (pip swapping the dist-info and
// version.py in Lib\site-packages) is CUDA_WHEEL_REPLACED, with the
// embedded Python's own pip as the fix.
func TestEmbeddedOverwriteIsCaught(t *testing.T) {
	env, err := pyenvtest.ComfyUIPortable(filepath.Join(t.TempDir(), "ComfyUI_windows_portable"), pyenvtest.Spec{Python: "3.12",
		Torch: &pyenvtest.Torch{DistVersion: "2.5.1+cu121", CUDA: "12.1", Installer: "pip"}})
	if err != nil {
		t.Fatal(err)
	}
	e := monitortest.Start(t, engine.Options{Paths: []string{env}})
	if got := e.M.State().Envs; len(got) != 1 || got[0].Torch() == nil || got[0].Torch().CUDA != "12.1" || got[0].App != "ComfyUI portable" {
		t.Fatalf("initial state: %+v", got)
	}
	site := filepath.Join(env, "Lib", "site-packages")
	cpu := filepath.Join(site, "torch-2.5.1+cpu.dist-info")
	if err := os.Rename(filepath.Join(site, "torch-2.5.1+cu121.dist-info"), cpu); err != nil {
		t.Fatal(err)
	}
	meta, err := os.ReadFile(filepath.Join(cpu, "METADATA"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(cpu, "METADATA"), []byte(strings.Replace(string(meta), "Version: 2.5.1+cu121", "Version: 2.5.1+cpu", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(site, "torch", "version.py"), []byte("__version__ = '2.5.1+cpu'\ndebug = False\ncuda = None\nhip = None\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, lib := range []string{"torch_cuda.dll"} {
		_ = os.Remove(filepath.Join(site, "torch", "lib", lib))
	}
	ev := e.Wait(10*time.Second, kind(monitor.KindCUDAWheelReplaced, env))
	if ev.After == nil || ev.After.Version != "2.5.1+cpu" {
		t.Errorf("after = %+v", ev.After)
	}
	if py := filepath.Join(env, "python.exe"); !strings.HasPrefix(ev.Fix, py+" -s -m pip install ") {
		t.Errorf("fix = %q, want the embedded Python's own pip", ev.Fix)
	}
}
