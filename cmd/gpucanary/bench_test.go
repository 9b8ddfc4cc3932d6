package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/gpucanary/gpucanary/monitor/pyenv/pyenvtest"
)

// benchEnvs builds n healthy environments with torch, torchvision,
// torchaudio and the nvidia runtime wheels at the versions torch pins, as
// `pip install torch` leaves them: no finding, so no repair is planned.
// Their files are dated an hour back, as an environment installed before
// it is checked is: what was just written is read afresh every time
// (filefacts.Racy), which no user's environment is.
func benchEnvs(b *testing.B, n int) []string {
	b.Helper()
	root := b.TempDir()
	var paths []string
	for i := 0; i < n; i++ {
		p := filepath.Join(root, fmt.Sprintf("proj%02d", i), ".venv")
		err := pyenvtest.Write(p, pyenvtest.Spec{
			Torch:  &pyenvtest.Torch{DistVersion: "2.5.1+cu121", CUDA: "12.1", Installer: "pip"},
			Vision: &pyenvtest.Companion{Version: "0.20.1+cu121", CUDA: "12.1"},
			Audio:  &pyenvtest.Companion{Version: "2.5.1+cu121", CUDA: "12.1"},
		})
		if err != nil {
			b.Fatal(err)
		}
		paths = append(paths, p)
	}
	if err := pyenvtest.DateBack(root, time.Hour); err != nil {
		b.Fatal(err)
	}
	return paths
}

var (
	cliOnce sync.Once
	cliPath string
	cliErr  error
)

// cliBinary builds the GUI-free binary once, as `make cli` does.
func cliBinary(b *testing.B) string {
	cliOnce.Do(func() {
		dir, err := os.MkdirTemp("", "gpucanary-bench")
		if err != nil {
			cliErr = err
			return
		}
		cliPath = filepath.Join(dir, "gpucanary-cli")
		out, err := exec.Command("go", "build", "-tags", "nogui", "-o", cliPath, ".").CombinedOutput()
		if err != nil {
			cliErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if cliErr != nil {
		b.Fatal(cliErr)
	}
	return cliPath
}

// BenchmarkCheck20Envs is `gpucanary check --json` over 20 environments,
// end to end: process start, discovery of the given paths, reading, rules,
// JSON. Its peer is BenchmarkPython20Interpreters.
func BenchmarkCheck20Envs(b *testing.B) {
	paths := benchEnvs(b, 20)
	sim := filepath.Join(b.TempDir(), "gpu.json")
	if err := os.WriteFile(sim, []byte(simA100), 0o644); err != nil {
		b.Fatal(err)
	}
	bin := cliBinary(b)
	args := append([]string{"--gpu-sim", sim, "check", "--json"}, paths...)
	// The file facts the first run keeps are in the benchmark's own
	// cache folder: the runs measured are a user's check run again.
	cache := b.TempDir()
	check := func() {
		cmd := exec.Command(bin, args...)
		cmd.Env = append(os.Environ(), "XDG_CONFIG_HOME="+b.TempDir(), "XDG_CACHE_HOME="+cache)
		if out, err := cmd.Output(); err != nil && len(out) == 0 {
			b.Fatalf("check: %v", err)
		}
	}
	check()
	for b.Loop() {
		check()
	}
}

// BenchmarkPython20Interpreters is what a script does without GPU Canary:
// one Python interpreter per environment reading torch's metadata (not even
// importing torch, which would take seconds more).
func BenchmarkPython20Interpreters(b *testing.B) {
	py, err := exec.LookPath("python3")
	if err != nil {
		b.Skip("no python3")
	}
	paths := benchEnvs(b, 20)
	var sites []string
	for _, p := range paths {
		m, _ := filepath.Glob(filepath.Join(p, "lib", "python*", "site-packages"))
		sites = append(sites, m[0])
	}
	const script = "import sys, importlib.metadata as m; sys.path.insert(0, sys.argv[1]); print(m.version('torch'))"
	for b.Loop() {
		for _, s := range sites {
			if out, err := exec.Command(py, "-c", script, s).CombinedOutput(); err != nil {
				b.Fatalf("python: %v\n%s", err, out)
			}
		}
	}
}
