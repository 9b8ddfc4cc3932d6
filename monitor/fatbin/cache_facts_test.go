package fatbin

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/gpucanary/gpucanary/monitor/filefacts"
)

// TestCacheFacts: with Facts, a library without a fat binary and a file
// that is no library are read once; the next run (new caches over the
// same files) answers both, with the same errors, from a stat; a changed
// file is read again; a library that cannot be opened is not kept.
func TestCacheFacts(t *testing.T) {
	dir := t.TempDir()
	plain := filepath.Join(dir, "libplain.so")
	junk := filepath.Join(dir, "libjunk.so")
	if err := os.WriteFile(plain, elfLib(nil, "libc.so.6"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(junk, []byte("not a library"), 0o644); err != nil {
		t.Fatal(err)
	}
	// installed a while ago: a file changed within filefacts.Racy gets
	// no fact
	installed := time.Now().Add(-time.Hour)
	os.Chtimes(plain, installed, installed)
	os.Chtimes(junk, installed, installed)
	factsDir := filepath.Join(dir, "state", "file-facts")
	run := func() (*Cache, error, error) {
		facts := &filefacts.Store{}
		facts.SetDir(factsDir)
		c := &Cache{Facts: facts}
		_, errPlain := c.ReadFile(plain)
		_, errJunk := c.ReadFile(junk)
		if err := facts.Flush(); err != nil {
			t.Fatal(err)
		}
		return c, errPlain, errJunk
	}
	first, errPlain, errJunk := run()
	if !errors.Is(errPlain, ErrNoFatbin) || errJunk == nil || errors.Is(errJunk, ErrNoFatbin) || first.Reads() != 2 {
		t.Fatalf("first run: %v, %v, %d reads; want ErrNoFatbin, an error, 2 reads", errPlain, errJunk, first.Reads())
	}
	second, errPlain2, errJunk2 := run()
	if second.Reads() != 0 {
		t.Errorf("the next run read %d files, want 0 (answered from the facts)", second.Reads())
	}
	if !errors.Is(errPlain2, ErrNoFatbin) || errJunk2 == nil || errJunk2.Error() != errJunk.Error() {
		t.Errorf("the next run said %v and %v; want %v and %v", errPlain2, errJunk2, errPlain, errJunk)
	}

	// A changed file is read again.
	if err := os.WriteFile(junk, []byte("still not a library, longer"), 0o644); err != nil {
		t.Fatal(err)
	}
	later := installed.Add(time.Minute)
	os.Chtimes(junk, later, later)
	third, _, _ := run()
	if third.Reads() != 1 {
		t.Errorf("after a change: %d reads, want 1", third.Reads())
	}

	// A library that cannot be opened is not a fact about its contents.
	if os.Geteuid() != 0 {
		locked := filepath.Join(dir, "liblocked.so")
		if err := os.WriteFile(locked, []byte("x"), 0o000); err != nil {
			t.Fatal(err)
		}
		facts := &filefacts.Store{}
		c := &Cache{Facts: facts}
		c.ReadFile(locked)
		fi, _ := os.Stat(locked)
		if _, ok := facts.Get(noFatbin, locked, filefacts.Of(fi)); ok {
			t.Error("a library that could not be opened was kept as a fact")
		}
	}
}
