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
	"strconv"
	"strings"
	"time"

	"github.com/shirou/gopsutil/v3/common"
	"github.com/shirou/gopsutil/v3/process"
)

// entry is what is kept about a process between scans.
type entry struct {
	start uint64 // start time in clock ticks: identifies the process across PID reuse
	// comm is the name stat gave when the process was identified: exec
	// changes it (and the command line, the program, the environment)
	// within one life, so a new one means identify again.
	comm string
	// partial is set when the command line read empty: a process in the
	// middle of an exec has none yet. It is identified again next scan.
	partial   bool
	proc      Proc
	lastTicks uint64
	lastAt    time.Time
	vmSize    uint64    // VmSize when maps were last read
	mapsAt    time.Time // when maps were last read
}

// scanner scans the process table; it keeps what it learned about each
// process between scans, so CPU % is over the interval since the last scan
// and what never changes (user, command line, environment) is read once.
// It is the Linux Source: Scan is not safe for concurrent use, Installer
// (which shares nothing with Scan but the root) is.
type scanner struct {
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
	pods  podIndex
	wsl   bool
}

// newScanner makes a scanner over o.ProcRoot.
func newScanner(o Options) *scanner {
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
	s := &scanner{root: root, log: log, now: now, seen: map[int32]*entry{}, buf: make([]byte, 0, 8192),
		br: bufio.NewReaderSize(nil, 64<<10), users: map[string]string{},
		ticks: 100, page: uint64(os.Getpagesize())}
	s.ctx = context.WithValue(context.Background(), common.EnvKey, common.EnvMap{common.HostProcEnvKey: root})
	s.boot = bootTime(root)
	s.wsl = o.WSL
	s.pods = podIndex{root: o.PodLogRoot, now: now}
	if s.pods.root == "" {
		s.pods.root = DefaultPodLogRoot
	}
	return s
}

// Scan reads the process table once. A process that exits during the scan
// is left out; what cannot be read of another user's process is listed in
// its Unreadable. Kernel threads are left out.
func (s *scanner) Scan(ctx context.Context) ([]Proc, error) {
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
func (s *scanner) scanOne(pid int32, now time.Time) (Proc, bool) {
	st, err := s.readStat(pid)
	if err != nil {
		delete(s.seen, pid)
		return Proc{}, false
	}
	if st.ppid == 2 || pid == 2 {
		return Proc{}, false // kernel threads
	}
	e := s.seen[pid]
	if e == nil || e.start != st.start || e.comm != st.comm || e.partial {
		prev := e
		if e, err = s.identify(pid, st); err != nil {
			delete(s.seen, pid)
			return Proc{}, false
		}
		s.seen[pid] = e
		if prev != nil && prev.start == st.start {
			// the same process after an exec: its CPU time goes on
			e.lastTicks, e.lastAt = prev.lastTicks, prev.lastAt
		} else {
			e.lastTicks, e.lastAt = st.ticks, now
		}
	}
	p := &e.proc
	p.PPID = st.ppid
	p.CPUTimeSeconds = float64(st.ticks) / s.ticks
	p.State = ""
	if st.state != 0 {
		p.State = string(st.state)
	}
	if dt := now.Sub(e.lastAt).Seconds(); dt > 0 {
		p.CPUPercent = 100 * float64(st.ticks-e.lastTicks) / s.ticks / dt
		e.lastTicks, e.lastAt = st.ticks, now
	}
	p.RSSBytes = st.rss * s.page
	if libsDue(e.mapsAt, e.vmSize, st.vsize, p.Workload(), now) {
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

// identify reads what does not change in a process's life but at an
// exec. err is set only when the process is gone.
func (s *scanner) identify(pid int32, st stat) (*entry, error) {
	e := &entry{start: st.start, comm: st.comm}
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
		e.partial = len(args) == 0 // a zombie has none either: reading it again is cheap
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
	// What a relative command line is relative to, and the file really
	// run. Another user's are unreadable; nothing depends on them alone.
	dir := filepath.Join(s.root, strconv.Itoa(int(pid)))
	p.Exe, _ = os.Readlink(filepath.Join(dir, "exe"))
	p.Cwd, _ = os.Readlink(filepath.Join(dir, "cwd"))
	p.Exe = strings.TrimSuffix(p.Exe, " (deleted)")
	s.attributeByEnviron(p)
	if b, err := s.read(pid, "cgroup"); err == nil {
		p.Container = ParseCgroup(b)
		s.pods.fill(p.Container)
	}
	return e, nil
}

// userName is the login name of uid, cached; the number when it has none.
func (s *scanner) userName(uid string) string {
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
func (s *scanner) readMaps(p *Proc) error {
	f, err := openRaw(filepath.Join(s.root, strconv.Itoa(p.PID), "maps"))
	if err != nil {
		p.noteUnreadable("maps", err)
		return err
	}
	defer f.Close()
	s.br.Reset(f)
	var paths []string
	dxg := false
	err = parseMaps(s.br, func(path []byte) {
		dxg = dxg || string(path) == dxgDevice
		if !mayBeRuntime(path) {
			return
		}
		str := string(path)
		if _, ok := runtimeLib(str); ok {
			paths = append(paths, str)
		}
	})
	s.br.Reset(nil)
	if err != nil {
		p.noteUnreadable("maps", err)
		return err
	}
	setLibs(p, paths)
	p.DXG = dxg || s.wsl && p.Workload() && s.hasOpen(p.PID, dxgDevice)
	return nil
}
