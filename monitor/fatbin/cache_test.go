package fatbin

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestCache(t *testing.T) {
	dir := t.TempDir()
	lib := filepath.Join(dir, "libk.so")
	plain := filepath.Join(dir, "libplain.so")
	if err := os.WriteFile(lib, elfLib(container(entry{kindELF, 86, zstd, make([]byte, 9)})), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(plain, elfLib(nil, "libc.so.6"), 0o644); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "state", "cuda-kernels.json")
	c := &Cache{}
	c.SetFile(file)
	for range 2 {
		if k, err := c.ReadFile(lib); err != nil || k.String() != "sm_86" {
			t.Fatalf("%s: %v %v", lib, k, err)
		}
		if _, err := c.ReadFile(plain); !errors.Is(err, ErrNoFatbin) {
			t.Fatalf("%s: %v, want ErrNoFatbin", plain, err)
		}
	}
	if c.Reads() != 2 {
		t.Errorf("%d reads for two files read twice, want 2", c.Reads())
	}
	if err := c.Flush(); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(file); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("cache file %v %v, want mode 0600", fi, err)
	}
	if data, _ := os.ReadFile(file); strings.Contains(string(data), plain) || !strings.Contains(string(data), lib) {
		t.Errorf("the file keeps CUDA libraries only:\n%s", data)
	}

	// Another run: answered from the file.
	d := &Cache{}
	d.SetFile(file)
	if k, err := d.ReadFile(lib); err != nil || k.String() != "sm_86" || d.Reads() != 0 {
		t.Fatalf("from the file: %v %v, %d reads", k, err, d.Reads())
	}
	// A changed library is read again.
	if err := os.WriteFile(lib, elfLib(container(entry{kindELF, 120, zstd, make([]byte, 20)})), 0o644); err != nil {
		t.Fatal(err)
	}
	later := time.Now().Add(time.Minute)
	os.Chtimes(lib, later, later)
	if k, err := d.ReadFile(lib); err != nil || k.String() != "sm_120" || d.Reads() != 1 {
		t.Fatalf("after a change: %v %v, %d reads", k, err, d.Reads())
	}
	// A broken library's error is cached too.
	if err := os.WriteFile(lib, []byte("\x7fELF\x09"), 0o644); err != nil {
		t.Fatal(err)
	}
	os.Chtimes(lib, later.Add(time.Minute), later.Add(time.Minute))
	for range 2 {
		if _, err := d.ReadFile(lib); err == nil || errors.Is(err, ErrNoFatbin) {
			t.Fatalf("a broken library: %v", err)
		}
	}
	if d.Reads() != 2 {
		t.Errorf("%d reads, want 2", d.Reads())
	}

	// A malformed cache file is an empty cache.
	if err := os.WriteFile(file, []byte(`{"version":1,"files":{`), 0o600); err != nil {
		t.Fatal(err)
	}
	e := &Cache{}
	e.SetFile(file)
	if _, err := e.ReadFile(plain); !errors.Is(err, ErrNoFatbin) || e.Reads() != 1 {
		t.Fatalf("with a malformed cache file: %v, %d reads", err, e.Reads())
	}
	if _, err := e.ReadFile(dir); err == nil {
		t.Error("a folder was read as a library")
	}
}

// TestCacheForgetsUnused: an answer not asked for in 30 days is not
// written again, so deleted environments' paths do not pile up.
func TestCacheForgetsUnused(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "cuda-kernels.json")
	stale := `{"version":1,"files":{"/gone/libx.so":{"dev":1,"ino":2,"size":3,"mtime_ns":4,"no_fatbin":true,"used":1000}}}`
	if err := os.WriteFile(file, []byte(stale), 0o600); err != nil {
		t.Fatal(err)
	}
	lib := filepath.Join(dir, "libk.so")
	os.WriteFile(lib, elfLib(container(entry{kindELF, 86, zstd, nil})), 0o644)
	c := &Cache{}
	c.SetFile(file)
	if _, err := c.ReadFile(lib); err != nil {
		t.Fatal(err)
	}
	if err := c.Flush(); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(file)
	if strings.Contains(string(data), "/gone/libx.so") || !strings.Contains(string(data), lib) {
		t.Errorf("cache file:\n%s", data)
	}
}
