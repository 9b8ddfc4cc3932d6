// Package jobend tells how a process GPU Canary did not start ended:
// finished or crashed, with the best reason known and the evidence it
// rests on, never a guess said as a fact. It is the one explanation
// behind the engine's JOB_ENDED and `gpucanary wait`.
//
// A process is held (Open) while it runs, so that what its end will
// need is taken while it can be: on Linux the files its stdout and
// stderr write to and its start time (a PID taken again by another
// process is not mistaken for it); on Windows a handle, through which
// the exit code stays readable after the process is gone. Poll says
// when it ended; Explain turns what was gathered (the exit status where
// visible, the kernel's OOM kill count, the tail of its log, how full
// its GPU was) into an End.
//
// Ends are noticed by polling, at the caller's pace (the engine's poll,
// wait's own tick), not by a pidfd: the engine already ticks, one read of
// /proc/PID/stat per held process is all a poll costs, it works on every
// kernel and under seccomp profiles that refuse pidfd_open, and a
// pidfd would not tell the exit status of a process that is not our
// child either. The price is up to one poll interval of delay.
package jobend

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/gpucanary/gpucanary/monitor/human"
)

// How is how a process ended, as scripts match it (`wait --json`,
// `watch --json`, the agent's metric label).
type How string

const (
	// Finished: its exit status was 0, or (Linux, where another
	// process's exit status is hidden) its log ends without an error.
	Finished How = "finished"
	// Crashed: a non-zero exit status, a signal, the kernel's OOM
	// killer, or an error at the end of its log.
	Crashed How = "crashed"
	// Unknown: it ended, and nothing visible says how.
	Unknown How = "unknown"
)

// ErrNoProcess is returned by Open for a PID no process runs under (or
// one another process has taken since the start time given).
var ErrNoProcess = errors.New("no such process")

// Status is a process's exit status where the OS lets it be seen:
// always on Windows (the held handle); on Linux only while the process
// is a zombie its parent has not reaped yet (a launcher that polls its
// workers, as torchrun does), read from /proc/PID/stat.
type Status struct {
	Known bool
	// Code is the exit code (Windows: the whole 32-bit code) when Signal
	// is 0.
	Code int
	// Signal is the signal that killed it (Unix), 0 when it exited.
	Signal int
}

// End is how a process ended and why that is said.
type End struct {
	How How `json:"how"`
	// Reason is what it rests on, in a person's words: "ran out of GPU
	// memory", "exited with status 0", "its log ends without an error".
	Reason string `json:"reason"`
	// Quote is the decisive line of its log (redacted of secrets), when
	// the reason came from there.
	Quote string `json:"quote,omitempty"`
	// Log is the file its output went to, where one was found.
	Log string `json:"log,omitempty"`
	// ExitCode and Signal are its exit status, where it was visible.
	ExitCode *int   `json:"exit_code,omitempty"`
	Signal   string `json:"signal,omitempty"`
}

// Evidence is what was gathered about one process's end.
type Evidence struct {
	Status Status
	// OOMKilled: the kernel's OOM kill count (/proc/vmstat oom_kill)
	// rose between the last poll that saw the process alive and the one
	// that saw it gone.
	OOMKilled bool
	// Logs are the files its output went to (Held.Logs).
	Logs []Log
	// MemFraction is the highest used/total of the GPUs it held memory
	// on, at the last poll before its end; 0 when unknown.
	MemFraction float64
}

// memFull is how full a GPU's memory must have been just before a job
// ended to say it probably ran out of it. PyTorch's caching allocator
// keeps freed blocks, so a healthy run can sit there too: this is only
// ever said as "probably", and never makes a job crashed by itself.
const memFull = 0.97

// Explain tells how a process ended from what was gathered: its exit
// status where visible, then in order the kernel's OOM killer, the tail
// of its log, and how full its GPU's memory was. It reads the logs
// (bounded, read-only).
func Explain(ev Evidence) End {
	var e End
	if ev.Status.Known {
		if ev.Status.Signal != 0 {
			e.Signal = SignalName(ev.Status.Signal)
		} else {
			c := ev.Status.Code
			e.ExitCode = &c
		}
	}
	lv, log := readLogs(ev.Logs)
	e.Log = log
	switch {
	case ev.Status.Known && ev.Status.Signal == 0 && ev.Status.Code == 0:
		e.How, e.Reason = Finished, "exited with status 0"
	case ev.OOMKilled && (!ev.Status.Known || ev.Status.Signal == sigKill):
		e.How = Crashed
		e.Reason = "killed by the Linux out-of-memory killer (host RAM ran out; the kernel's oom_kill count rose as it ended)"
		if !ev.Status.Known {
			e.Reason = "probably " + e.Reason
		}
	case lv.err != "":
		e.How, e.Reason, e.Quote = Crashed, lv.err, lv.quote
	case ev.Status.Known:
		e.How, e.Reason = Crashed, statusWords(ev.Status)
		if ev.MemFraction >= memFull {
			e.Reason += fmt.Sprintf("; its GPU's memory was %.0f%% full just before, so it probably ran out of it", 100*ev.MemFraction)
		}
	case lv.clean:
		e.How, e.Reason = Finished, "its log ends without an error ("+statusHidden+")"
	case ev.MemFraction >= memFull:
		e.How = Unknown
		e.Reason = fmt.Sprintf("ended with its GPU's memory %.0f%% full just before: it probably ran out of GPU memory (%s)", 100*ev.MemFraction, statusHidden)
	default:
		e.How, e.Reason = Unknown, "ended ("+statusHidden+")"
	}
	return e
}

// statusWords says a known non-zero exit status.
func statusWords(s Status) string {
	if s.Signal != 0 {
		return "killed by " + SignalName(s.Signal)
	}
	if w := exitCodeWords(s.Code); w != "" {
		return w
	}
	return "exited with status " + strconv.Itoa(s.Code)
}

// sigKill is SIGKILL's number, which the OOM killer sends, on every
// platform that has signals.
const sigKill = 9

// SignalName is "SIGKILL" for 9; the number for a signal not named here.
func SignalName(sig int) string {
	names := map[int]string{1: "SIGHUP", 2: "SIGINT", 3: "SIGQUIT", 4: "SIGILL", 6: "SIGABRT", 7: "SIGBUS", 8: "SIGFPE",
		9: "SIGKILL", 11: "SIGSEGV", 13: "SIGPIPE", 15: "SIGTERM"}
	if n, ok := names[sig]; ok {
		return n
	}
	return "signal " + strconv.Itoa(sig)
}

// Rank orders ends by what they tell: a crash with its reason first,
// then a finish, then an unknown end. Of a job's processes (DDP workers,
// DataLoader workers), the end that tells most is the job's.
func (e End) Rank() int {
	switch e.How {
	case Crashed:
		r := 3
		if e.Quote != "" {
			r = 4
		}
		return r
	case Finished:
		return 2
	}
	return 1
}

// RunTime is how long a process that started at start ran until end,
// whole seconds; 0 when the start is not known.
func RunTime(start, end time.Time) time.Duration {
	if start.IsZero() || end.Before(start) {
		return 0
	}
	return end.Sub(start).Truncate(time.Second)
}

// Say is the end in a sentence: "python train.py (PID 4242) crashed
// after 6m02s: ran out of GPU memory: “torch.OutOfMemoryError: …” (log
// /work/train.log)." command may be "" (not known).
func Say(command string, pid int, ran time.Duration, e End) string {
	who := fmt.Sprintf("PID %d", pid)
	if command != "" {
		who = fmt.Sprintf("%s (PID %d)", command, pid)
	}
	verb := string(e.How)
	if e.How == Unknown {
		verb = "ended"
	}
	after := ""
	if ran > 0 {
		after = " after " + human.Duration(ran)
	}
	s := fmt.Sprintf("%s %s%s: %s", who, verb, after, e.Reason)
	if e.How == Unknown && strings.HasPrefix(e.Reason, "ended ") {
		s = fmt.Sprintf("%s ended%s %s", who, after, strings.TrimPrefix(e.Reason, "ended "))
	}
	if e.Quote != "" {
		s += ": “" + e.Quote + "”"
	}
	if e.Log != "" {
		s += " (log " + e.Log + ")"
	}
	return s + "."
}
