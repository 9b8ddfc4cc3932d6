//go:build !linux && !windows

package jobend

import (
	"fmt"
	"time"
)

const statusHidden = "its exit status is not visible to other processes here"

func exitCodeWords(int) string { return "" }

// Held is a process held for its end; this platform cannot hold one.
type Held struct {
	PID     int
	Start   time.Time
	Cmdline []string
	Logs    []Log
}

// Open says this platform cannot watch a process's end.
func Open(_ string, pid int, _ time.Time) (*Held, error) {
	return nil, fmt.Errorf("watching PID %d: not supported on this platform", pid)
}

// Poll never reports an end.
func (h *Held) Poll() (bool, Status) { return false, Status{} }

// Close does nothing.
func (h *Held) Close() {}

// OOMKills is not known here.
func OOMKills(string) (uint64, bool) { return 0, false }
