//go:build !windows

package pyenv_test

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gpucanary/gpucanary/monitor/pyenv"
	"github.com/gpucanary/gpucanary/monitor/pyenv/pyenvtest"
)

// TestFIFOsNeverBlock: FIFOs planted where version.py, METADATA,
// INSTALLER and pyvenv.cfg belong, and where site-packages belongs, are
// read as problems at once, never waited on.
func TestFIFOsNeverBlock(t *testing.T) {
	root := filepath.Join(t.TempDir(), ".venv")
	if err := pyenvtest.Write(root, pyenvtest.Spec{Torch: &pyenvtest.Torch{DistVersion: "2.5.1+cu121", CUDA: "12.1", Installer: "pip\n"}}); err != nil {
		t.Fatal(err)
	}
	sp, err := filepath.Glob(filepath.Join(root, "lib", "python3*", "site-packages"))
	if err != nil || len(sp) != 1 {
		t.Fatalf("site-packages: %v %v", sp, err)
	}
	dist, _ := filepath.Glob(filepath.Join(sp[0], "torch-*.dist-info"))
	for _, p := range []string{filepath.Join(sp[0], "torch", "version.py"), filepath.Join(dist[0], "METADATA"), filepath.Join(dist[0], "INSTALLER")} {
		if err := os.Remove(p); err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		if err := syscall.Mkfifo(p, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	done := make(chan *pyenv.Env, 1)
	go func() {
		env, err := pyenv.Inspect(root)
		if err != nil {
			t.Error(err)
		}
		done <- env
	}()
	select {
	case env := <-done:
		if env == nil {
			return
		}
		var all []string
		for _, p := range env.Problems {
			all = append(all, p.Message)
		}
		if tp := env.Torch(); tp != nil {
			for _, p := range tp.Problems {
				all = append(all, p.Message)
			}
		}
		if !strings.Contains(strings.Join(all, "\n"), "a FIFO") {
			t.Errorf("the FIFOs are not reported: %q", all)
		}
	case <-time.After(time.Minute):
		t.Fatal("Inspect blocked on a FIFO")
	}

	// The whole environment folder's pyvenv.cfg as a FIFO, and a FIFO
	// given where an environment is expected.
	cfg := filepath.Join(root, "pyvenv.cfg")
	os.Remove(cfg)
	if err := syscall.Mkfifo(cfg, 0o644); err != nil {
		t.Fatal(err)
	}
	fifoEnv := filepath.Join(t.TempDir(), "fifo-env")
	if err := syscall.Mkfifo(fifoEnv, 0o644); err != nil {
		t.Fatal(err)
	}
	done2 := make(chan struct{})
	go func() {
		defer close(done2)
		pyenv.Inspect(root)
		if _, err := pyenv.Inspect(fifoEnv); err == nil {
			t.Error("a FIFO inspected as an environment")
		}
	}()
	select {
	case <-done2:
	case <-time.After(time.Minute):
		t.Fatal("Inspect blocked on a FIFO pyvenv.cfg or a FIFO path")
	}
}
