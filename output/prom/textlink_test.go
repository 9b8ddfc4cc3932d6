//go:build !windows

package prom

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gpucanary/gpucanary/monitor"
)

// TestTextfileThroughSymlink: node_exporter setups often link the
// textfile into the collector's folder. The write goes to the link's
// target, which keeps its mode, and the link stays a link; a dangling
// link's target is created.
func TestTextfileThroughSymlink(t *testing.T) {
	reg := NewRegistry(Options{State: func() monitor.State { return replacedState() }, Version: "v1.2.3", GoVersion: "go1.24.0"})
	dir := t.TempDir()
	real := filepath.Join(dir, "real", "gpucanary.prom")
	if err := os.MkdirAll(filepath.Dir(real), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(real, []byte("old\n"), 0o640); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(real, 0o640); err != nil { // whatever the umask
		t.Fatal(err)
	}
	link := filepath.Join(dir, "collector", "gpucanary.prom")
	if err := os.MkdirAll(filepath.Dir(link), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../real/gpucanary.prom", link); err != nil {
		t.Fatal(err)
	}
	if err := WriteTextfile(link, reg); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("the link was replaced: %v, %v", fi.Mode(), err)
	}
	got, err := os.ReadFile(real)
	if err != nil || !strings.Contains(string(got), "gpucanary_env_torch_replaced_timestamp_seconds") {
		t.Errorf("the link's target was not written (%v):\n%s", err, got)
	}
	if fi, err := os.Stat(real); err != nil || fi.Mode().Perm() != 0o640 {
		t.Errorf("the target's mode: %v, %v; want 0640 kept", fi.Mode().Perm(), err)
	}
	for _, d := range []string{filepath.Dir(real), filepath.Dir(link)} {
		if left, _ := os.ReadDir(d); len(left) != 1 {
			t.Errorf("temporary files left in %s: %v", d, left)
		}
	}

	dangling := filepath.Join(dir, "collector", "new.prom")
	if err := os.Symlink(filepath.Join(dir, "real", "new.prom"), dangling); err != nil {
		t.Fatal(err)
	}
	if err := WriteTextfile(dangling, reg); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(dangling); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("the dangling link was replaced: %v, %v", fi.Mode(), err)
	}
	if fi, err := os.Stat(filepath.Join(dir, "real", "new.prom")); err != nil || fi.Mode().Perm() != 0o644 {
		t.Errorf("a dangling link's target: %v, %v; want it created 0644", fi, err)
	}

	loop := filepath.Join(dir, "collector", "loop.prom")
	if err := os.Symlink("loop.prom", loop); err != nil {
		t.Fatal(err)
	}
	if err := WriteTextfile(loop, reg); err == nil || !strings.Contains(err.Error(), loop) {
		t.Errorf("a link to itself: %v, want an error naming it", err)
	}
}
