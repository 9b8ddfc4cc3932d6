package procs

import (
	"errors"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"
)

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
	Cmdline []string `json:"cmdline"`
	// Exe is the program's file as the kernel resolved it (symlinks
	// followed: a venv's python is usually the base interpreter's), and
	// Cwd the working directory; "" when they cannot be read. Both are
	// read when the process is first seen.
	Exe string `json:"exe,omitempty"`
	Cwd string `json:"cwd,omitempty"`
	// StartTime is the zero time when it is not known (the system
	// snapshot gives none for some of Windows' own pseudo-processes):
	// never a guess.
	StartTime time.Time `json:"start_time"`
	// CPUPercent is over the interval since the previous scan (100 = one
	// core); 0 on the first scan that sees the process.
	CPUPercent float64 `json:"cpu_percent"`
	// CPUTimeSeconds is always known: /proc/PID/stat on Linux, the system
	// snapshot on Windows, whatever access the process allows.
	CPUTimeSeconds float64 `json:"cpu_time_seconds"`
	// State is the kernel's scheduling state at the scan, as
	// /proc/PID/stat gives it: "R" running, "S" sleeping, "D" waiting
	// on I/O (uninterruptible). "" where it is not read (Windows): a
	// job whose GPU went quiet is told by it (JOB_STALLED).
	State    string `json:"state,omitempty"`
	RSSBytes uint64 `json:"rss_bytes"`
	// GPULibs are the ML runtime libraries mapped, by base name, sorted.
	GPULibs []string `json:"gpu_libs"`
	// LibPaths are the full paths of GPULibs.
	LibPaths []string `json:"lib_paths,omitempty"`
	// EnvPath is the Python environment the process runs from, and EnvVia
	// how that was found: VIRTUAL_ENV, CONDA_PREFIX, interpreter, libraries.
	EnvPath string `json:"env,omitempty"`
	EnvVia  string `json:"env_via,omitempty"`
	// CUDAVisibleDevices is CUDA_VISIBLE_DEVICES when the process was
	// first seen: on Linux as it was started with it (the kernel keeps the
	// environment of exec, not later changes from inside), on Windows as
	// its environment block held it then (changes from inside included);
	// nil when unset or unreadable. Empty hides every GPU.
	CUDAVisibleDevices *string `json:"cuda_visible_devices,omitempty"`
	// Container is the container and pod the process runs in, from its
	// cgroup (ParseCgroup); null for a process on the host.
	Container *Container `json:"container"`
	// DXG is true when the process has WSL2's GPU device, /dev/dxg, open
	// or mapped: under WSL2 NVML lists no processes, so that is what says
	// a process uses the GPU.
	DXG bool `json:"dxg,omitempty"`
	// Unreadable says what could not be read ("maps: permission denied"
	// for another user's process on Linux; "modules: permission denied"
	// for a protected one on Windows), so that such a process is listed
	// as what it is, never dropped.
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

// Program is the program's path as the process was started with it,
// made absolute against its working directory: "env/bin/python" run in
// /work is /work/env/bin/python, "./python" run in ENV/bin is
// ENV/bin/python. "" when it cannot be known: no command line, or a bare
// name found on PATH ("python"), or a relative one with no working
// directory read.
func (p Proc) Program() string {
	if len(p.Cmdline) == 0 || p.Cmdline[0] == "" {
		return ""
	}
	arg := p.Cmdline[0]
	switch {
	case filepath.IsAbs(arg):
		return filepath.Clean(arg)
	case !strings.ContainsAny(arg, `/`+string(filepath.Separator)) || p.Cwd == "":
		return ""
	}
	return filepath.Join(p.Cwd, arg)
}

// Inside reports whether the process runs from the environment at env:
// attributed to it, or its program (as started, resolved against its
// working directory) or its executable file lies inside it.
func (p Proc) Inside(env string) bool {
	if env == "" {
		return false
	}
	if p.EnvPath != "" && foldPath(p.EnvPath) == foldPath(env) {
		return true
	}
	for _, path := range []string{p.Program(), p.Exe} {
		if path != "" && pathWithin(path, env) {
			return true
		}
	}
	return false
}

// Workload reports whether the process has an ML runtime mapped.
func (p *Proc) Workload() bool { return len(p.GPULibs) > 0 }

func (p *Proc) noteUnreadable(what string, err error) {
	msg := what + ": " + errText(err)
	if !slices.Contains(p.Unreadable, msg) {
		p.Unreadable = append(p.Unreadable, msg)
	}
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
