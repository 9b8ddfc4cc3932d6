package procs

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// stat is what /proc/PID/stat says that a scan needs.
type stat struct {
	comm  string
	ppid  int
	ticks uint64 // utime + stime
	start uint64
	vsize uint64 // bytes of address space: changes when libraries are mapped
	rss   uint64 // resident pages
}

// readStat parses /proc/PID/stat into a reused buffer.
func (s *Scanner) readStat(pid int32) (stat, error) {
	b, err := s.read(pid, "stat")
	if err != nil {
		return stat{}, err
	}
	// comm is in parentheses and may contain anything; fields follow the
	// last ')'.
	open, close := bytes.IndexByte(b, '('), bytes.LastIndexByte(b, ')')
	if open < 0 || close < open {
		return stat{}, fmt.Errorf("malformed stat of %d", pid)
	}
	var st stat
	st.comm = string(b[open+1 : close])
	fields := b[close+1:]
	// After comm: state(3) ppid(4) ... utime(14) stime(15) ... starttime(22)
	// vsize(23) rss(24).
	n := 2
	for len(fields) > 0 && n < 24 {
		fields = bytes.TrimLeft(fields, " ")
		end := bytes.IndexByte(fields, ' ')
		if end < 0 {
			end = len(fields)
		}
		f := fields[:end]
		fields = fields[end:]
		n++
		switch n {
		case 4:
			st.ppid = atoi(f)
		case 14, 15:
			st.ticks += uint64(atoi(f))
		case 22:
			st.start = uint64(atoi(f))
		case 23:
			st.vsize = uint64(atoi(f))
		case 24:
			st.rss = uint64(atoi(f))
		}
	}
	if n < 24 {
		return stat{}, fmt.Errorf("short stat of %d", pid)
	}
	return st, nil
}

// read reads a small /proc file into the scanner's buffer.
func (s *Scanner) read(pid int32, name string) ([]byte, error) {
	f, err := openRaw(filepath.Join(s.root, strconv.Itoa(int(pid)), name))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	s.buf = s.buf[:cap(s.buf)]
	n := 0
	for {
		m, err := f.Read(s.buf[n:])
		n += m
		if err == io.EOF || (err == nil && m == 0) {
			break
		}
		if err != nil {
			return nil, err
		}
		if n == len(s.buf) {
			s.buf = slices.Grow(s.buf, len(s.buf))[:2*len(s.buf)]
		}
	}
	return s.buf[:n], nil
}

// status is what /proc/PID/status says that identifying a process needs.
type status struct {
	name  string
	uid   string // real uid
	nspid []int  // NSpid: the PID in each namespace, from the proc mount's inward
}

// parseStatus reads the Name, Uid and NSpid lines of /proc/PID/status.
func parseStatus(b []byte) status {
	var st status
	for len(b) > 0 {
		line := b
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			line, b = b[:i], b[i+1:]
		} else {
			b = nil
		}
		key, val, ok := bytes.Cut(line, []byte(":"))
		if !ok {
			continue
		}
		switch string(key) {
		case "Name":
			st.name = string(bytes.TrimSpace(val))
		case "Uid":
			if f := bytes.Fields(val); len(f) > 0 {
				st.uid = string(f[0])
			}
		case "NSpid":
			for _, f := range bytes.Fields(val) {
				n, err := strconv.Atoi(string(f))
				if err != nil || n <= 0 {
					st.nspid = nil
					break
				}
				st.nspid = append(st.nspid, n)
			}
		}
	}
	return st
}

// ParseNSpid reads the NSpid line of /proc/PID/status and returns the PID
// in the namespace of the proc mount it was read from (the first entry)
// and the PID inside the process's own namespace (the last). ok is false
// without a well-formed NSpid line (kernels before 4.1).
func ParseNSpid(status []byte) (outer, inner int, ok bool) {
	ns := parseStatus(status).nspid
	if len(ns) == 0 {
		return 0, 0, false
	}
	return ns[0], ns[len(ns)-1], true
}

// bootTime is when the machine started, for process start times.
// startTime is when the process of st started, from the boot time and
// its start in clock ticks.
func (s *Scanner) startTime(st stat) time.Time {
	return s.boot.Add(time.Duration(float64(st.start) / s.ticks * float64(time.Second)))
}

// StartTimeOf is when process pid started, exactly as Scan reports it in
// Proc.StartTime: with the PID it names one process, so that an action
// chosen on a listed process (terminating it) cannot fall on another that
// took its PID since.
func StartTimeOf(pid int) (time.Time, error) {
	s := NewScanner(Options{})
	st, err := s.readStat(int32(pid))
	if err != nil {
		return time.Time{}, fmt.Errorf("reading the start time of PID %d: %w", pid, err)
	}
	return s.startTime(st), nil
}

func bootTime(root string) time.Time {
	b, err := os.ReadFile(filepath.Join(root, "stat"))
	if err != nil {
		return time.Time{}
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "btime "); ok {
			if n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64); err == nil {
				return time.Unix(n, 0)
			}
		}
	}
	return time.Time{}
}

func atoi(b []byte) int {
	n := 0
	for _, c := range b {
		if c < '0' || c > '9' {
			break
		}
		n = n*10 + int(c-'0')
	}
	return n
}

func errText(err error) string {
	switch {
	case errors.Is(err, fs.ErrPermission):
		return "permission denied"
	case errors.Is(err, fs.ErrNotExist):
		return "gone"
	}
	var errno syscall.Errno
	if errors.As(err, &errno) {
		return errno.Error()
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}
