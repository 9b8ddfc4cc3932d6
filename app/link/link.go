// Package link is the pipe between GPU Canary's two desktop processes.
//
// The tray process is resident and must cost nothing while idle: it holds
// the engine, the StatusNotifierItem and the notifications, and no GUI
// toolkit. The windows are a second process (`gpucanary ui --link`),
// started when the user opens one and ended when the last one closes,
// because Fyne's driver redraws at 60 Hz for as long as it runs. The tray
// process writes JSON messages to the windows process's stdin (a snapshot
// first, then the engine's state and events, and the windows to show) and
// reads the windows' requests from its stdout. The engine stays single:
// the windows show exactly what the tray knows.
package link

import (
	"time"

	"github.com/gpucanary/gpucanary/app/present"
	"github.com/gpucanary/gpucanary/monitor"
)

// What the tray asks the windows process to show (Request.Show).
const (
	ShowEnvs      = "envs"
	ShowProcesses = "processes"
	ShowGPUs      = "gpus"
	ShowHistory   = "history"
	ShowSettings  = "settings"
	// ShowAdd opens the Environments window with its folder picker.
	ShowAdd = "add"
)

// Request is one thing for the windows process to do.
type Request struct {
	Show string `json:"show,omitempty"`
	// Env, with Show envs, is the environment to select there (a click on
	// a notification about it).
	Env string `json:"env,omitempty"`
	// Repair is an environment whose CUDA torch to reinstall: the windows
	// process shows the plan, asks, and runs it with a progress dialog.
	Repair string `json:"repair,omitempty"`
	// Keep is an environment whose CUDA torch to keep from being
	// replaced (`gpucanary guard`): the windows process says what the
	// guard writes, asks, and sets it.
	Keep string `json:"keep,omitempty"`
	// ReportJob is a job that ended, by its PID: the tray writes what
	// happened to it (`gpucanary report --job`) into a new folder and
	// opens it (a JOB_ENDED notification's "Report"). No window opens.
	ReportJob int `json:"report_job,omitempty"`
}

// Hello is the first message: what a new windows process starts from.
type Hello struct {
	State monitor.State `json:"state"`
	// History is the engine's newest remembered events, newest first, at
	// most HistoryKeep of them.
	History []monitor.Event    `json:"history"`
	Samples present.GPUSamples `json:"samples"`
}

// ToWindows is one message from the tray process; one field is set.
type ToWindows struct {
	Hello *Hello         `json:"hello,omitempty"`
	State *monitor.State `json:"state,omitempty"`
	// EnvsSame, with State, says that the environments are those of the
	// last state sent, which State leaves out: the tray sends its state
	// on every refresh for the GPU and the processes, and the
	// environments, most of it, only when they change.
	EnvsSame bool           `json:"envs_same,omitempty"`
	Event    *monitor.Event `json:"event,omitempty"`
	Request  *Request       `json:"request,omitempty"`
}

// FromWindows is one message from the windows process; one field is set.
type FromWindows struct {
	// Add and Forget are the Environments window's "Add environment…"
	// and "Remove from list".
	Add    string `json:"add,omitempty"`
	Forget string `json:"forget,omitempty"`
	// Copy is text for the clipboard, which the tray process owns: on X11
	// a selection dies with its owner, and the windows process is brief.
	Copy string `json:"copy,omitempty"`
	// Journal is a repair journal that has just recorded the start or
	// the end of a run in the windows process: the engine reads the
	// journals at once (the journal is the record; this only says when).
	Journal string `json:"journal,omitempty"`
	// Idle says the last window closed after Seen requests arrived; the
	// tray ends the process unless it has sent more since.
	Idle *Idle `json:"idle,omitempty"`
	// WatchEnd is the Processes window's "Tell me when it ends": the
	// engine tells of that process's end (JOB_ENDED) whatever its run
	// time.
	WatchEnd *WatchEnd `json:"watch_end,omitempty"`
	// QuietJob is the Processes window's "Not this job": the engine
	// tells nothing more of that process's job until it ends
	// (engine.Monitor.QuietJob).
	QuietJob *WatchEnd `json:"quiet_job,omitempty"`
	// ReportJob is the History window's "Report" on a JOB_ENDED row:
	// the tray writes what happened to that job, as for Request's.
	ReportJob int `json:"report_job,omitempty"`
}

// WatchEnd names one process by its PID and start time, so that the
// request cannot fall on a process that took the PID since (WatchEnd and
// QuietJob both name one so).
type WatchEnd struct {
	PID   int       `json:"pid"`
	Start time.Time `json:"start"`
}

// Idle is the windows process's "nothing is open".
type Idle struct {
	Seen int `json:"seen"`
}
