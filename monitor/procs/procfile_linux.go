package procs

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// readStat reads /proc/PID/stat into the scanner's reused buffer.
func (s *scanner) readStat(pid int32) (stat, error) {
	b, err := s.read(pid, "stat")
	if err != nil {
		return stat{}, err
	}
	st, err := parseStat(b)
	if err != nil {
		return stat{}, fmt.Errorf("reading the stat of PID %d: %w", pid, err)
	}
	return st, nil
}

// read reads a small /proc file into the scanner's buffer.
func (s *scanner) read(pid int32, name string) ([]byte, error) {
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

// bootTime is when the machine started, for process start times.
// startTime is when the process of st started, from the boot time and
// its start in clock ticks.
func (s *scanner) startTime(st stat) time.Time {
	return s.boot.Add(time.Duration(float64(st.start) / s.ticks * float64(time.Second)))
}

// StartTimeOf is when process pid started, exactly as Scan reports it in
// Proc.StartTime: with the PID it names one process, so that an action
// chosen on a listed process (terminating it) cannot fall on another that
// took its PID since.
func StartTimeOf(pid int) (time.Time, error) {
	s := newScanner(Options{})
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
