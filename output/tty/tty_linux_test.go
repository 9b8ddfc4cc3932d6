package tty

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

func openPTY(t *testing.T, cols uint16) (ctl, tty *os.File) {
	t.Helper()
	ctl, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals: %v", err)
	}
	var unlock int32
	if _, _, e := unix.Syscall(unix.SYS_IOCTL, ctl.Fd(), unix.TIOCSPTLCK, uintptr(unsafe.Pointer(&unlock))); e != 0 {
		t.Fatalf("unlockpt: %v", e)
	}
	n, err := unix.IoctlGetUint32(int(ctl.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Fatal(err)
	}
	tty, err = os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := unix.IoctlSetWinsize(int(tty.Fd()), unix.TIOCSWINSZ, &unix.Winsize{Col: cols, Row: 24}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ctl.Close(); tty.Close() })
	return ctl, tty
}

func TestWidth(t *testing.T) {
	_, tty := openPTY(t, 93)
	if got := Width(tty); got != 93 {
		t.Errorf("a 93-column terminal: Width = %d", got)
	}
	f, err := os.Create(t.TempDir() + "/out")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if Width(f) != 0 || Width(&bytes.Buffer{}) != 0 || IsTerminal(f) || !IsTerminal(tty) {
		t.Error("a file or a buffer is taken for a terminal")
	}
}

// TestKeys: on a terminal each key arrives alone, without Enter and
// without echo, and Ctrl-C still signals; stop ends the reader promptly (no key needed) and puts the
// terminal back.
func TestKeys(t *testing.T) {
	ctl, tty := openPTY(t, 80)
	before, _ := unix.IoctlGetTermios(int(tty.Fd()), unix.TCGETS)
	keys, stop, err := Keys(context.Background(), tty)
	if err != nil || keys == nil {
		t.Fatalf("Keys on a terminal: %v", err)
	}
	during, _ := unix.IoctlGetTermios(int(tty.Fd()), unix.TCGETS)
	if during.Lflag&(unix.ICANON|unix.ECHO) != 0 || during.Lflag&unix.ISIG == 0 {
		t.Errorf("while reading keys: lflag %#x (want no ICANON, no ECHO, ISIG kept for Ctrl-C)", during.Lflag)
	}
	ctl.Write([]byte("xq"))
	for _, want := range []byte("xq") {
		select {
		case k := <-keys:
			if k != want {
				t.Errorf("key %q, want %q", k, want)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("no key %q", want)
		}
	}
	stopped := make(chan struct{})
	go func() { stop(); close(stopped) }()
	select {
	case <-stopped:
	case <-time.After(10 * time.Second):
		t.Fatal("stop did not return")
	}
	if _, ok := <-keys; ok {
		t.Error("keys still open after stop")
	}
	after, _ := unix.IoctlGetTermios(int(tty.Fd()), unix.TCGETS)
	if after.Lflag != before.Lflag || after.Lflag&unix.ICANON == 0 {
		t.Errorf("terminal not restored: lflag %#x, was %#x", after.Lflag, before.Lflag)
	}
}

func TestKeysOnAFileChangeNothing(t *testing.T) {
	f, err := os.Create(t.TempDir() + "/in")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	keys, stop, err := Keys(context.Background(), f)
	defer stop()
	if keys != nil || err != nil {
		t.Errorf("Keys on a file: %v, %v", keys, err)
	}
}
