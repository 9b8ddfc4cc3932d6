package fatbin_test

import (
	"archive/tar"
	"compress/gzip"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/gpucanary/gpucanary/monitor/fatbin"
	"github.com/gpucanary/gpucanary/monitor/fatbin/fatbintest"
	"github.com/gpucanary/gpucanary/monitor/filefacts"
)

// npmEnv turns on the tests against the full npm packages; make test
// sets it (they download 280 MB once, then reuse the cached copy).
const npmEnv = "GPUCANARY_NPM_LIBS"

// npmLib is a CUDA library in an npm package.
type npmLib struct {
	spec, tarball, member string
}

var (
	linuxPkg = npmLib{"@node-llama-cpp/linux-x64-cuda@3.22.1", "node-llama-cpp-linux-x64-cuda-3.22.1.tgz", "package/bins/linux-x64-cuda/libggml-cuda.so"}
	winPkg   = npmLib{"@node-llama-cpp/win-x64-cuda@3.21.1", "node-llama-cpp-win-x64-cuda-3.21.1.tgz", "package/bins/win-x64-cuda/ggml-cuda.dll"}
)

// realLibrary is the library's path in the user's cache
// (gpucanary-testdata), fetched with npm pack when fetch is set and it
// is not there yet; the test is skipped, saying so, when it cannot be.
func realLibrary(tb testing.TB, fetch bool, lib npmLib) string {
	base, err := os.UserCacheDir()
	if err != nil {
		tb.Skipf("SKIPPED: no cache folder for the npm packages: %v", err)
	}
	dir := filepath.Join(base, "gpucanary-testdata")
	out := filepath.Join(dir, lib.member)
	if _, err := os.Stat(out); err == nil {
		return out
	}
	if !fetch {
		tb.Skipf("SKIPPED: %s is not in %s (make test fetches it)", lib.member, dir)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		tb.Fatal(err)
	}
	tgz := filepath.Join(dir, lib.tarball)
	if _, err := os.Stat(tgz); err != nil {
		cmd := exec.Command("npm", "pack", "--silent", lib.spec)
		cmd.Dir = dir
		if b, err := cmd.CombinedOutput(); err != nil {
			tb.Skipf("SKIPPED LOUDLY: npm pack %s did not answer (%v: %s): the real-library test did not run", lib.spec, err, b)
		}
	}
	if err := untarOne(tgz, lib.member, out); err != nil {
		tb.Fatalf("unpacking %s from %s: %v", lib.member, tgz, err)
	}
	return out
}

// untarOne writes one member of a .tgz to out.
func untarOne(tgz, member, out string) error {
	f, err := os.Open(tgz)
	if err != nil {
		return err
	}
	defer f.Close()
	z, err := gzip.NewReader(f)
	if err != nil {
		return err
	}
	tr := tar.NewReader(z)
	for {
		h, err := tr.Next()
		if err != nil {
			return fmt.Errorf("%s not found: %w", member, err)
		}
		if h.Name != member {
			continue
		}
		if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
			return err
		}
		tmp := out + ".part"
		w, err := os.Create(tmp)
		if err != nil {
			return err
		}
		if _, err := io.Copy(w, tr); err != nil {
			w.Close()
			return err
		}
		if err := w.Close(); err != nil {
			return err
		}
		// dated as packed, as an unpacked library is (one dated now
		// would be too new to be a file fact)
		if err := os.Chtimes(tmp, h.ModTime, h.ModTime); err != nil {
			return err
		}
		return os.Rename(tmp, out)
	}
}

// TestNPMPackages reads the full real libraries npm serves: what the
// carved fixtures hold is what the whole file says, within the read
// budget. make test runs it (GPUCANARY_NPM_LIBS=1); elsewhere it is
// skipped, saying so.
func TestNPMPackages(t *testing.T) {
	if os.Getenv(npmEnv) == "" {
		t.Skipf("SKIPPED: set %s=1 (make test does) to read the real npm CUDA libraries", npmEnv)
	}
	for _, lib := range []npmLib{linuxPkg, winPkg} {
		t.Run(filepath.Base(lib.member), func(t *testing.T) {
			path := realLibrary(t, true, lib)
			f, err := os.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			fi, _ := f.Stat()
			r := &counting{r: f}
			k, err := fatbin.Read(r, fi.Size())
			if err != nil {
				t.Fatal(err)
			}
			if k.String() != fatbintest.GGMLKernels || k.Containers != 143 {
				t.Errorf("%s: %s in %d containers, want %s in 143", path, k, k.Containers, fatbintest.GGMLKernels)
			}
			if r.bytes > readBudget {
				t.Errorf("read %d bytes of %d", r.bytes, fi.Size())
			}
			t.Logf("%s (%d bytes): %s, read %d bytes in %d reads", path, fi.Size(), k, r.bytes, r.calls)

			// Kept: the headers are read once; the next run (a new
			// cache over the same folder) stats the library.
			dir := t.TempDir()
			for run, wantReads := range []int{1, 0} {
				facts := &filefacts.Store{}
				if err := facts.UseDir(dir); err != nil {
					t.Fatal(err)
				}
				c := &fatbin.Cache{Facts: facts}
				got, err := c.ReadFile(path)
				if err != nil || got.String() != k.String() || c.Reads() != wantReads {
					t.Errorf("run %d through the cache: %s, %v, %d reads; want %s, %d reads", run, got, err, c.Reads(), k, wantReads)
				}
				if err := c.Flush(); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}
