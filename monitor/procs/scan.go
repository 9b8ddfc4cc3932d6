// Package procs is the process side of "who is using the GPU": one scan of
// the process table per refresh, the ML runtimes each process has mapped
// (read from /proc/PID/maps), the environment it runs from, and a verdict
// that says whether a GPU workload is really on the GPU.
//
// gopsutil lists the processes and gives their identity (name, user, start
// time, command line), kept per process so those are read once; the hot
// path (CPU time, RSS, the mapped files) is parsed from /proc directly
// with reused buffers, so a refresh with a thousand processes stays cheap.
package procs

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/shirou/gopsutil/v3/common"
	"github.com/shirou/gopsutil/v3/process"
)

// Options configures a Scanner.
type Options struct {
	// ProcRoot is where proc is mounted ("" = /proc).
	ProcRoot string
	Logger   *slog.Logger
	// Now is the clock (tests inject one).
	Now func() time.Time
}

// Proc is what one scan knows about a process.
type Proc struct {
	PID  int `json:"pid"`
	PPID int `json:"ppid"`
	// HostPID is the PID in the outermost PID namespace visible (NSpid),
	// which is what NVML reports; equal to PID outside containers.
	HostPID int    `json:"host_pid"`
	Name    string `json:"name"`
	User    string `json:"user"`
	// Cmdline is redacted of secrets.
	Cmdline        []string  `json:"cmdline"`
	StartTime      time.Time `json:"start_time"`
	CPUPercent     float64   `json:"cpu_percent"`
	CPUTimeSeconds float64   `json:"cpu_time_seconds"`
	RSSBytes       uint64    `json:"rss_bytes"`
	// GPULibs are the ML runtime libraries mapped, by base name, sorted.
	GPULibs []string `json:"gpu_libs"`
	// LibPaths are the full paths of GPULibs.
	LibPaths []string `json:"lib_paths,omitempty"`
	// EnvPath is the Python environment the process runs from, and EnvVia
	// how that was found: VIRTUAL_ENV, CONDA_PREFIX, interpreter, libraries.
	EnvPath string `json:"env,omitempty"`
	EnvVia  string `json:"env_via,omitempty"`
	// Unreadable says what could not be read (another user's process).
	Unreadable []string `json:"unreadable,omitempty"`

	kinds map[string]bool // runtime kinds mapped
}

// Workload reports whether the process has an ML runtime mapped.
func (p *Proc) Workload() bool { return len(p.kinds) > 0 }

// entry is what is kept about a process between scans.
type entry struct {
	p         *process.Process
	start     uint64 // start time in clock ticks: identifies the process across PID reuse
	proc      Proc
	lastTicks uint64
	lastAt    time.Time
	vmSize    uint64    // VmSize when maps were last read
	mapsAt    time.Time // when maps were last read
}

// Scanner scans the process table; it keeps what it learned about each
// process between scans, so CPU % is over the interval since the last scan.
type Scanner struct {
	root  string
	ctx   context.Context
	log   *slog.Logger
	now   func() time.Time
	seen  map[int32]*entry
	buf   []byte
	ticks float64
	boot  time.Time
	page  uint64
}

// NewScanner makes a scanner over o.ProcRoot.
func NewScanner(o Options) *Scanner {
	root := o.ProcRoot
	if root == "" {
		root = "/proc"
	}
	log := o.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	now := o.Now
	if now == nil {
		now = time.Now
	}
	s := &Scanner{root: root, log: log, now: now, seen: map[int32]*entry{}, buf: make([]byte, 0, 4096),
		ticks: 100, page: uint64(os.Getpagesize())}
	s.ctx = context.WithValue(context.Background(), common.EnvKey, common.EnvMap{common.HostProcEnvKey: root})
	s.boot = bootTime(root)
	return s
}

// mapsRefresh is how often a known workload's maps are read again: the
// runtimes a process loaded rarely change once it is a workload.
const mapsRefresh = 30 * time.Second

// Scan reads the process table once. A process that exits during the scan
// is left out; what cannot be read of another user's process is listed in
// its Unreadable.
func (s *Scanner) Scan(ctx context.Context) ([]Proc, error) {
	pids, err := process.PidsWithContext(s.ctx)
	if err != nil {
		return nil, fmt.Errorf("listing processes in %s: %w", s.root, err)
	}
	now := s.now()
	alive := make(map[int32]bool, len(pids))
	out := make([]Proc, 0, len(pids))
	for _, pid := range pids {
		if ctx.Err() != nil {
			return out, ctx.Err()
		}
		alive[pid] = true
		p, ok := s.scanOne(pid, now)
		if ok {
			out = append(out, p)
		}
	}
	for pid := range s.seen {
		if !alive[pid] {
			delete(s.seen, pid)
		}
	}
	return out, nil
}

// scanOne reads one process; ok is false when it is gone or a kernel thread.
func (s *Scanner) scanOne(pid int32, now time.Time) (Proc, bool) {
	st, err := s.readStat(pid)
	if err != nil {
		delete(s.seen, pid)
		return Proc{}, false
	}
	if st.ppid == 2 || pid == 2 {
		return Proc{}, false // kernel threads
	}
	e := s.seen[pid]
	if e == nil || e.start != st.start {
		e = s.identify(pid, st)
		s.seen[pid] = e
		e.lastTicks, e.lastAt = st.ticks, now
	}
	p := &e.proc
	p.PPID = st.ppid
	p.CPUTimeSeconds = float64(st.ticks) / s.ticks
	if dt := now.Sub(e.lastAt).Seconds(); dt > 0 {
		p.CPUPercent = 100 * float64(st.ticks-e.lastTicks) / s.ticks / dt
		e.lastTicks, e.lastAt = st.ticks, now
	}
	p.RSSBytes = st.rss * s.page
	vm := st.vsize
	// Re-read the maps when the address space changed, at most every
	// mapsRefresh for a process already known to be a workload.
	if e.mapsAt.IsZero() || (vm != e.vmSize && (!p.Workload() || now.Sub(e.mapsAt) >= mapsRefresh)) {
		s.readMaps(p)
		e.vmSize, e.mapsAt = vm, now
		if p.EnvPath == "" || p.EnvVia == "libraries" {
			attributeByLibs(p)
		}
	}
	return *p, true
}

// identify reads what does not change in a process's life.
func (s *Scanner) identify(pid int32, st stat) *entry {
	gp := &process.Process{Pid: pid}
	e := &entry{p: gp, start: st.start}
	p := &e.proc
	p.PID, p.HostPID, p.PPID = int(pid), int(pid), st.ppid
	p.StartTime = s.boot.Add(time.Duration(float64(st.start) / s.ticks * float64(time.Second)))
	p.Name = st.comm
	if n, err := gp.NameWithContext(s.ctx); err == nil && n != "" {
		p.Name = n
	}
	if u, err := gp.UsernameWithContext(s.ctx); err == nil {
		p.User = u
	} else if !errors.Is(err, fs.ErrNotExist) {
		p.Unreadable = append(p.Unreadable, "user: "+errText(err))
	}
	if args, err := gp.CmdlineSliceWithContext(s.ctx); err == nil {
		p.Cmdline = Redact(args)
	} else {
		p.Unreadable = append(p.Unreadable, "cmdline: "+errText(err))
	}
	s.readNSpid(p)
	s.attributeByEnviron(p)
	return e
}

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
	f, err := os.Open(filepath.Join(s.root, strconv.Itoa(int(pid)), name))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	s.buf = s.buf[:cap(s.buf)]
	n := 0
	for {
		m, err := f.Read(s.buf[n:])
		n += m
		if err != nil || m == 0 {
			break
		}
		if n == len(s.buf) {
			s.buf = append(s.buf, make([]byte, len(s.buf))...)
		}
	}
	return s.buf[:n], nil
}

// readMaps fills GPULibs from /proc/PID/maps.
func (s *Scanner) readMaps(p *Proc) {
	f, err := os.Open(filepath.Join(s.root, strconv.Itoa(p.PID), "maps"))
	if err != nil {
		p.noteUnreadable("maps", err)
		return
	}
	defer f.Close()
	var libs, paths []string
	kinds := map[string]bool{}
	err = ParseMaps(f, func(path string) {
		if k, ok := runtimeLib(path); ok {
			kinds[k] = true
			base := filepath.Base(path)
			if !slices.Contains(libs, base) {
				libs = append(libs, base)
				paths = append(paths, path)
			}
		}
	})
	if err != nil {
		p.noteUnreadable("maps", err)
		return
	}
	slices.Sort(libs)
	p.GPULibs, p.LibPaths, p.kinds = libs, paths, kinds
	if len(kinds) == 0 {
		p.kinds = nil
	}
}

func (p *Proc) noteUnreadable(what string, err error) {
	msg := what + ": " + errText(err)
	if !slices.Contains(p.Unreadable, msg) {
		p.Unreadable = append(p.Unreadable, msg)
	}
}

// readNSpid maps the process to the PID NVML knows: the first NSpid entry
// is its PID in the outermost namespace this proc mount shows.
func (s *Scanner) readNSpid(p *Proc) {
	b, err := os.ReadFile(filepath.Join(s.root, strconv.Itoa(p.PID), "status"))
	if err != nil {
		return
	}
	if host, ok := ParseNSpid(b); ok {
		p.HostPID = host
	}
}

// ParseNSpid reads the NSpid line of /proc/PID/status and returns the PID
// in the outermost namespace listed.
func ParseNSpid(status []byte) (int, bool) {
	for _, line := range bytes.Split(status, []byte("\n")) {
		rest, ok := bytes.CutPrefix(line, []byte("NSpid:"))
		if !ok {
			continue
		}
		f := bytes.Fields(rest)
		if len(f) == 0 {
			return 0, false
		}
		n, err := strconv.Atoi(string(f[0]))
		return n, err == nil && n > 0
	}
	return 0, false
}

// bootTime is when the machine started, for process start times.
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
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}
