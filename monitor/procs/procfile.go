package procs

import (
	"bytes"
	"errors"
	"strconv"
)

// The parsers of the /proc files a scan reads. They take the bytes, not a
// path, so they are tested (and fuzzed) on any platform.

// stat is what /proc/PID/stat says that a scan needs.
type stat struct {
	comm  string
	state byte // R, S, D, Z, ... (proc(5))
	ppid  int
	ticks uint64 // utime + stime
	start uint64
	vsize uint64 // bytes of address space: changes when libraries are mapped
	rss   uint64 // resident pages
}

var (
	errMalformedStat = errors.New("malformed stat")
	errShortStat     = errors.New("short stat")
)

// parseStat reads one /proc/PID/stat line.
func parseStat(b []byte) (stat, error) {
	// comm is in parentheses and may contain anything; fields follow the
	// last ')'.
	open, close := bytes.IndexByte(b, '('), bytes.LastIndexByte(b, ')')
	if open < 0 || close < open {
		return stat{}, errMalformedStat
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
		case 3:
			if len(f) > 0 {
				st.state = f[0]
			}
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
		return stat{}, errShortStat
	}
	return st, nil
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
