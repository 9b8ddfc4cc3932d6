//go:build !windows

package wheeltest

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// holdHook is a sitecustomize for the installer's Python: an audit hook
// that, when the installer opens the block file for writing (pip's
// `open(dest, "wb")`), marks its arrival and then waits, in open() of a
// FIFO that nobody writes, for as long as the test wants. A signal ends
// the wait the way it would end any system call: SIGINT raises
// KeyboardInterrupt there. pip cannot step around it, as it could around
// a FIFO placed in site-packages (it unlinks a file before writing it).
const holdHook = `import os, sys

_block = os.environ.get("GPUCANARY_HOLD_BLOCK", "")
_fifo = os.environ.get("GPUCANARY_HOLD_FIFO", "")


def _hold(event, args):
    if event != "open" or not _block or not isinstance(args[0], str):
        return
    if not args[0].endswith(_block) or not isinstance(args[1], str) or "w" not in args[1]:
        return
    open(_fifo + ".arrived", "w").close()
    with open(_fifo) as f:
        f.read()


sys.addaudithook(_hold)
`

// HoldInstall returns the environment variables under which an installer
// (pip, in any Python it starts) stops when it writes a wheel's
// Spec.Block file, and a function that waits until it has stopped there.
// From then on it goes no further, however fast or slow the machine is;
// it ends only by a signal.
func HoldInstall(t testing.TB, block string) (environ []string, waitHeld func()) {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "sitecustomize.py"), []byte(holdHook), 0o644); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "hold")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatalf("making the FIFO that holds the installer: %v", err)
	}
	environ = []string{"PYTHONPATH=" + dir, "GPUCANARY_HOLD_BLOCK=" + block, "GPUCANARY_HOLD_FIFO=" + fifo}
	return environ, func() {
		t.Helper()
		deadline := time.Now().Add(2 * time.Minute)
		for {
			_, err := os.Stat(fifo + ".arrived")
			if err == nil {
				return
			}
			if !errors.Is(err, fs.ErrNotExist) {
				t.Fatal(err)
			}
			if time.Now().After(deadline) {
				t.Fatalf("the installer did not reach %s within 2 minutes", block)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
}
