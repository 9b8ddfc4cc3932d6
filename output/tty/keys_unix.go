//go:build unix

package tty

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// pollEvery bounds how long the key reader takes to see that its context
// has ended.
const pollEvery = 100 * time.Millisecond

// Keys puts the terminal in into key-at-a-time mode and sends each key
// pressed on the returned channel until ctx ends; stop ends the reading,
// waits for it and puts the terminal back as it was. When in is not a
// terminal nothing is changed: keys is nil and stop does nothing.
//
// The mode is "cbreak", not x/term's MakeRaw: input comes a key at a time
// without echo, but output keeps its newline handling and Ctrl-C and
// Ctrl-Z keep sending their signals, so the rest of the command writes
// and stops as it always does.
func Keys(ctx context.Context, in *os.File) (keys <-chan byte, stop func(), err error) {
	fd := int(in.Fd())
	old, err := unix.IoctlGetTermios(fd, ioctlGet)
	if err != nil {
		return nil, func() {}, nil // not a terminal
	}
	mode := *old
	mode.Lflag &^= unix.ICANON | unix.ECHO
	mode.Cc[unix.VMIN], mode.Cc[unix.VTIME] = 1, 0
	if err := unix.IoctlSetTermios(fd, ioctlSet, &mode); err != nil {
		return nil, func() {}, fmt.Errorf("reading keys from the terminal: %w", err)
	}
	ctx, cancel := context.WithCancel(ctx)
	ch := make(chan byte, 8)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer close(ch)
		readKeys(ctx, fd, ch)
	}()
	var once sync.Once
	return ch, func() {
		once.Do(func() {
			cancel()
			wg.Wait()
			_ = unix.IoctlSetTermios(fd, ioctlSet, old)
		})
	}, nil
}

// readKeys polls fd so that it can stop when ctx ends: a read blocked on a
// terminal cannot be cancelled.
func readKeys(ctx context.Context, fd int, ch chan<- byte) {
	buf := make([]byte, 16)
	for ctx.Err() == nil {
		fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
		n, err := unix.Poll(fds, int(pollEvery/time.Millisecond))
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil || (n > 0 && fds[0].Revents&(unix.POLLHUP|unix.POLLERR|unix.POLLNVAL) != 0) {
			return
		}
		if n == 0 {
			continue
		}
		got, err := unix.Read(fd, buf)
		if err != nil || got == 0 {
			return
		}
		for _, k := range buf[:got] {
			select {
			case ch <- k:
			case <-ctx.Done():
				return
			}
		}
	}
}
