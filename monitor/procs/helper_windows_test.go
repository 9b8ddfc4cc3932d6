package procs

import (
	"io"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/windows"
)

// The Windows side of the real-process tests (helper_test.go): a runtime
// library must be a DLL that loads, so each is a copy of the stand-in
// runtime.dll that scripts/test-windows.sh builds with mingw-w64 from
// testdata/winstub/runtime.c, found in GPUCANARY_PROCS_STUB_DIR.

// sleeperMaxPercent is the most CPU a sleeping helper may be charged over
// the 300 ms between two scans: Windows counts CPU time in timer ticks
// (15.6 ms), and two whole ticks are 10.4 %.
const sleeperMaxPercent = 10.4

// loadLibs loads each DLL.
func loadLibs(paths []string) (any, error) {
	var keep []windows.Handle
	for _, path := range paths {
		h, err := windows.LoadLibrary(path)
		if err != nil {
			return nil, err
		}
		keep = append(keep, h)
	}
	return keep, nil
}

// stubDir is where the stand-ins built from testdata/winstub are; the
// test is skipped without them.
func stubDir(t testing.TB) string {
	t.Helper()
	dir := os.Getenv("GPUCANARY_PROCS_STUB_DIR")
	if dir == "" {
		t.Skip("GPUCANARY_PROCS_STUB_DIR is not set: scripts/test-windows.sh builds the stand-in DLL from testdata/winstub and sets it")
	}
	return dir
}

// writeLib copies the stand-in runtime DLL to path.
func writeLib(t *testing.T, path string) {
	t.Helper()
	copyFile(t, filepath.Join(stubDir(t), "runtime.dll"), path)
}

func libName(stem string) string { return stem + ".dll" }

func sitePackagesOf(env string) string {
	return filepath.Join(env, "Lib", "site-packages")
}

// interpreterOf is where ENV's interpreter is, and the process name it
// runs under.
func interpreterOf(env string) (path, name string) {
	return filepath.Join(env, "Scripts", "python.exe"), "python.exe"
}

// installAs makes dst run the test binary: a copy, as pip's launchers and
// a venv's python.exe are files of their own.
func installAs(t *testing.T, dst string) {
	t.Helper()
	copyFile(t, os.Args[0], dst)
}

func copyFile(t testing.TB, src, dst string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		t.Fatal(err)
	}
	in, err := os.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.Create(dst)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
}
