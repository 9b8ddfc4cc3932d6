package safefs

import (
	"errors"
	"sync/atomic"
	"syscall"
)

// outOfFiles counts the opens refused for want of a file descriptor.
var outOfFiles atomic.Uint64

// OutOfFiles counts, since the process started, the opens here refused
// because the process or the system had no file descriptor left (EMFILE,
// ENFILE). A read during which it moved may have missed files that are
// there: what it found says nothing about them, and a caller that keeps
// a reading keeps the last good one (monitor.EnvReport.OutOfFiles).
func OutOfFiles() uint64 { return outOfFiles.Load() }

// IsOutOfFiles reports whether err is a refusal for want of a file
// descriptor (EMFILE, ENFILE), not a fault of the file.
func IsOutOfFiles(err error) bool {
	return errors.Is(err, syscall.EMFILE) || errors.Is(err, syscall.ENFILE)
}

// noteOpen counts err when it is an out-of-descriptors refusal.
func noteOpen(err error) {
	if IsOutOfFiles(err) {
		outOfFiles.Add(1)
	}
}
