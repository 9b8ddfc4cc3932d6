package disk

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
)

// countingDisk is the real disk, counting the looks at each path.
type countingDisk struct {
	Real
	stats, lstats sync.Map // path → *atomic.Int32
}

func count(m *sync.Map, path string) {
	n, _ := m.LoadOrStore(path, new(atomic.Int32))
	n.(*atomic.Int32).Add(1)
}

func looks(m *sync.Map, path string) int32 {
	n, ok := m.Load(path)
	if !ok {
		return 0
	}
	return n.(*atomic.Int32).Load()
}

func (c *countingDisk) Stat(path string) (fs.FileInfo, error) {
	count(&c.stats, path)
	return c.Real.Stat(path)
}

func (c *countingDisk) Lstat(path string) (fs.FileInfo, error) {
	count(&c.lstats, path)
	return c.Real.Lstat(path)
}

// TestOnceLooksOnce: each path's Stat and Lstat reach the disk once,
// from many goroutines at once, and every answer is the disk's first,
// a missing file's error included; the two are kept apart (a link's
// Lstat is not its target's Stat), and the rest of the disk is the
// disk's.
func TestOnceLooksOnce(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "libtorch_cuda.so")
	if err := os.WriteFile(file, []byte("ELF"), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.so")
	if err := os.Symlink(file, link); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "pyproject.toml")
	c := &countingDisk{}
	o := NewOnce(c, 1)
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 10 {
				if fi, err := o.Stat(link); err != nil || !fi.Mode().IsRegular() || fi.Size() != 3 {
					t.Errorf("Stat(link) = %v, %v", fi, err)
				}
				if fi, err := o.Lstat(link); err != nil || fi.Mode()&fs.ModeSymlink == 0 {
					t.Errorf("Lstat(link) = %v, %v", fi, err)
				}
				if _, err := o.Stat(missing); !errors.Is(err, fs.ErrNotExist) {
					t.Errorf("Stat(missing) = %v, want not exist", err)
				}
			}
		}()
	}
	wg.Wait()
	// Two goroutines may both look before either keeps its answer; no
	// more than one per goroutine, and far fewer than the 80 asked.
	for _, p := range []string{link, missing} {
		if n := looks(&c.stats, p); n < 1 || n > 8 {
			t.Errorf("%s: stat %d times for 80 asks", filepath.Base(p), n)
		}
	}
	if n := looks(&c.lstats, link); n < 1 || n > 8 {
		t.Errorf("link: lstat %d times for 80 asks", n)
	}
	// Asked again, later: no look at all.
	before := looks(&c.stats, link)
	if _, err := o.Stat(link); err != nil || looks(&c.stats, link) != before {
		t.Errorf("a later Stat looked again (%d, then %d): %v", before, looks(&c.stats, link), err)
	}
	// The rest is the disk's: a read sees the file as it is now.
	if err := os.WriteFile(file, []byte("ELF and more"), 0o644); err != nil {
		t.Fatal(err)
	}
	if b, err := o.ReadFile(file, 1<<10); err != nil || string(b) != "ELF and more" {
		t.Errorf("ReadFile = %q, %v", b, err)
	}
}

// TestOnceKeepsABoundedNumber: past maxKept answers of a kind, the
// answers kept are let go and kept afresh: never more than maxKept, a
// path asked again right after is still not looked at again, and every
// answer is right.
func TestOnceKeepsABoundedNumber(t *testing.T) {
	dir := t.TempDir()
	c := &countingDisk{}
	o := NewOnce(c, 1)
	for i := range 3 * maxKept {
		p := filepath.Join(dir, "missing", strconv.Itoa(i))
		for range 2 {
			if _, err := o.Stat(p); !errors.Is(err, fs.ErrNotExist) {
				t.Fatalf("Stat(%s) = %v", p, err)
			}
		}
		if n := looks(&c.stats, p); n != 1 {
			t.Fatalf("%s asked twice in a row was looked at %d times", p, n)
		}
		if len(o.stat) > maxKept {
			t.Fatalf("%d answers kept, want at most %d", len(o.stat), maxKept)
		}
	}
	// The first paths were let go: asked again, they are looked at again.
	first := filepath.Join(dir, "missing", "0")
	if _, err := o.Stat(first); !errors.Is(err, fs.ErrNotExist) || looks(&c.stats, first) != 2 {
		t.Errorf("a path let go: %v, looked at %d times", err, looks(&c.stats, first))
	}
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if fi, err := o.Stat(file); err != nil || !fi.Mode().IsRegular() {
		t.Errorf("Stat(file) = %v, %v", fi, err)
	}
}
