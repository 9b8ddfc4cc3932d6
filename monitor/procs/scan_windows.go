package procs

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"time"
	"unsafe"

	"golang.org/x/sys/windows"
)

// The Windows Source. One NtQuerySystemInformation(SystemProcessInformation)
// call a scan gives every process's parent, image name, start, CPU time,
// working set and address-space size, for every process, even one that
// cannot be opened (another user's, a protected one): no process is
// opened for what changes from one refresh to the next. What never
// changes (command line, environment, user, image path) is read from the
// process once, when it is first seen; its modules then, and again when
// its address space changes size (libsDue, as maps are on Linux).
//
// gopsutil lists processes on Windows too, but each of its calls opens
// the process again, its command line is split at spaces (a quoted
// "C:\Program Files\..." falls apart), and a process it may not read
// answers an empty command line and no error, which would hide that it
// could not be read.

// winEntry is what is kept about a process between scans.
type winEntry struct {
	created int64 // CreateTime: identifies the process across PID reuse (0: unknown)
	proc    Proc
	lastCPU int64 // user + kernel time, 100 ns units
	lastAt  time.Time
	vmSize  uint64    // VirtualSize when the modules were last read
	modsAt  time.Time // when the modules were last read
}

// sysProc is one process in a system snapshot.
type sysProc struct {
	pid, ppid uint32
	threads   uint32
	name      []uint16 // image base name; points into the snapshot buffer
	created   int64    // 100 ns units since 1601; 0 for the pseudo-processes
	cpu       int64    // user + kernel time, 100 ns units
	ws, vs    uint64   // working set (resident) and virtual size, bytes
}

// openFunc opens a process (windows.OpenProcess without inheritance).
// Tests deny access through it, as Windows does for a protected process.
type openFunc func(access, pid uint32) (windows.Handle, error)

func openProcess(access, pid uint32) (windows.Handle, error) {
	return windows.OpenProcess(access, false, pid)
}

// winScanner is the Windows Source: Scan is not safe for concurrent use;
// Installer (which shares nothing with Scan but open) is.
type winScanner struct {
	log     *slog.Logger
	now     func() time.Time
	open    openFunc
	seen    map[uint32]*winEntry
	buf     []byte    // the snapshot, reused
	snap    []sysProc // reused
	created map[uint32]int64
	alive   map[uint32]bool
	users   map[string]string // SID -> account name
}

func newWinScanner(o Options) *winScanner {
	log := o.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	now := o.Now
	if now == nil {
		now = time.Now
	}
	return &winScanner{log: log, now: now, open: openProcess, seen: map[uint32]*winEntry{},
		created: map[uint32]int64{}, alive: map[uint32]bool{}, users: map[string]string{}}
}

// Access rights: what a scan asks of a process first, and the least it
// settles for (a protected process grants only the limited query, which
// still gives the image path and the user).
const (
	accessRead    = windows.PROCESS_QUERY_LIMITED_INFORMATION | windows.PROCESS_VM_READ
	accessQuery   = windows.PROCESS_QUERY_LIMITED_INFORMATION
	accessModules = windows.PROCESS_QUERY_INFORMATION | windows.PROCESS_VM_READ // what a module snapshot needs
)

// Scan reads the process table once. The System Idle Process (PID 0, the
// processors' idle time) and processes that have exited (listed while a
// handle keeps them, with no thread left) are left out; a process that
// cannot be opened is listed with what the snapshot says of it and its
// Unreadable.
func (s *winScanner) Scan(ctx context.Context) ([]Proc, error) {
	var err error
	s.buf, s.snap, err = snapshot(s.buf, s.snap[:0])
	if err != nil {
		return nil, err
	}
	now := s.now()
	clear(s.created)
	clear(s.alive)
	for _, sp := range s.snap {
		s.created[sp.pid] = sp.created
	}
	out := make([]Proc, 0, len(s.snap))
	for _, sp := range s.snap {
		if err := ctx.Err(); err != nil {
			return out, fmt.Errorf("scanning processes: %w", err)
		}
		if sp.pid == 0 || sp.threads == 0 {
			continue
		}
		s.alive[sp.pid] = true
		if p, ok := s.scanOne(sp, parentOf(sp, s.created), now); ok {
			out = append(out, p)
		}
	}
	for pid := range s.seen {
		if !s.alive[pid] {
			delete(s.seen, pid)
		}
	}
	return out, nil
}

// parentOf is sp's parent PID, or 0 when that PID now belongs to a
// younger process: Windows keeps the PID a process was started by even
// after that parent exits and its PID is reused, and a DataLoader worker
// must not be taken for the child of whatever got its parent's PID.
func parentOf(sp sysProc, created map[uint32]int64) int {
	if pc, ok := created[sp.ppid]; ok && pc != 0 && sp.created != 0 && pc > sp.created {
		return 0
	}
	return int(sp.ppid)
}

// scanOne reads one process; ok is false when it is gone.
func (s *winScanner) scanOne(sp sysProc, ppid int, now time.Time) (Proc, bool) {
	e := s.seen[sp.pid]
	if e == nil || e.created != sp.created {
		var ok bool
		if e, ok = s.identify(sp, ppid); !ok {
			delete(s.seen, sp.pid)
			return Proc{}, false
		}
		s.seen[sp.pid] = e
		e.lastCPU, e.lastAt = sp.cpu, now
	}
	p := &e.proc
	p.PPID = ppid
	p.CPUTimeSeconds = float64(sp.cpu) / 1e7
	if dt := now.Sub(e.lastAt).Seconds(); dt > 0 {
		p.CPUPercent = 100 * float64(sp.cpu-e.lastCPU) / 1e7 / dt
		e.lastCPU, e.lastAt = sp.cpu, now
	}
	p.RSSBytes = sp.ws
	if libsDue(e.modsAt, e.vmSize, sp.vs, p.Workload(), now) {
		if !s.readModules(p) {
			delete(s.seen, sp.pid)
			return Proc{}, false // exited since the snapshot
		}
		e.vmSize, e.modsAt = sp.vs, now
		if p.EnvPath == "" || p.EnvVia == viaLibraries {
			attributeByLibs(p)
		}
	}
	return *p, true
}

// identify reads what does not change in a process's life; ok is false
// only when it is gone.
func (s *winScanner) identify(sp sysProc, ppid int) (*winEntry, bool) {
	e := &winEntry{created: sp.created}
	p := &e.proc
	p.PID, p.HostPID, p.PPID = int(sp.pid), int(sp.pid), ppid
	p.Name = windows.UTF16ToString(sp.name)
	if sp.created != 0 {
		p.StartTime = time.Unix(0, (sp.created-unixEpochFiletime)*100)
	}
	h, err := s.open(accessRead, sp.pid)
	readable := err == nil
	if err != nil && !processGone(err) {
		// Without PROCESS_VM_READ: the image path and the user may still
		// be had.
		p.noteUnreadable("cmdline", err)
		p.noteUnreadable("environ", err)
		h, err = s.open(accessQuery, sp.pid)
	}
	if processGone(err) {
		return nil, false
	}
	if err != nil {
		p.noteUnreadable("user", err)
		return e, true
	}
	defer windows.CloseHandle(h)
	if u, err := s.userOf(h); err == nil {
		p.User = u
	} else {
		p.noteUnreadable("user", err)
	}
	if exe, err := imagePath(h); err != nil {
		p.noteUnreadable("exe", err)
	} else {
		p.Exe = exe
	}
	var vars environVars
	if readable {
		vars = s.readIdentity(h, p)
	}
	attributeByEnviron(p, vars)
	return e, true
}

// readIdentity reads the command line and the environment of the process
// behind h (opened with accessRead) into p.
func (s *winScanner) readIdentity(h windows.Handle, p *Proc) environVars {
	pp, err := readParams(h)
	if err != nil {
		p.noteUnreadable("cmdline", err)
		p.noteUnreadable("environ", err)
		return environVars{}
	}
	if argv, err := windows.DecomposeCommandLine(pp.cmdline); err == nil && len(argv) > 0 {
		p.Cmdline = Redact(argv)
	} else if err != nil {
		p.noteUnreadable("cmdline", err)
	}
	if pp.cwd != "" {
		p.Cwd = filepath.Clean(pp.cwd)
	}
	block, err := pp.readEnviron(h)
	if err != nil {
		p.noteUnreadable("environ", err)
		return environVars{}
	}
	return parseEnviron(environOfUTF16(block))
}

// unixEpochFiletime is 1970-01-01 in FILETIME units (100 ns since 1601).
const unixEpochFiletime = 116444736000000000

// processGone reports whether err says the process no longer exists:
// OpenProcess answers ERROR_INVALID_PARAMETER for a PID nobody has.
func processGone(err error) bool {
	return errors.Is(err, windows.ERROR_INVALID_PARAMETER)
}

// userOf is the account the process runs as, cached by SID; the SID
// itself when it names no account.
func (s *winScanner) userOf(h windows.Handle) (string, error) {
	var tok windows.Token
	if err := windows.OpenProcessToken(h, windows.TOKEN_QUERY, &tok); err != nil {
		return "", fmt.Errorf("opening the process token: %w", err)
	}
	defer tok.Close()
	tu, err := tok.GetTokenUser()
	if err != nil {
		return "", fmt.Errorf("reading the token's user: %w", err)
	}
	sid := tu.User.Sid.String()
	if n, ok := s.users[sid]; ok {
		return n, nil
	}
	n := sid
	if account, _, _, err := tu.User.Sid.LookupAccount(""); err == nil {
		n = account
	}
	s.users[sid] = n
	return n, nil
}

// imagePath is the full path of the process's executable.
func imagePath(h windows.Handle) (string, error) {
	buf := make([]uint16, windows.MAX_LONG_PATH)
	n := uint32(len(buf))
	if err := windows.QueryFullProcessImageName(h, 0, &buf[0], &n); err != nil {
		return "", fmt.Errorf("reading the image path: %w", err)
	}
	return windows.UTF16ToString(buf[:n]), nil
}

// snapshot lists the processes alive now with one
// NtQuerySystemInformation(SystemProcessInformation) call into buf
// (grown when the table has outgrown it), appending them to out.
func snapshot(buf []byte, out []sysProc) ([]byte, []sysProc, error) {
	if len(buf) == 0 {
		buf = make([]byte, 256<<10)
	}
	for tries := 0; ; tries++ {
		var need uint32
		err := windows.NtQuerySystemInformation(windows.SystemProcessInformation, unsafe.Pointer(&buf[0]), uint32(len(buf)), &need)
		if err == nil {
			break
		}
		if !errors.Is(err, windows.STATUS_INFO_LENGTH_MISMATCH) || tries == 8 {
			return buf, out, fmt.Errorf("listing processes: %w", err)
		}
		buf = make([]byte, max(int(need)+64<<10, 2*len(buf)))
	}
	const size = int(unsafe.Sizeof(windows.SYSTEM_PROCESS_INFORMATION{}))
	for off := 0; off+size <= len(buf); {
		spi := (*windows.SYSTEM_PROCESS_INFORMATION)(unsafe.Pointer(&buf[off]))
		sp := sysProc{pid: uint32(spi.UniqueProcessID), ppid: uint32(spi.InheritedFromUniqueProcessID), threads: spi.NumberOfThreads,
			created: spi.CreateTime, cpu: spi.UserTime + spi.KernelTime, ws: uint64(spi.WorkingSetSize), vs: uint64(spi.VirtualSize)}
		if spi.ImageName.Length > 0 && spi.ImageName.Buffer != nil {
			sp.name = unsafe.Slice(spi.ImageName.Buffer, spi.ImageName.Length/2)
		}
		out = append(out, sp)
		if spi.NextEntryOffset == 0 {
			break
		}
		off += int(spi.NextEntryOffset)
	}
	return buf, out, nil
}
