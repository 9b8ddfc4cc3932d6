package pyenvtest_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gpucanary/gpucanary/monitor/pyenv"
	"github.com/gpucanary/gpucanary/monitor/pyenv/pyenvtest"
	"github.com/gpucanary/gpucanary/monitor/pyenv/pyspec"
)

// TestWriteWheelShape checks the fixture files look like the real wheels of
// each release: nvidia-* Requires-Dist from 2.5, the xpu field from 2.6, xpu
// in __all__ from 2.8, the unannotated legacy form.
func TestWriteWheelShape(t *testing.T) {
	tests := []struct {
		torch                             pyenvtest.Torch
		nvidiaReq, xpuLine, xpuAll, annot bool
	}{
		{pyenvtest.Torch{DistVersion: "2.4.1+cu121", CUDA: "12.1"}, false, false, false, true},
		{pyenvtest.Torch{DistVersion: "2.5.1", CUDA: "12.4"}, true, false, false, true},
		{pyenvtest.Torch{DistVersion: "2.6.0+cu126", CUDA: "12.6"}, true, true, false, true},
		{pyenvtest.Torch{DistVersion: "2.8.0+cu128", CUDA: "12.8"}, true, true, true, true},
		{pyenvtest.Torch{DistVersion: "1.12.1+cu116", CUDA: "11.6", LegacyVersionPy: true}, false, false, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.torch.DistVersion, func(t *testing.T) {
			root := t.TempDir()
			tc := tt.torch
			if err := pyenvtest.Write(root, pyenvtest.Spec{Torch: &tc}); err != nil {
				t.Fatal(err)
			}
			site := filepath.Join(root, "lib", "python3.11", "site-packages")
			f, err := os.Open(filepath.Join(site, "torch-"+tc.DistVersion+".dist-info", "METADATA"))
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			m, err := pyspec.ParseMetadata(f)
			if err != nil || m.Name != "torch" || m.Version != tc.DistVersion {
				t.Fatalf("METADATA = %+v, %v", m, err)
			}
			nv := strings.Contains(strings.Join(m.RequiresDist, "\n"), "nvidia-cublas")
			vp, err := os.ReadFile(filepath.Join(site, "torch", "version.py"))
			if err != nil {
				t.Fatal(err)
			}
			s := string(vp)
			got := []bool{nv, strings.Contains(s, "\nxpu: Optional[str]"), strings.Contains(s, "'hip', 'xpu']"), strings.Contains(s, "cuda: Optional[str] = '")}
			want := []bool{tt.nvidiaReq, tt.xpuLine, tt.xpuAll, tt.annot}
			for i := range got {
				if got[i] != want[i] {
					t.Errorf("nvidia-req, xpu line, xpu in __all__, annotated = %v, want %v\n%s", got, want, s)
					break
				}
			}
			if _, err := pyenv.ParseVersionPy(vp); err != nil {
				t.Errorf("version.py does not parse: %v", err)
			}
			if _, err := os.Stat(filepath.Join(site, "torch", "lib", "libtorch_cuda.so")); err != nil {
				t.Errorf("default libs: %v", err)
			}
		})
	}
}

func TestWriteErrors(t *testing.T) {
	root := t.TempDir()
	for name, s := range map[string]pyenvtest.Spec{
		"unknown manager":       {Manager: "poetry"},
		"conda build, no torch": {CondaTorchBuild: "py3.11_cpu_0"},
	} {
		t.Run(name, func(t *testing.T) {
			err := pyenvtest.Write(filepath.Join(root, "env"), s)
			if err == nil || !strings.Contains(err.Error(), root) {
				t.Errorf("Write = %v, want an error naming the path", err)
			}
		})
	}
}

// TestUserSite: a spec's torch lands in home's user site for its Python,
// with nothing of an environment around it.
func TestUserSite(t *testing.T) {
	home := t.TempDir()
	site, err := pyenvtest.UserSite(home, pyenvtest.Spec{Python: "3.12", Torch: &pyenvtest.Torch{DistVersion: "2.5.1+cpu"}})
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(home, ".local", "lib", "python3.12", "site-packages"); site != want {
		t.Errorf("site = %s, want %s", site, want)
	}
	for _, f := range []string{"torch/version.py", "torch-2.5.1+cpu.dist-info/METADATA"} {
		if _, err := os.Stat(filepath.Join(site, f)); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
	if _, err := os.Stat(filepath.Join(home, ".local", "pyvenv.cfg")); err == nil {
		t.Error("a pyvenv.cfg was written beside the user site")
	}
}
