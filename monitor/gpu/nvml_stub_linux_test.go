//go:build linux && cgo

package gpu

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"sync"
	"testing"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
)

// The stand-in nvml (testdata/nvmlstub/nvml.c) that the Windows backend is
// tested with under wine, built here as a shared library and read through
// go-nvml: the same scenarios must give the same states on both platforms.

var stub struct {
	once sync.Once
	path string
	err  error
}

// stubLibrary builds the stand-in once per test binary and loads it once
// for good: go-nvml binds the library's functions process-wide on first
// call, so it must stay mapped while later tests load and unload it.
func stubLibrary(t testing.TB) string {
	t.Helper()
	stub.once.Do(func() {
		dir, err := os.MkdirTemp("", "gpucanary-nvmlstub")
		if err != nil {
			stub.err = err
			return
		}
		stub.path = filepath.Join(dir, "libnvidia-ml-stub.so")
		cc := os.Getenv("CC")
		if cc == "" {
			cc = "gcc"
		}
		out, err := exec.Command(cc, "-std=c11", "-O2", "-Wall", "-Werror", "-shared", "-fPIC", "-o", stub.path, "testdata/nvmlstub/nvml.c").CombinedOutput()
		if err != nil {
			stub.err = fmt.Errorf("%s: %v\n%s", cc, err, out)
			return
		}
		if ret := nvml.New(nvml.WithLibraryPath(stub.path)).Init(); ret != nvml.SUCCESS {
			stub.err = fmt.Errorf("nvmlInit: %s", errorString(nvmlReturn(ret)))
		}
	})
	if stub.err != nil {
		t.Fatalf("building and loading the stand-in nvml: %v", stub.err)
	}
	return stub.path
}

func TestMain(m *testing.M) {
	code := m.Run()
	if stub.path != "" {
		os.RemoveAll(filepath.Dir(stub.path))
	}
	os.Exit(code)
}

func TestGoNVMLReadsTheStub(t *testing.T) {
	tests := []struct {
		scenario string
		want     State
	}{
		{"a100", a100State()},
		{"rtx4090-wddm", rtx4090State()},
	}
	for _, tt := range tests {
		t.Run(tt.scenario, func(t *testing.T) {
			lib := stubLibrary(t)
			t.Setenv("NVMLSTUB_SCENARIO", tt.scenario)
			t.Setenv("NVMLSTUB_LOG", "")
			b := newNVML(nvml.New(nvml.WithLibraryPath(lib)), Options{SysfsRoot: t.TempDir()})
			defer b.Close()
			if got := b.Snapshot(context.Background()); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("state\n got %s\nwant %s", dump(got), dump(tt.want))
			}
		})
	}
}

// BenchmarkSnapshotNVMLStub is one snapshot of the stand-in's A100 through
// go-nvml, the Linux peer of BenchmarkSnapshotNVMLDLL (the same C, called
// through cgo here and through syscalls to nvml.dll under wine there).
func BenchmarkSnapshotNVMLStub(b *testing.B) {
	lib := stubLibrary(b)
	b.Setenv("NVMLSTUB_SCENARIO", "a100")
	b.Setenv("NVMLSTUB_LOG", "")
	be := newNVML(nvml.New(nvml.WithLibraryPath(lib)), Options{SysfsRoot: b.TempDir()})
	defer be.Close()
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if st := be.Snapshot(ctx); !st.HasDriver() || st.Error != "" {
			b.Fatalf("state = %s", dump(st))
		}
	}
}

// TestWSLLoadsTheDriversNVML: on a fixture root that is WSL2, the NVML
// loaded is the one in WSLLibDir (the stand-in, linked there), and the
// state says WSL.
func TestWSLLoadsTheDriversNVML(t *testing.T) {
	lib := stubLibrary(t)
	t.Setenv("NVMLSTUB_SCENARIO", "rtx4090-wddm")
	t.Setenv("NVMLSTUB_LOG", "")
	root := wslRoot(t, map[string]string{"proc/version": "Linux version 5.15.167.4-microsoft-standard-WSL2\n"})
	wslLib := filepath.Join(root, WSLLibDir, "libnvidia-ml.so.1")
	if err := os.MkdirAll(filepath.Dir(wslLib), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(lib, wslLib); err != nil {
		t.Fatal(err)
	}
	b := openPlatform(Options{SysfsRoot: t.TempDir(), WSL: WSLProbe{Root: root, Getenv: func(string) string { return "" }}})
	defer b.Close()
	got := b.Snapshot(context.Background())
	want := rtx4090State()
	want.WSL, want.Library = true, wslLib
	if !reflect.DeepEqual(got, want) {
		t.Errorf("state\n got %s\nwant %s", dump(got), dump(want))
	}
}
