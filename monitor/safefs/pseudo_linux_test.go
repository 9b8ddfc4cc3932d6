package safefs

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestPseudoFilesAreRefused: torch/version.py as a symlink to a procfs
// file (a regular file by its mode) is refused as a FIFO is, with a
// message naming procfs; its folder, a listing of /proc and a file on
// disk read as usual. (Not /proc/kmsg, whose read as root would drain the
// kernel log: /proc/self/status stands for it.)
func TestPseudoFilesAreRefused(t *testing.T) {
	dir := t.TempDir()
	version := filepath.Join(dir, "version.py")
	if err := os.Symlink("/proc/self/status", version); err != nil {
		t.Fatal(err)
	}
	_, err := ReadFile(version, 1<<20)
	if !errors.Is(err, ErrPseudoFS) || !strings.Contains(err.Error(), "procfs") || !strings.Contains(err.Error(), version) {
		t.Errorf("ReadFile(version.py -> /proc/self/status) = %v, want ErrPseudoFS naming procfs and the path", err)
	}
	if f, err := Open(version); !errors.Is(err, ErrPseudoFS) {
		f.Close()
		t.Errorf("Open = %v, want ErrPseudoFS", err)
	}
	if _, err := os.Stat("/sys/kernel/uevent_seqnum"); err == nil { // where sysfs is mounted
		if _, err := ReadFile("/sys/kernel/uevent_seqnum", 1<<10); !errors.Is(err, ErrPseudoFS) || !strings.Contains(err.Error(), "sysfs") {
			t.Errorf("a sysfs file: %v, want ErrPseudoFS naming sysfs", err)
		}
	}
	if _, err := ReadDir("/proc/self"); err != nil {
		t.Errorf("listing /proc/self: %v", err)
	}
	plain := filepath.Join(dir, "METADATA")
	if err := os.WriteFile(plain, []byte("Version: 2.5.1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadFile(plain, 1<<10); err != nil {
		t.Errorf("a file on disk: %v", err)
	}
}
