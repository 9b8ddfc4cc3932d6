package prom

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
)

// userHZ is the unit of /proc/PID/stat's times: USER_HZ, 100 on every
// Linux architecture Go runs on.
const userHZ = 100

// procStat is what the process metrics need of /proc/self/stat.
type procStat struct {
	utime, stime, starttime uint64 // clock ticks
	vsize                   uint64 // bytes
	rss                     uint64 // pages
}

// parseProcStat reads /proc/PID/stat's fields (proc(5)) after the
// command's name, which is in parentheses and may hold anything.
func parseProcStat(b []byte) (procStat, error) {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return procStat{}, fmt.Errorf("no ')' after the command's name")
	}
	f := bytes.Fields(b[i+1:])
	// f[0] is field 3 (state): field n is f[n-3].
	if len(f) < 22 {
		return procStat{}, fmt.Errorf("%d fields after the command's name, want at least 22", len(f))
	}
	var s procStat
	for _, x := range []struct {
		field int
		to    *uint64
	}{{14, &s.utime}, {15, &s.stime}, {22, &s.starttime}, {23, &s.vsize}, {24, &s.rss}} {
		v, err := strconv.ParseUint(string(f[x.field-3]), 10, 64)
		if err != nil {
			return procStat{}, fmt.Errorf("field %d: %w", x.field, err)
		}
		*x.to = v
	}
	return s, nil
}

// bootTime is /proc/stat's btime: when the machine booted, in seconds
// since the epoch.
func bootTime(proc string) (uint64, error) {
	b, err := os.ReadFile(filepath.Join(proc, "stat"))
	if err != nil {
		return 0, err
	}
	for line := range bytes.SplitSeq(b, []byte("\n")) {
		if v, ok := bytes.CutPrefix(line, []byte("btime ")); ok {
			return strconv.ParseUint(string(bytes.TrimSpace(v)), 10, 64)
		}
	}
	return 0, fmt.Errorf("%s has no btime", filepath.Join(proc, "stat"))
}

// collectProcess adds the process_ metrics of this process, read from
// proc ("" is /proc). What cannot be read is an error of the scrape, and
// the rest is given.
func collectProcess(b *batch, proc string) {
	if proc == "" {
		proc = "/proc"
	}
	path := filepath.Join(proc, "self", "stat")
	raw, err := os.ReadFile(path)
	if err == nil {
		var s procStat
		if s, err = parseProcStat(raw); err == nil {
			b.add(descCPUSeconds, float64(s.utime+s.stime)/userHZ)
			b.add(descVirtual, float64(s.vsize))
			b.add(descResident, float64(s.rss)*float64(os.Getpagesize()))
			var boot uint64
			if boot, err = bootTime(proc); err == nil {
				b.add(descStartSeconds, float64(boot)+float64(s.starttime)/userHZ)
			}
		}
	}
	if err != nil {
		b.fail(fmt.Errorf("reading the agent's process metrics from %s: %w", path, err))
	}
	fds := filepath.Join(proc, "self", "fd")
	if d, err := os.Open(fds); err != nil {
		b.fail(fmt.Errorf("counting the agent's open files: %w", err))
	} else {
		names, err := d.Readdirnames(-1)
		d.Close()
		if err != nil {
			b.fail(fmt.Errorf("counting the agent's open files in %s: %w", fds, err))
		} else {
			b.add(descOpenFDs, float64(len(names)))
		}
	}
	var r syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &r); err == nil {
		b.add(descMaxFDs, float64(r.Cur))
	}
}
