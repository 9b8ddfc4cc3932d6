package jobend

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/gpucanary/gpucanary/monitor/procs"
)

// statusHidden says why Linux cannot tell how a process ended.
const statusHidden = "its exit status is not visible to other processes on Linux"

// exitCodeWords names an exit code Linux gives no other meaning to: none.
func exitCodeWords(int) string { return "" }

// Held is a process held for its end.
type Held struct {
	PID int
	// Start is when it started, as procs reads it (Proc.StartTime).
	Start time.Time
	// Cmdline is its command line, redacted of secrets (procs.Redact),
	// read when it was opened; nil when unreadable.
	Cmdline []string
	// Logs are the regular files its stdout and stderr wrote to when it
	// was opened.
	Logs []Log

	root   string
	ticks  string // field 22 of /proc/PID/stat: its start, in clock ticks since boot
	access bool   // its /proc files that need ptrace access could be read (the exit status among them)
}

// Open holds the process pid of the proc mount root ("" = /proc). A
// non-zero start must be the process's start time (within a second):
// otherwise the PID is another process's now, and ErrNoProcess.
func Open(root string, pid int, start time.Time) (*Held, error) {
	if root == "" {
		root = "/proc"
	}
	if pid <= 0 {
		return nil, fmt.Errorf("PID %d: %w", pid, ErrNoProcess)
	}
	// A zombie is held too: it has ended, and Poll reads its status.
	st, err := readStat(root, pid)
	if err != nil {
		return nil, fmt.Errorf("PID %d: %w", pid, ErrNoProcess)
	}
	h := &Held{PID: pid, root: root, ticks: st.fields[19]}
	if root == "/proc" {
		h.Start, _ = procs.StartTimeOf(pid)
	}
	if !start.IsZero() && !h.Start.IsZero() && absDur(h.Start.Sub(start)) > time.Second {
		return nil, fmt.Errorf("PID %d is another process now: %w", pid, ErrNoProcess)
	}
	if b, err := os.ReadFile(filepath.Join(root, strconv.Itoa(pid), "cmdline")); err == nil && len(b) > 0 {
		args := strings.Split(strings.TrimRight(string(b), "\x00"), "\x00")
		h.Cmdline = procs.Redact(args)
	}
	for _, fd := range []string{"1", "2"} {
		p := filepath.Join(root, strconv.Itoa(pid), "fd", fd)
		target, err := os.Readlink(p)
		if err != nil {
			continue
		}
		h.access = true
		if !filepath.IsAbs(target) || strings.HasSuffix(target, " (deleted)") {
			continue // a pipe, a socket, a terminal's pty is absolute but not regular: Stat says
		}
		fi, err := os.Stat(p) // the file itself, through the descriptor
		if err != nil || !fi.Mode().IsRegular() {
			continue
		}
		h.Logs = append(h.Logs, Log{Path: target, info: fi})
	}
	if !h.access {
		// A zombie has no files left to read: a process of this user is
		// one whose status the kernel shows to it.
		fi, err := os.Stat(filepath.Join(root, strconv.Itoa(pid)))
		if s, ok := statOwner(fi, err); ok {
			h.access = s == uint32(os.Getuid())
		}
	}
	return h, nil
}

// Poll reports whether the process has ended: its /proc folder is gone,
// holds another process (the PID was taken again), or is a zombie. A
// zombie's exit status is read while it lasts, where this process may
// read it (the kernel shows 0 to others, which is then not believed).
func (h *Held) Poll() (bool, Status) {
	st, err := readStat(h.root, h.PID)
	if err != nil || st.fields[19] != h.ticks {
		return true, Status{}
	}
	if st.state != "Z" && st.state != "X" {
		return false, Status{}
	}
	if !h.access || len(st.fields) < 50 {
		return true, Status{}
	}
	w, err := strconv.Atoi(st.fields[49])
	if err != nil {
		return true, Status{}
	}
	if sig := w & 0x7f; sig != 0 {
		return true, Status{Known: true, Signal: sig}
	}
	return true, Status{Known: true, Code: (w >> 8) & 0xff}
}

// Close lets the process go.
func (h *Held) Close() {}

type stat struct {
	state  string
	fields []string // from field 3 (state) on: fields[n-3] is field n
}

// readStat reads /proc/PID/stat; the command name in parentheses may
// hold spaces and parentheses, so the fields start after the last ')'.
func readStat(root string, pid int) (stat, error) {
	b, err := os.ReadFile(filepath.Join(root, strconv.Itoa(pid), "stat"))
	if err != nil {
		return stat{}, err
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return stat{}, fmt.Errorf("reading the status of PID %d: no command name", pid)
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 20 {
		return stat{}, fmt.Errorf("reading the status of PID %d: %d fields", pid, len(f))
	}
	return stat{state: f[0], fields: f}, nil
}

// OOMKills is the kernel's count of processes its OOM killer killed
// (/proc/vmstat oom_kill, Linux 4.13 and later), read from the proc
// mount root ("" = /proc); false when it cannot be read.
func OOMKills(root string) (uint64, bool) {
	if root == "" {
		root = "/proc"
	}
	b, err := os.ReadFile(filepath.Join(root, "vmstat"))
	if err != nil {
		return 0, false
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "oom_kill "); ok {
			n, err := strconv.ParseUint(strings.TrimSpace(v), 10, 64)
			return n, err == nil
		}
	}
	return 0, false
}

// statOwner is the owner of the file fi describes.
func statOwner(fi os.FileInfo, err error) (uint32, bool) {
	if err != nil {
		return 0, false
	}
	s, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, false
	}
	return s.Uid, true
}

func absDur(d time.Duration) time.Duration {
	if d < 0 {
		return -d
	}
	return d
}
