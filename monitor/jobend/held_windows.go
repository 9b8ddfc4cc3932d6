package jobend

import (
	"fmt"
	"time"

	"golang.org/x/sys/windows"
)

// statusHidden is never said on Windows, where the held handle always
// tells the exit code.
const statusHidden = "its exit code could not be read"

// exitCodeWords names the exit codes a crashed job ends with on Windows.
// 1 is Python's unhandled exception, but also what other ways of ending a
// program give: it is said as a number.
func exitCodeWords(code int) string {
	switch uint32(code) {
	case 0xC0000409:
		return "ended by a fail-fast (0xC0000409, a stack buffer overrun or abort)"
	case 0xC0000005:
		return "crashed on an access violation (0xC0000005)"
	case 0xC000013A:
		return "was interrupted by Ctrl+C or its console closing (0xC000013A)"
	}
	if code < 0 || code > 0xFFFF {
		return fmt.Sprintf("exited with status 0x%08X", uint32(code))
	}
	return ""
}

// Held is a process held for its end: a handle opened while it runs,
// through which its exit code stays readable after it is gone (the
// process need not be our child).
type Held struct {
	PID int
	// Start is its creation time.
	Start time.Time
	// Cmdline is not read on Windows (procs has it, by other means).
	Cmdline []string
	// Logs are not found on Windows.
	Logs []Log

	h windows.Handle
}

// Open holds the process pid (root is ignored on Windows). A non-zero
// start must be its creation time (within a second): otherwise the PID
// is another process's now, and ErrNoProcess.
func Open(_ string, pid int, start time.Time) (*Held, error) {
	if pid <= 0 {
		return nil, fmt.Errorf("PID %d: %w", pid, ErrNoProcess)
	}
	h, err := windows.OpenProcess(windows.SYNCHRONIZE|windows.PROCESS_QUERY_LIMITED_INFORMATION, false, uint32(pid))
	if err != nil {
		if err == windows.ERROR_INVALID_PARAMETER {
			return nil, fmt.Errorf("PID %d: %w", pid, ErrNoProcess)
		}
		return nil, fmt.Errorf("opening PID %d: %w", pid, err)
	}
	held := &Held{PID: pid, h: h}
	var created, exited, kernel, user windows.Filetime
	if windows.GetProcessTimes(h, &created, &exited, &kernel, &user) == nil {
		held.Start = time.Unix(0, created.Nanoseconds())
	}
	if !start.IsZero() && !held.Start.IsZero() && absDur(held.Start.Sub(start)) > time.Second {
		windows.CloseHandle(h)
		return nil, fmt.Errorf("PID %d is another process now: %w", pid, ErrNoProcess)
	}
	return held, nil
}

// Poll reports whether the process has ended, and then its exit code.
func (h *Held) Poll() (bool, Status) {
	ev, err := windows.WaitForSingleObject(h.h, 0)
	if err != nil || ev != windows.WAIT_OBJECT_0 {
		return false, Status{}
	}
	var code uint32
	if windows.GetExitCodeProcess(h.h, &code) != nil {
		return true, Status{}
	}
	return true, Status{Known: true, Code: int(int32(code))}
}

// Close releases the handle.
func (h *Held) Close() {
	if h.h != 0 {
		windows.CloseHandle(h.h)
		h.h = 0
	}
}

// OOMKills is not known on Windows.
func OOMKills(string) (uint64, bool) { return 0, false }

func absDur(d time.Duration) time.Duration {
	if d < 0 {
		return -d
	}
	return d
}
