package fatbin

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gpucanary/gpucanary/monitor/filefacts"
)

// writeLib writes a library dated an hour back (a file changed within
// filefacts.Racy gets no fact), as an environment's libraries are.
func writeLib(t *testing.T, path string, data []byte, at time.Time) {
	t.Helper()
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(path, at, at); err != nil {
		t.Fatal(err)
	}
}

// newCache is a cache over a store kept in dir, as a run's is.
func newCache(t *testing.T, dir string) *Cache {
	t.Helper()
	facts := &filefacts.Store{}
	if err := facts.UseDir(dir); err != nil {
		t.Fatal(err)
	}
	return &Cache{Facts: facts}
}

// TestCache: a CUDA library, one without a fat binary, one that is no
// library and one whose fat binary is malformed are each read once; the
// next run (a new cache over the same folder) answers all four, with the
// same answers and errors, from a stat; a changed library is read again.
func TestCache(t *testing.T) {
	dir := t.TempDir()
	installed := time.Now().Add(-time.Hour)
	lib := filepath.Join(dir, "libk.so")
	plain := filepath.Join(dir, "libplain.so")
	junk := filepath.Join(dir, "libjunk.so")
	bad := filepath.Join(dir, "libbad.so")
	writeLib(t, lib, elfLib(container(entry{kindELF, 86, zstd, make([]byte, 9)}), "libcudart.so.12"), installed)
	writeLib(t, plain, elfLib(nil, "libc.so.6"), installed)
	writeLib(t, junk, []byte("not a library"), installed)
	writeLib(t, bad, elfLib([]byte{0x50, 0xed, 0x55, 0xba, 1, 0, 16, 0, 0xff, 0xff, 0xff, 0, 0, 0, 0, 0}), installed)
	store := filepath.Join(dir, "cache", "file-facts")

	type answer struct {
		kernels, runtime, err string
		noFatbin, malformed   bool
	}
	ask := func(c *Cache) map[string]answer {
		out := map[string]answer{}
		for _, p := range []string{lib, plain, junk, bad} {
			k, err := c.ReadFile(p)
			a := answer{kernels: k.String(), runtime: k.Runtime, noFatbin: errors.Is(err, ErrNoFatbin), malformed: errors.Is(err, ErrMalformed)}
			if err != nil {
				a.err = err.Error()
			}
			out[filepath.Base(p)] = a
		}
		return out
	}
	first := newCache(t, store)
	want := ask(first)
	if again := ask(first); first.Reads() != 4 || again["libk.so"] != want["libk.so"] {
		t.Fatalf("%d reads for four files read twice, want 4", first.Reads())
	}
	if a := want["libk.so"]; a.kernels != "sm_86" || a.runtime != "libcudart.so.12" || a.err != "" {
		t.Fatalf("libk.so: %+v", a)
	}
	if !want["libplain.so"].noFatbin || want["libjunk.so"].err == "" || !want["libbad.so"].malformed {
		t.Fatalf("first run: %+v", want)
	}
	if err := first.Flush(); err != nil {
		t.Fatal(err)
	}

	second := newCache(t, store)
	if got := ask(second); second.Reads() != 0 {
		t.Errorf("the next run read %d files, want 0", second.Reads())
	} else {
		for name, a := range want {
			if got[name] != a {
				t.Errorf("%s: the next run said %+v, the first %+v", name, got[name], a)
			}
		}
	}

	// A changed library is read again.
	writeLib(t, lib, elfLib(container(entry{kindELF, 120, zstd, make([]byte, 20)})), installed.Add(time.Minute))
	if k, err := second.ReadFile(lib); err != nil || k.String() != "sm_120" || second.Reads() != 1 {
		t.Fatalf("after a change: %v %v, %d reads", k, err, second.Reads())
	}
	if _, err := second.ReadFile(dir); err == nil {
		t.Error("a folder was read as a library")
	}
}

// TestCacheMemory: a cache with no store of its own (the zero value)
// keeps its answers in memory, those about a file written just now (too
// new to be a fact) too, while its stamp holds; none goes to the store.
func TestCacheMemory(t *testing.T) {
	for name, at := range map[string]time.Time{"installed": time.Now().Add(-time.Hour), "just written": time.Now()} {
		lib := filepath.Join(t.TempDir(), "libk.so")
		writeLib(t, lib, elfLib(container(entry{kindELF, 86, zstd, nil})), at)
		c := &Cache{}
		for range 3 {
			if k, err := c.ReadFile(lib); err != nil || k.String() != "sm_86" {
				t.Fatalf("%s: %v %v", name, k, err)
			}
		}
		if c.Reads() != 1 {
			t.Errorf("%s: %d reads, want 1", name, c.Reads())
		}
		writeLib(t, lib, elfLib(container(entry{kindELF, 120, zstd, nil})), at.Add(time.Second))
		if k, err := c.ReadFile(lib); err != nil || k.String() != "sm_120" || c.Reads() != 2 {
			t.Errorf("%s, changed: %v %v, %d reads", name, k, err, c.Reads())
		}
		fi, _ := os.Stat(lib)
		if _, ok := c.facts().Get(kernelsFact, lib, filefacts.Of(fi)); ok != (name == "installed") {
			t.Errorf("%s: kept as a fact: %v", name, ok)
		}
	}
}

// TestCacheRefusesPlantedKernels: what a fact says of a library is not
// believed when it does not decode as the cache writes it: a planted
// value with a terminal escape, or one of another form, is read again.
func TestCacheRefusesPlantedKernels(t *testing.T) {
	lib := filepath.Join(t.TempDir(), "libk.so")
	writeLib(t, lib, elfLib(container(entry{kindELF, 61, zstd, nil})), time.Now().Add(-time.Hour))
	fi, err := os.Stat(lib)
	if err != nil {
		t.Fatal(err)
	}
	for _, planted := range []string{
		"k\x1b]0;owned\x07\x001\x0086 120\x00",
		"!\x1b[2Jcleared",
		"k\x001\x00sm_86 nonsense\x00",
		"x",
		"",
	} {
		facts := &filefacts.Store{}
		facts.Put(kernelsFact, lib, filefacts.Of(fi), planted)
		c := &Cache{Facts: facts}
		k, err := c.ReadFile(lib)
		if err != nil || k.String() != "sm_61" || c.Reads() != 1 || strings.ContainsRune(k.Runtime, 0x1b) {
			t.Errorf("planted %q: %v %v, %d reads; want sm_61 read from the library", planted, k, err, c.Reads())
		}
	}
}
