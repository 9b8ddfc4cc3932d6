package pyenv_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/gpucanary/gpucanary/monitor/pyenv"
	"github.com/gpucanary/gpucanary/monitor/pyenv/pyenvtest"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden from the current output")

// TestInspectGolden pins the whole JSON of a few key environments, with
// paths made relative to the fixture's root.
func TestInspectGolden(t *testing.T) {
	tests := []struct {
		name string
		spec pyenvtest.Spec
	}{
		{"uv-cuda121-posix", func() pyenvtest.Spec {
			s := cuda121()
			s.BNB = &pyenvtest.BNB{Version: "0.45.0", CUDALibs: []string{"121", "124"}}
			return s
		}()},
		{"pypi-cpu-windows", pyenvtest.Spec{Layout: pyenv.LayoutWindows, Torch: &pyenvtest.Torch{DistVersion: "2.5.1", Installer: "pip\n"},
			Llama: &pyenvtest.Llama{Version: "0.3.4"}}},
		{"conda-cuda-posix", pyenvtest.Spec{Manager: "conda", Torch: &pyenvtest.Torch{DistVersion: "2.5.1", CUDA: "12.1"},
			CondaTorchBuild: "py3.11_cuda12.1_cudnn8.9.2_0"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			must(t, pyenvtest.Write(root, tt.spec))
			env, err := pyenv.InspectWith(root, pyenv.InspectOptions{Home: t.TempDir(), Getenv: func(string) string { return "" }})
			must(t, err)
			got, err := json.MarshalIndent(env, "", "  ")
			must(t, err)
			rootJSON, _ := json.Marshal(root)
			got = bytes.ReplaceAll(got, bytes.Trim(rootJSON, `"`), []byte("$ROOT"))
			if filepath.Separator == '\\' { // a Windows host's separators, JSON-escaped
				got = bytes.ReplaceAll(got, []byte(`\\`), []byte("/"))
			}
			got = append(got, '\n')
			path := filepath.Join("testdata", tt.name+".golden")
			if *update {
				must(t, os.WriteFile(path, got, 0o644))
			}
			want, err := os.ReadFile(path)
			must(t, err)
			if !bytes.Equal(got, want) {
				t.Errorf("Inspect JSON differs from %s (run with -update to accept):\n%s", path, got)
			}
		})
	}
}
