//go:build !windows

package envsearch_test

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/gpucanary/gpucanary/monitor/pyenv/envsearch"
	"github.com/gpucanary/gpucanary/monitor/pyenv/managers"
	"github.com/gpucanary/gpucanary/monitor/pyenv/pyenvtest"
)

func mkfifo(t *testing.T, path string) {
	t.Helper()
	must(t, os.RemoveAll(path))
	must(t, syscall.Mkfifo(path, 0o644))
}

// TestFIFOsResolve: a FIFO where a file or a folder of an environment
// belongs leaves the environment one (pyenv's TestFIFOsAreNamed says
// what Inspect reports of it), so a path typed to it resolves to itself,
// and Resolve waits on none of them.
func TestFIFOsResolve(t *testing.T) {
	site := func(root string) string { return filepath.Join(root, "lib", "python3.11", "site-packages") }
	dist := func(root string) string { return filepath.Join(site(root), "torch-2.5.1+cu121.dist-info") }
	for _, tt := range []struct {
		name string
		fifo func(root string) string
	}{
		{"pyvenv.cfg", func(root string) string { return filepath.Join(root, "pyvenv.cfg") }},
		{"torch/version.py", func(root string) string { return filepath.Join(site(root), "torch", "version.py") }},
		{"the torch folder", func(root string) string { return filepath.Join(site(root), "torch") }},
		{"torch/lib", func(root string) string { return filepath.Join(site(root), "torch", "lib") }},
		{"the dist-info", dist},
		{"METADATA", func(root string) string { return filepath.Join(dist(root), "METADATA") }},
		{"site-packages", site},
		{"lib", func(root string) string { return filepath.Join(root, "lib") }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			root := filepath.Join(t.TempDir(), ".venv")
			must(t, pyenvtest.Write(root, pyenvtest.Spec{Torch: &pyenvtest.Torch{DistVersion: "2.5.1+cu121", CUDA: "12.1", Installer: "pip\n"}}))
			mkfifo(t, tt.fifo(root))
			if r, err := envsearch.Resolve(root, managers.Where{}); err != nil || r.Env != root {
				t.Fatalf("Resolve = %+v, %v", r, err)
			}
		})
	}
}
