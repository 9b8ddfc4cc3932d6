package monitortest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// InotifyWatches counts this process's inotify watches; it skips the test
// where /proc/self/fd cannot be read (not Linux).
func InotifyWatches(t testing.TB) int {
	t.Helper()
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skip("no /proc/self/fd")
	}
	n := 0
	for _, fd := range fds {
		target, err := os.Readlink(filepath.Join("/proc/self/fd", fd.Name()))
		if err != nil || !strings.Contains(target, "inotify") {
			continue
		}
		info, err := os.ReadFile(filepath.Join("/proc/self/fdinfo", fd.Name()))
		if err != nil {
			continue
		}
		n += strings.Count(string(info), "inotify wd:")
	}
	return n
}
