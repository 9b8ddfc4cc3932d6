package procs

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/windows"
)

// Windows-only tests of the snapshot reader, run under wine by
// scripts/test-windows.sh (realprocs_test.go has the tests both platforms
// share).

// TestUnreadableProcessIsListed: a process Windows will not open (another
// user's, a protected one) is listed with what the system snapshot says
// of it (name, parent, start, CPU time, memory) and what could not be
// read, never dropped. Wine opens every process, so the denial is
// injected where the scanner opens processes.
func TestUnreadableProcessIsListed(t *testing.T) {
	dir := t.TempDir()
	python := filepath.Join(dir, "python.exe") // an ML job by its name, in no environment
	installAs(t, python)
	_, libs := fixtureEnv(t, libNames("torch_cpu", "torch_cuda")...)
	tests := []struct {
		name string
		deny uint32 // the access rights refused
		want []string
		user bool
	}{
		{"nothing may be opened", windows.PROCESS_QUERY_LIMITED_INFORMATION | windows.PROCESS_QUERY_INFORMATION | windows.PROCESS_VM_READ,
			[]string{"cmdline: permission denied", "environ: permission denied", "modules: permission denied", "user: permission denied"}, false},
		{"a protected process: the limited query only", windows.PROCESS_QUERY_INFORMATION | windows.PROCESS_VM_READ,
			[]string{"cmdline: permission denied", "environ: permission denied", "modules: permission denied"}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := startHelperAs(t, python, "spin", libs)
			pid := uint32(h.cmd.Process.Pid)
			s := newWinScanner(Options{})
			s.open = func(access, p uint32) (windows.Handle, error) {
				if p == pid && access&tt.deny != 0 {
					return 0, windows.ERROR_ACCESS_DENIED
				}
				return openProcess(access, p)
			}
			ps := scanTwice(t, s)
			p := findProc(t, ps, int(pid))
			if got := slices.Sorted(slices.Values(p.Unreadable)); !slices.Equal(got, tt.want) {
				t.Errorf("unreadable = %q, want %q", got, tt.want)
			}
			if p.Name != "python.exe" || p.PPID != os.Getpid() || p.Workload() || p.Cmdline != nil || p.EnvPath != "" {
				t.Errorf("proc = %+v", p)
			}
			if d := time.Since(p.StartTime); d < 0 || d > time.Minute || p.CPUTimeSeconds <= 0 || p.RSSBytes == 0 {
				t.Errorf("start %s, CPU time %.2f s, RSS %d: the snapshot has them whatever the access", p.StartTime, p.CPUTimeSeconds, p.RSSBytes)
			}
			if (p.User != "") != tt.user {
				t.Errorf("user = %q with the limited query %v", p.User, tt.user)
			}
			r := rowOf(t, Classify(ps, a100With(), nil, nil, DefaultBusyRule, nil, time.Now(), nil), int(pid))
			if r.Verdict != VerdictOther || !strings.Contains(r.Reason, "cannot be read") {
				t.Errorf("verdict %s: %s", r.Verdict, r.Reason)
			}
		})
	}
}

// TestWindowsAttribution: the ways only Windows has to find a process's
// environment.
func TestWindowsAttribution(t *testing.T) {
	venv, _ := fixtureEnv(t)
	python, _ := interpreterOf(venv)
	installAs(t, python)
	conda, _ := fixtureEnv(t)
	if err := os.MkdirAll(filepath.Join(conda, "conda-meta"), 0o755); err != nil {
		t.Fatal(err)
	}
	condaPython := filepath.Join(conda, "python.exe")
	installAs(t, condaPython)
	loose := looseLibs(t, libName("torch_cuda"))

	// The interpreter named only "python" on its command line: its image
	// path says where it runs from.
	bare := exec.Command(python)
	bare.SysProcAttr = &syscall.SysProcAttr{CmdLine: `python -test.run=^$`}
	tests := []struct {
		name     string
		cmd      *exec.Cmd
		env      []string
		wantPath string
		wantVia  string
	}{
		{"a variable name in lower case", exec.Command(os.Args[0]), []string{"virtual_env=" + venv}, venv, viaVirtualEnv},
		{"a conda environment's python.exe", exec.Command(condaPython), nil, conda, viaInterpreter},
		{"the image path, not the command line", bare, nil, venv, viaInterpreter},
		// The base interpreter a venv's redirector started.
		{"__PYVENV_LAUNCHER__", exec.Command(os.Args[0]), []string{"__PYVENV_LAUNCHER__=" + python}, venv, viaInterpreter},
	}
	helpers := make([]*helperProc, len(tests))
	for i, tt := range tests {
		helpers[i] = startHelperCmd(t, tt.cmd, "sleep", loose, tt.env...)
	}
	ps, err := NewSource(Options{}).Scan(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := findProc(t, ps, helpers[i].cmd.Process.Pid)
			if !strings.EqualFold(p.EnvPath, tt.wantPath) || p.EnvVia != tt.wantVia {
				t.Errorf("env = %q via %q, want %q via %q", p.EnvPath, p.EnvVia, tt.wantPath, tt.wantVia)
			}
			if len(p.Unreadable) > 0 {
				t.Errorf("unreadable %v", p.Unreadable)
			}
		})
	}
}

// TestExitedProcessHeldOpen: a process that has exited while a handle
// keeps it is not listed as running. Windows keeps it in the system's
// process list with no thread left; wine 8 drops it from the list itself,
// so under wine this shows only that nothing else lists it.
func TestExitedProcessHeldOpen(t *testing.T) {
	h := startHelper(t, "sleep", nil)
	pid := uint32(h.cmd.Process.Pid)
	held, err := windows.OpenProcess(windows.SYNCHRONIZE|windows.PROCESS_QUERY_LIMITED_INFORMATION, false, pid)
	if err != nil {
		t.Fatal(err)
	}
	defer windows.CloseHandle(held)
	s := NewSource(Options{})
	ps, err := s.Scan(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	findProc(t, ps, int(pid))
	h.cmd.Process.Kill()
	if ev, err := windows.WaitForSingleObject(held, windows.INFINITE); ev != windows.WAIT_OBJECT_0 {
		t.Fatalf("waiting for the helper to exit: %d, %v", ev, err)
	}
	ps, err = s.Scan(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range ps {
		if p.PID == int(pid) {
			t.Errorf("an exited process held open is listed: %+v", p)
		}
	}
}

// TestParentOf: Windows keeps a process's parent PID after the parent
// exits and its PID is reused; a younger process with that PID is not the
// parent.
func TestParentOf(t *testing.T) {
	created := map[uint32]int64{4: 0, 100: 5000, 200: 9000}
	tests := []struct {
		name string
		sp   sysProc
		want int
	}{
		{"the parent is older", sysProc{pid: 300, ppid: 100, created: 6000}, 100},
		{"the PID was reused by a younger process", sysProc{pid: 300, ppid: 200, created: 6000}, 0},
		{"the parent has exited", sysProc{pid: 300, ppid: 150, created: 6000}, 150},
		{"the System process, whose start is unknown", sysProc{pid: 300, ppid: 4, created: 6000}, 4},
		{"a child whose start is unknown", sysProc{pid: 300, ppid: 200}, 200},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := parentOf(tt.sp, created); got != tt.want {
				t.Errorf("parentOf = %d, want %d", got, tt.want)
			}
		})
	}
}

// TestSnapshotGrows: a process table larger than the buffer is read
// whole: the buffer grows.
func TestSnapshotGrows(t *testing.T) {
	buf, snap, err := snapshot(make([]byte, 64), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(buf) <= 64 || !slices.ContainsFunc(snap, func(sp sysProc) bool { return int(sp.pid) == os.Getpid() }) {
		t.Errorf("buffer %d bytes, %d processes, this one not among them", len(buf), len(snap))
	}
}

// TestScanListsEveryProcess: every process the system lists is in the
// scan, whether or not it can be read, and each says what of it could not
// be. Wine lets every process be read; on Windows, as a user who is not
// an administrator, System, csrss.exe and the services cannot be, and
// this is where they are seen listed (make gpu-kit-windows; run with -v
// to see them).
func TestScanListsEveryProcess(t *testing.T) {
	_, before, err := snapshot(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	ps, err := NewSource(Options{}).Scan(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	_, after, err := snapshot(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	scanned := map[int]Proc{}
	for _, p := range ps {
		scanned[p.PID] = p
	}
	for _, sp := range before {
		// Alive through the scan: in both snapshots, as the same process.
		if sp.pid == 0 || sp.threads == 0 || !slices.ContainsFunc(after, func(a sysProc) bool {
			return a.pid == sp.pid && a.created == sp.created && a.threads > 0
		}) {
			continue
		}
		p, ok := scanned[int(sp.pid)]
		if !ok {
			t.Errorf("PID %d (%s) is not listed", sp.pid, windows.UTF16ToString(sp.name))
			continue
		}
		cmdlineUnread := slices.ContainsFunc(p.Unreadable, func(u string) bool { return strings.HasPrefix(u, "cmdline: ") })
		if len(p.Cmdline) == 0 && !cmdlineUnread {
			t.Errorf("PID %d (%s): no command line, and nothing says why: %+v", p.PID, p.Name, p)
		}
		if len(p.Unreadable) > 0 {
			t.Logf("PID %d (%s, user %q) cannot be read in full: %q", p.PID, p.Name, p.User, p.Unreadable)
		}
	}
}
