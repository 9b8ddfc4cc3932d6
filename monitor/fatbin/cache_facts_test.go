package fatbin

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/gpucanary/gpucanary/monitor/filefacts"
)

// TestCacheKeepsNoReadError: a library that cannot be opened is not a
// fact about its contents: the next ask opens it again.
func TestCacheKeepsNoReadError(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("SKIPPED: root opens a file of mode 000")
	}
	locked := filepath.Join(t.TempDir(), "liblocked.so")
	writeLib(t, locked, []byte("x"), time.Now().Add(-time.Hour))
	os.Chmod(locked, 0)
	facts := &filefacts.Store{}
	c := &Cache{Facts: facts}
	if _, err := c.ReadFile(locked); err == nil {
		t.Fatal("a library that cannot be opened was read")
	}
	fi, _ := os.Stat(locked)
	if _, ok := facts.Get(kernelsFact, locked, filefacts.Of(fi)); ok {
		t.Error("a library that could not be opened was kept as a fact")
	}
}
