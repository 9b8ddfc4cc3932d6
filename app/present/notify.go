package present

import (
	"os"
	"strconv"
	"strings"

	"github.com/gpucanary/gpucanary/monitor"
	"github.com/gpucanary/gpucanary/monitor/finding"
	"github.com/gpucanary/gpucanary/monitor/human"
	"github.com/gpucanary/gpucanary/monitor/jobend"
	"github.com/gpucanary/gpucanary/output/words"
)

// Level is what a notification says, which picks its icon: something is
// broken, something may be, something happened, or something worked.
type Level string

// Notification levels.
const (
	LevelError   Level = "error"
	LevelWarning Level = "warning"
	LevelInfo    Level = "information"
	LevelSuccess Level = "success"
)

// Note is one desktop notification: its title, its body and its level.
type Note struct {
	Title, Body string
	Level       Level
	// Env is the environment it is about, if any: a click on the
	// notification, or its "Show" action, opens the Environments window
	// on it.
	Env string
	// Repair says the notification carries the one-click repair of Env,
	// its "Repair" action: the windows ask, then reinstall a CUDA torch.
	Repair bool
	// Job is the PID of the job a JOB_ENDED notification is about: its
	// "Report" action writes what happened to it (`gpucanary report
	// --job PID`) and opens the folder.
	Job int
}

// The notifications' action buttons (freedesktop actions, toast buttons).
const (
	ActionShow   = "Show"
	ActionRepair = "Repair"
	ActionReport = "Report"
)

// repairInMenu is what a notification with a repair says on a desktop
// whose notifications have no buttons (NoActions).
const repairInMenu = "To repair it, choose its Reinstall… entry under the environment in the tray menu."

// NoActions is n for a notification server that shows no action buttons:
// the repair it carries is pointed at in the tray menu instead.
func (n Note) NoActions() Note {
	if n.Repair {
		n.Body += " " + repairInMenu
	}
	if n.Job != 0 {
		n.Body += " " + reportOnCommandLine(n.Job)
	}
	return n
}

// reportOnCommandLine is what a notification about a job that ended says
// on a desktop whose notifications have no buttons.
func reportOnCommandLine(pid int) string {
	return "To see what happened to it, run: gpucanary report --job " + strconv.Itoa(pid)
}

// Notification is the desktop notification for e: the environment (or
// the process), what happened in a person's words (the engine's message,
// as plain text: no Markdown, long paths shortened from the left), and the
// fix. reinstall says whether the repair can run for the environment; then
// the notification carries it (Repair, its "Repair" action) rather than a
// long command.
func Notification(e monitor.Event, reinstall bool) Note {
	var n Note
	where := titlePath(e.Env)
	switch e.Kind {
	case monitor.KindCUDAWheelReplaced:
		n = Note{Title: "torch lost its CUDA build in " + where, Level: LevelError}
	case monitor.KindTorchChanged:
		n = Note{Title: "torch changed in " + where, Level: LevelInfo}
	case monitor.KindTorchRemoved:
		n = Note{Title: "torch was removed from " + where, Level: LevelWarning}
	case monitor.KindJobOnCPU:
		n = Note{Title: "A GPU job is running on the CPU", Level: LevelError}
		if where != "" {
			n.Title += " (" + where + ")"
		}
	case monitor.KindJobOnCPUCleared:
		n = Note{Title: "The job is no longer stuck on the CPU", Level: LevelSuccess}
	case monitor.KindFindingRaised:
		if jobStall(e.Finding) {
			// About a job, not its environment: titled as JOB_ON_CPU is.
			n = Note{Title: jobStallTitles[e.Finding.Code], Level: LevelWarning}
			if where != "" {
				n.Title += " (" + where + ")"
			}
			break
		}
		n = Note{Title: "Problem in " + where, Level: LevelWarning}
		if e.Env == "" {
			n.Title = "GPU Canary"
			if gpu := gpuOf(e.Finding); gpu != "" {
				n.Title = gpu
			}
		}
		if e.Finding != nil {
			n.Title += ": " + words.CodeTitle(e.Finding.Code)
			if l, ok := severityLevel[e.Finding.Severity]; ok {
				n.Level = l
			}
		}
	case monitor.KindFindingCleared:
		n = Note{Title: "Resolved in " + where, Level: LevelSuccess}
		if e.Env == "" {
			n.Title = "Resolved"
			if gpu := gpuOf(e.Finding); gpu != "" {
				n.Title += ": " + gpu
			}
		}
	case monitor.KindGPUStateChanged:
		n = Note{Title: "GPU state changed", Level: LevelInfo}
	case monitor.KindJobEnded:
		n = jobEndedNote(e)
	default:
		n = Note{Title: "GPU Canary", Level: LevelInfo}
	}
	n.Env = e.Env
	if e.Kind == monitor.KindJobEnded && e.Job != nil {
		n.Job = e.Job.PID
	}
	n.Body = words.Unmark(TildeHome(e.Message))
	switch {
	case e.Kind == monitor.KindJobOnCPUCleared || e.Kind == monitor.KindFindingCleared || jobStall(e.Finding):
		// A stalled job's environment is not what is wrong: no repair.
	case reinstall && e.Env != "" && e.Kind == monitor.KindJobOnCPU:
		n.Repair = true
		n.Body += " Repair the environment, then restart the job."
	case reinstall && e.Env != "":
		n.Repair = true
	case e.Fix != "":
		n.Body += " Fix: " + TildeHome(e.Fix)
	}
	// The message and the fix name paths and commands: a control or
	// bidi character in one shows as an escape, as in the terminal.
	n.Body = human.Visible(n.Body)
	return n
}

// jobStallTitles are the notification titles of a job's stall.
var jobStallTitles = map[string]string{
	finding.CodeJobStalled:  "A GPU job stalled",
	finding.CodeJobSpinning: "A GPU job spins without progress",
}

// jobStall is true for a finding about a stalled or spinning job.
func jobStall(f *finding.Finding) bool {
	if f == nil {
		return false
	}
	_, ok := jobStallTitles[f.Code]
	return ok
}

// gpuOf is "GPU 0" for a finding about one GPU (its Env "gpu:0": the GPU
// health codes, GPU_MEMORY_ORPHANED), "" for any other.
func gpuOf(f *finding.Finding) string {
	if f == nil {
		return ""
	}
	if idx, ok := strings.CutPrefix(f.Env, "gpu:"); ok {
		return "GPU " + idx
	}
	return ""
}

// severityLevel is the notification level of a finding's severity.
var severityLevel = map[finding.Severity]Level{
	finding.SeverityError: LevelError, finding.SeverityWarning: LevelWarning, finding.SeverityInfo: LevelInfo,
}

// The tray's own notifications, about what the user asked of it.

// ReportExported says where the evidence bundle was written.
func ReportExported(dir string) Note {
	return Note{Title: "Report exported", Body: human.Visible("The evidence bundle was written to " + ShortPath(dir) + "."), Level: LevelSuccess}
}

// ReportNotExported says why the evidence bundle was not written.
func ReportNotExported(err error) Note {
	return Note{Title: "The report was not exported", Body: human.Visible(err.Error()), Level: LevelError}
}

// WindowNotOpened says why a window asked for from the tray did not open.
func WindowNotOpened(err error) Note {
	return Note{Title: "GPU Canary could not open the window", Body: human.Visible(err.Error()), Level: LevelError}
}

// CopyFailed shows text that could not be put on the clipboard, so it
// can still be read.
func CopyFailed(text string) Note {
	return Note{Title: "Could not copy to the clipboard", Body: human.Visible(text), Level: LevelWarning}
}

// SettingsFileError says the settings file cannot be read and that the
// settings in use stay.
func SettingsFileError(err error) Note {
	return Note{Title: "The settings file has an error", Body: human.Visible(err.Error() + ". The settings in use stay until it is mended."), Level: LevelWarning}
}

// SettingsFileAtStart is told when the settings file GPU Canary started
// with has an error (msg says which file and what): the defaults are in
// use until it is mended.
func SettingsFileAtStart(msg string) Note {
	return Note{Title: "The settings file has an error", Body: human.Visible(msg + ". GPU Canary runs with the default settings until it is mended."), Level: LevelWarning}
}

// StartFileProblem is told for another file GPU Canary was started with
// and cannot use (a GPU scenario file); problem names it and says why.
func StartFileProblem(problem string) Note {
	return Note{Title: "GPU Canary was started with a file it cannot use", Body: human.Visible(problem + "."), Level: LevelError}
}

// titlePath is how a notification's title names the environment at p:
// as ShortPath, with control and bidi characters shown as escapes
// (human.Visible: a newline or U+202E in a folder's name would break or
// reorder the title). The title is plain text by the notification
// specification, which the body's escaping cannot be applied to (a
// server that follows it would show &lt;), yet some servers parse
// markup in it: a path holding <, > or & is not put in the title at
// all, and the body, escaped for the server, names it.
func titlePath(p string) string {
	s := human.Visible(ShortPath(p))
	if strings.ContainsAny(s, "<>&") {
		return "an environment"
	}
	return s
}

// ShortPath writes a path under the home directory as ~/… (words.Short).
func ShortPath(p string) string { return words.Short(HomeDir(), p) }

// TildeHome writes every mention of the home directory in s as ~
// (words.TildeIn).
func TildeHome(s string) string { return words.TildeIn(HomeDir(), s) }

// HomeDir is this user's home folder, which the views write as ~ ("" when
// there is none).
func HomeDir() string {
	h, _ := os.UserHomeDir()
	return h
}

// jobEndedNote is a JOB_ENDED notification's title and level: finished
// is good news, crashed bad, and an end nothing tells is only news.
func jobEndedNote(e monitor.Event) Note {
	n := Note{Title: "A GPU job ended", Level: LevelInfo}
	if e.Job == nil {
		return n
	}
	switch e.Job.How {
	case jobend.Finished:
		n = Note{Title: "A GPU job finished", Level: LevelSuccess}
	case jobend.Crashed:
		n = Note{Title: "A GPU job crashed", Level: LevelError}
	}
	if where := titlePath(e.Env); where != "" {
		n.Title += " (" + where + ")"
	}
	return n
}
