//go:build !windows

package tray

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// fakeWlCopy writes a wl-copy that behaves like the real one: it reads
// the text, then leaves a process behind that keeps its stdout and stderr
// (the real one serves the selection from it).
func fakeWlCopy(t *testing.T, body string) (path, dir string) {
	t.Helper()
	dir = t.TempDir()
	path = filepath.Join(dir, "wl-copy")
	script := "#!/bin/sh\n" + body + "\n"
	if err := os.WriteFile(path, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		b, err := os.ReadFile(filepath.Join(dir, "server.pid"))
		if err != nil {
			return
		}
		if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	})
	return path, dir
}

// TestWlCopyReturnsWhileTheSelectionIsServed: the copy returns as soon as
// wl-copy has the text, although the process it leaves behind holds its
// descriptors for as long as the selection lives.
func TestWlCopyReturnsWhileTheSelectionIsServed(t *testing.T) {
	path, dir := fakeWlCopy(t, `cat > "$(dirname "$0")/copied"
sleep 60 &
echo $! > "$(dirname "$0")/server.pid"
exit 0`)
	text := "uv pip install --python /home/me/.venv torch==2.5.1+cu121"
	done := make(chan error, 1)
	go func() { done <- wlCopy(path, text) }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(wlCopyTimeout / 2):
		t.Fatal("wl-copy's copy waited on the process serving the selection")
	}
	got, err := os.ReadFile(filepath.Join(dir, "copied"))
	if err != nil || string(got) != text {
		t.Errorf("wl-copy read %q (%v), want %q", got, err, text)
	}
}

// TestWlCopyFailureSaysWhy: wl-copy's own message is in the error.
func TestWlCopyFailureSaysWhy(t *testing.T) {
	path, _ := fakeWlCopy(t, `cat >/dev/null
echo "Failed to connect to a Wayland server" >&2
exit 1`)
	err := wlCopy(path, "text")
	if err == nil || !strings.Contains(err.Error(), "Failed to connect to a Wayland server") || !strings.Contains(err.Error(), "exit status 1") {
		t.Errorf("err = %v", err)
	}
}
