package pyenv_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/gpucanary/gpucanary/monitor/pyenv"
	"github.com/gpucanary/gpucanary/monitor/pyenv/pyenvtest"
)

// BenchmarkInspect reads one environment with torch, torchvision,
// torchaudio and a dozen nvidia-* packages. Goal: under 1 ms.
func BenchmarkInspect(b *testing.B) {
	root := b.TempDir()
	s := cuda121()
	s.Nvidia = map[string]string{}
	for _, n := range []string{"cublas", "cuda-cupti", "cuda-nvrtc", "cuda-runtime", "cudnn", "cufft", "curand", "cusolver", "cusparse", "nccl", "nvjitlink", "nvtx"} {
		s.Nvidia["nvidia-"+n+"-cu12"] = "12.1.105"
	}
	must(b, pyenvtest.Write(root, s))
	for b.Loop() {
		env, err := pyenv.Inspect(root)
		if err != nil || env.Torch() == nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDiscoverHome walks a home of 40 projects with a venv each among
// 400 other folders.
func BenchmarkDiscoverHome(b *testing.B) {
	home := b.TempDir()
	for i := range 40 {
		must(b, pyenvtest.Write(filepath.Join(home, "code", fmt.Sprintf("p%02d", i), ".venv"), pyenvtest.Spec{Manager: "uv"}))
		for j := range 10 {
			must(b, mkdirAll(filepath.Join(home, "code", fmt.Sprintf("p%02d", i), "src", fmt.Sprintf("m%d", j))))
		}
	}
	o := pyenv.DiscoverOptions{Home: home, Cwd: home, System: []string{}, Getenv: func(string) string { return "" }}
	for b.Loop() {
		if got := discover(context.Background(), o); len(got) != 40 {
			b.Fatalf("found %d environments, want 40", len(got))
		}
	}
}
