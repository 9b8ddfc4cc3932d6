package pyenv_test

import (
	"testing"
	"time"

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
	// installed an hour ago, as a user's environment was: a file written
	// within filefacts.Racy is read afresh on every read
	must(b, pyenvtest.DateBack(root, time.Hour))
	// with its facts kept, as the command line's and the engine's
	// readers keep them
	rd, _ := freshReader()
	for b.Loop() {
		env, err := rd.Inspect(root, pyenv.InspectOptions{})
		if err != nil || env.Torch() == nil {
			b.Fatal(err)
		}
	}
}
