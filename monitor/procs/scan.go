// Package procs is the process side of "who is using the GPU": one scan of
// the process table per refresh, the ML runtimes each process has mapped
// (read from /proc/PID/maps), the environment it runs from, and a verdict
// that says whether a GPU workload is really on the GPU.
//
// gopsutil lists the processes and reads each one's command line, once per
// process. Everything read on every refresh (CPU time, RSS, the mapped
// files) and the identity (user, start time, NSpid) are parsed from /proc
// directly with reused buffers: gopsutil's per-process calls for CPU, RSS
// and parent alone cost 50-80 ms and 11 MB a refresh with 1000 processes
// (BenchmarkGopsutilCPURSS1000), against a budget of 25 ms and 2 MB that
// the whole refresh meets (BenchmarkScan1000: about 17 ms, 0.5 MB).
package procs

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"os/user"
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

// Proc is what one scan knows about a process. Its slices are shared with
// the scanner's cache: treat them as read-only.
type Proc struct {
	PID  int `json:"pid"`
	PPID int `json:"ppid"`
	// HostPID is the PID NVML is matched against: the first NSpid entry,
	// the PID in the namespace of the proc mount read. It equals PID; it
	// names what the match relies on.
	HostPID int `json:"host_pid"`
	// NSPID is the PID inside the process's own PID namespace (the last
	// NSpid entry) when that differs from PID: the PID a containerized
	// job sees for itself. 0 otherwise.
	NSPID int    `json:"ns_pid,omitempty"`
	Name  string `json:"name"`
	User  string `json:"user"`
	// Cmdline is redacted of secrets.
	Cmdline   []string  `json:"cmdline"`
	StartTime time.Time `json:"start_time"`
	// CPUPercent is over the interval since the previous scan (100 = one
	// core); 0 on the first scan that sees the process.
	CPUPercent     float64 `json:"cpu_percent"`
	CPUTimeSeconds float64 `json:"cpu_time_seconds"`
	RSSBytes       uint64  `json:"rss_bytes"`
	// GPULibs are the ML runtime libraries mapped, by base name, sorted.
	GPULibs []string `json:"gpu_libs"`
	// LibPaths are the full paths of GPULibs.
	LibPaths []string `json:"lib_paths,omitempty"`
	// EnvPath is the Python environment the process runs from, and EnvVia
	// how that was found: VIRTUAL_ENV, CONDA_PREFIX, interpreter, libraries.
	EnvPath string `json:"env,omitempty"`
	EnvVia  string `json:"env_via,omitempty"`
	// CUDAVisibleDevices is CUDA_VISIBLE_DEVICES as the process was started
	// with it (the kernel keeps the environment of exec, not later changes
	// from inside); nil when unset or unreadable. Empty hides every GPU.
	CUDAVisibleDevices *string `json:"cuda_visible_devices,omitempty"`
	// Unreadable says what could not be read ("maps: permission denied"
	// for another user's process).
	Unreadable []string `json:"unreadable,omitempty"`
}

// Command is the command line on one line, for a table cell or a message:
// the arguments joined by spaces, with every run of whitespace inside them
// (the newlines of a `python -c` script) made one space; the process name
// when the command line could not be read.
func (p Proc) Command() string {
	if len(p.Cmdline) == 0 {
		return p.Name
	}
	return strings.Join(strings.Fields(strings.Join(p.Cmdline, " ")), " ")
}

// Workload reports whether the process has an ML runtime mapped.
func (p *Proc) Workload() bool { return len(p.GPULibs) > 0 }

// entry is what is kept about a process between scans.
type entry struct {
	start     uint64 // start time in clock ticks: identifies the process across PID reuse
	proc      Proc
	lastTicks uint64
	lastAt    time.Time
	vmSize    uint64    // VmSize when maps were last read
	mapsAt    time.Time // when maps were last read
}

// Scanner scans the process table; it keeps what it learned about each
// process between scans, so CPU % is over the interval since the last scan
// and what never changes (user, command line, environment) is read once.
// A Scanner is not safe for concurrent use.
type Scanner struct {
	root  string
	ctx   context.Context // carries ProcRoot to gopsutil
	log   *slog.Logger
	now   func() time.Time
	seen  map[int32]*entry
	buf   []byte        // reused for small /proc files
	br    *bufio.Reader // reused for maps
	users map[string]string
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
	s := &Scanner{root: root, log: log, now: now, seen: map[int32]*entry{}, buf: make([]byte, 0, 8192),
		br: bufio.NewReaderSize(nil, 64<<10), users: map[string]string{},
		ticks: 100, page: uint64(os.Getpagesize())}
	s.ctx = context.WithValue(context.Background(), common.EnvKey, common.EnvMap{common.HostProcEnvKey: root})
	s.boot = bootTime(root)
	return s
}

// How often maps are read again, when the address space has changed
// (VmSize): a known workload's runtimes rarely change, and any other
// process is looked at again within a fraction of JOB_ON_CPU's window. A
// busy browser changes its VmSize on every refresh; its thousand-line maps
// are not worth reading each time.
const (
	mapsRefresh = 30 * time.Second
	mapsRecheck = 5 * time.Second
)

// Scan reads the process table once. A process that exits during the scan
// is left out; what cannot be read of another user's process is listed in
// its Unreadable. Kernel threads are left out.
func (s *Scanner) Scan(ctx context.Context) ([]Proc, error) {
	pids, err := process.PidsWithContext(s.ctx)
	if err != nil {
		return nil, fmt.Errorf("listing processes in %s: %w", s.root, err)
	}
	now := s.now()
	alive := make(map[int32]bool, len(pids))
	out := make([]Proc, 0, len(pids))
	for _, pid := range pids {
		if err := ctx.Err(); err != nil {
			return out, fmt.Errorf("scanning processes in %s: %w", s.root, err)
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
		if e, err = s.identify(pid, st); err != nil {
			delete(s.seen, pid)
			return Proc{}, false
		}
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
	every := mapsRecheck
	if p.Workload() {
		every = mapsRefresh
	}
	if e.mapsAt.IsZero() || (st.vsize != e.vmSize && now.Sub(e.mapsAt) >= every) {
		if err := s.readMaps(p); errors.Is(err, fs.ErrNotExist) {
			delete(s.seen, pid)
			return Proc{}, false // exited since its stat was read
		}
		e.vmSize, e.mapsAt = st.vsize, now
		if p.EnvPath == "" || p.EnvVia == viaLibraries {
			attributeByLibs(p)
		}
	}
	return *p, true
}

// identify reads what does not change in a process's life. err is set
// only when the process is gone.
func (s *Scanner) identify(pid int32, st stat) (*entry, error) {
	e := &entry{start: st.start}
	p := &e.proc
	p.PID, p.HostPID, p.PPID = int(pid), int(pid), st.ppid
	p.StartTime = s.startTime(st)
	p.Name = st.comm
	if b, err := s.read(pid, "status"); err == nil {
		ps := parseStatus(b)
		if ps.name != "" {
			p.Name = ps.name
		}
		p.User = s.userName(ps.uid)
		if len(ps.nspid) > 0 {
			p.HostPID = ps.nspid[0]
			if last := ps.nspid[len(ps.nspid)-1]; last != p.PID {
				p.NSPID = last
			}
		}
	} else if errors.Is(err, fs.ErrNotExist) {
		return nil, err
	} else {
		p.noteUnreadable("status", err)
	}
	gp := &process.Process{Pid: pid}
	if args, err := gp.CmdlineSliceWithContext(s.ctx); err == nil {
		p.Cmdline = Redact(args)
	} else if errors.Is(err, fs.ErrNotExist) {
		return nil, err
	} else {
		p.noteUnreadable("cmdline", err)
	}
	// comm is cut at 15 bytes; the command line has the whole name.
	if len(p.Name) == 15 && len(p.Cmdline) > 0 {
		if full := filepath.Base(p.Cmdline[0]); strings.HasPrefix(full, p.Name) {
			p.Name = full
		}
	}
	s.attributeByEnviron(p)
	return e, nil
}

// userName is the login name of uid, cached; the number when it has none.
func (s *Scanner) userName(uid string) string {
	if uid == "" {
		return ""
	}
	if n, ok := s.users[uid]; ok {
		return n
	}
	n := uid
	if u, err := user.LookupId(uid); err == nil {
		n = u.Username
	}
	s.users[uid] = n
	return n
}

// readMaps fills GPULibs and LibPaths from /proc/PID/maps.
func (s *Scanner) readMaps(p *Proc) error {
	f, err := openRaw(filepath.Join(s.root, strconv.Itoa(p.PID), "maps"))
	if err != nil {
		p.noteUnreadable("maps", err)
		return err
	}
	defer f.Close()
	s.br.Reset(f)
	var libs, paths []string
	err = parseMaps(s.br, func(path []byte) {
		if !mayBeRuntime(path) {
			return
		}
		str := string(path)
		if _, ok := runtimeLib(str); !ok {
			return
		}
		if base := filepath.Base(str); !slices.Contains(libs, base) {
			libs = append(libs, base)
			paths = append(paths, str)
		}
	})
	s.br.Reset(nil)
	if err != nil {
		p.noteUnreadable("maps", err)
		return err
	}
	// Sort both by base name, so LibPaths[i] is GPULibs[i]'s path.
	slices.SortFunc(paths, func(a, b string) int { return strings.Compare(filepath.Base(a), filepath.Base(b)) })
	for i, path := range paths {
		libs[i] = filepath.Base(path)
	}
	p.GPULibs, p.LibPaths = libs, paths
	return nil
}

func (p *Proc) noteUnreadable(what string, err error) {
	msg := what + ": " + errText(err)
	if !slices.Contains(p.Unreadable, msg) {
		p.Unreadable = append(p.Unreadable, msg)
	}
}
