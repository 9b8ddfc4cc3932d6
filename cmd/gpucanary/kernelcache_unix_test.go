//go:build unix

package main

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gpucanary/gpucanary/monitor/fatbin/fatbintest"
	"github.com/gpucanary/gpucanary/monitor/filefacts"
	"github.com/gpucanary/gpucanary/monitor/pyenv/pyenvtest"
)

// nobody plays another local user: giving a file to it needs root.
const nobody = 65534

func needRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("SKIPPED: giving a folder to another user (uid 65534) needs root")
	}
}

// runProgram runs the program as a user would, with env added.
func runProgram(t *testing.T, env []string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := programCommand(t, args...)
	cmd.Env = append(cmd.Env, env...)
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if err != nil && cmd.ProcessState == nil {
		t.Fatal(err)
	}
	return out.String(), errb.String(), cmd.ProcessState.ExitCode()
}

// TestCheckRefusesSharedCacheFolder: with XDG_CACHE_HOME a folder all
// can write (sticky, as /tmp) where another user made the gpucanary
// folder, check of a CPU torch says TORCH_CPU_BUILD and exits 1, in
// text and JSON, says once that the cache folder was not used and why,
// and writes nothing into it.
func TestCheckRefusesSharedCacheFolder(t *testing.T) {
	needRoot(t)
	t.Setenv("NO_COLOR", "1")
	shared := filepath.Join(t.TempDir(), "shared")
	if err := os.Mkdir(shared, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(shared, 0o777|fs.ModeSticky); err != nil {
		t.Fatal(err)
	}
	theirs := filepath.Join(shared, "gpucanary")
	if err := os.MkdirAll(filepath.Join(theirs, "file-facts"), 0o777); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{theirs, filepath.Join(theirs, "file-facts")} {
		if err := os.Chmod(p, 0o777); err != nil {
			t.Fatal(err)
		}
		if err := os.Chown(p, nobody, nobody); err != nil {
			t.Fatal(err)
		}
	}
	venv := filepath.Join(t.TempDir(), "venv")
	if err := writeSpec(venv, incidentsSpec("uv-cpu-overwrite")); err != nil {
		t.Fatal(err)
	}
	// installed an hour ago: what a run keeps (file facts, answers) it
	// would keep of this environment
	if err := pyenvtest.DateBack(venv, time.Hour); err != nil {
		t.Fatal(err)
	}
	env := []string{"XDG_CACHE_HOME=" + shared, "XDG_CONFIG_HOME=" + t.TempDir(), kernelCacheVariable + "="}
	sim := simFile(t, simA100)
	for _, args := range [][]string{{"check", venv}, {"check", "--json", venv}} {
		out, stderr, code := runProgram(t, env, append([]string{"--gpu-sim", sim}, args...)...)
		if code != exitFound || !strings.Contains(out, "TORCH_CPU_BUILD") {
			t.Fatalf("%s: exit %d (want %d), no TORCH_CPU_BUILD:\n%s\n%s", args, code, exitFound, out, stderr)
		}
		warning := "the cache folder was not used"
		if n := strings.Count(stderr, warning); n != 1 || !strings.Contains(stderr, theirs) ||
			!strings.Contains(stderr, "owner nobody") || !strings.Contains(stderr, "drwxrwxrwx") {
			t.Errorf("%s: the warning, said %d times, does not name %s, its owner and mode:\n%s", args, n, theirs, stderr)
		}
	}
	filepath.WalkDir(theirs, func(p string, d fs.DirEntry, err error) error {
		if p != theirs && p != filepath.Join(theirs, "file-facts") {
			t.Errorf("%s was written into another user's cache folder", p)
		}
		return nil
	})
}

// TestCheckIgnoresPlantedKernels: a kernel fact that says a CUDA library
// carries sm_61 turns the finding a GTX 1080 Ti gets (torch's
// GPU_ARCH_UNSUPPORTED, llama.cpp's CUDA_KERNELS_MISSING) into OK while
// it is the user's own (the plant works); the same file given to another
// user is not believed, and the library's own kernels decide.
func TestCheckIgnoresPlantedKernels(t *testing.T) {
	needRoot(t)
	t.Setenv("NO_COLOR", "1")
	for _, tc := range []struct {
		name string
		spec pyenvtest.Spec
		rel  string
		code string
	}{
		{"torch", pyenvtest.Spec{Torch: &pyenvtest.Torch{DistVersion: "2.5.1+cu121", CUDA: "12.1", Installer: "pip"}},
			"torch/lib/libtorch_cuda.so", "GPU_ARCH_UNSUPPORTED"},
		{"llama", pyenvtest.Spec{Llama: &pyenvtest.Llama{Version: "0.3.16", Backends: []string{"cuda"}}},
			"llama_cpp/lib/libggml-cuda.so", "CUDA_KERNELS_MISSING"},
	} {
		t.Run(tc.name, func(t *testing.T) { plantedKernels(t, tc.spec, tc.rel, tc.code) })
	}
}

func plantedKernels(t *testing.T, spec pyenvtest.Spec, rel, code string) {
	root := filepath.Join(t.TempDir(), "venv")
	if err := pyenvtest.Write(root, spec); err != nil {
		t.Fatal(err)
	}
	lib, err := pyenvtest.PutRealLibrary(root, spec, rel, fatbintest.MustLoad(fatbintest.LinuxGGML))
	if err != nil {
		t.Fatal(err)
	}
	installed := time.Now().Add(-time.Hour)
	if err := pyenvtest.DateBack(root, time.Hour); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(lib, installed, installed); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(lib)
	if err != nil {
		t.Fatal(err)
	}
	cache := t.TempDir()
	factsDir := filepath.Join(cache, "gpucanary", "file-facts")
	plant := func() []string {
		s := &filefacts.Store{}
		if err := s.UseDir(factsDir); err != nil {
			t.Fatal(err)
		}
		// the form fatbin.Cache keeps: runtime, containers, SASS, PTX
		s.Put("fatbin", lib, filefacts.Of(fi), "k\x00143\x0061 86 89 120 121\x0075 80 90")
		if err := s.Flush(); err != nil {
			t.Fatal(err)
		}
		files, _ := filepath.Glob(filepath.Join(factsDir, "*.facts"))
		return files
	}
	env := []string{"XDG_CACHE_HOME=" + cache, "XDG_CONFIG_HOME=" + t.TempDir(), kernelCacheVariable + "="}
	sim := simFile(t, simGPU("NVIDIA GeForce GTX 1080 Ti", "6.1"))

	plant()
	if out, stderr, exit := runProgram(t, env, "--gpu-sim", sim, "check", root); strings.Contains(out, code) {
		t.Fatalf("the user's own planted fact was not used (exit %d, %s): the test plants nothing\n%s\n%s", exit, code, out, stderr)
	}
	for _, file := range plant() {
		if err := os.Chown(file, nobody, nobody); err != nil {
			t.Fatal(err)
		}
	}
	out, stderr, exit := runProgram(t, env, "--gpu-sim", sim, "check", root)
	if exit != exitFound || !strings.Contains(out, code) || !strings.Contains(out, "sm_61") {
		t.Fatalf("another user's fact decided: exit %d, want %d with %s:\n%s\n%s", exit, exitFound, code, out, stderr)
	}
}
