package procs

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// The Linux side of the real-process tests (helper_test.go): a runtime
// library is any file, mapped as the loader maps a shared object.

// sleeperMaxPercent is the most CPU a sleeping helper may be charged over
// the 300 ms between two scans: /proc counts CPU time in clock ticks
// (10 ms), and two whole ticks are 6.7 %.
const sleeperMaxPercent = 6.7

// loadLibs maps the first page of each file.
func loadLibs(paths []string) (any, error) {
	var keep [][]byte
	for _, path := range paths {
		f, err := os.Open(path)
		if err != nil {
			return nil, err
		}
		b, err := syscall.Mmap(int(f.Fd()), 0, 4096, syscall.PROT_READ, syscall.MAP_SHARED)
		f.Close()
		if err != nil {
			return nil, err
		}
		keep = append(keep, b)
	}
	return keep, nil
}

// writeLib makes a library file: one that can be mapped.
func writeLib(t *testing.T, path string) {
	t.Helper()
	if err := os.WriteFile(path, make([]byte, 8192), 0o644); err != nil {
		t.Fatal(err)
	}
}

func libName(stem string) string { return "lib" + stem + ".so" }

func sitePackagesOf(env string) string {
	return filepath.Join(env, "lib", "python3.11", "site-packages")
}

// interpreterOf is where ENV's interpreter is, and the process name it
// runs under.
func interpreterOf(env string) (path, name string) {
	return filepath.Join(env, "bin", "python3.11"), "python3.11"
}

// installAs makes dst run the test binary: a symlink, as a venv's python is.
func installAs(t *testing.T, dst string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(os.Args[0], dst); err != nil {
		t.Fatal(err)
	}
}
