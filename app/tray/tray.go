// Package tray is GPU Canary's resident process on the desktop: the tray
// icon as a status light, its live menu, and the desktop notifications,
// with the engine running beside it. It uses no GUI toolkit (the icon and
// menu go over DBus on Linux, through fyne.io/systray), so it costs next
// to nothing while idle; the windows are a second process it starts on
// demand (package app, through package link). It only renders what the
// engine decides; no rule lives here.
package tray

import (
	"context"
	"fmt"
	"log"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"time"

	"fyne.io/systray"

	"github.com/gpucanary/gpucanary/app/autostart"
	"github.com/gpucanary/gpucanary/app/link"
	"github.com/gpucanary/gpucanary/app/present"
	"github.com/gpucanary/gpucanary/app/shortcut"
	"github.com/gpucanary/gpucanary/assets"
	"github.com/gpucanary/gpucanary/monitor"
	"github.com/gpucanary/gpucanary/monitor/config"
)

// Windows is the windows process as the tray sees it (*link.Windows).
type Windows interface {
	Open(r link.Request) error
	Send(m link.ToWindows)
	Running() bool
	Close()
}

// Deps is what the tray needs. Desktop side effects are functions here; a
// nil one uses the platform's.
type Deps struct {
	// Monitor is the engine (an *engine.Monitor, whose Run the caller
	// runs), as the tray uses it.
	Monitor Engine
	// Events is the engine's subscription, taken by the caller before it
	// started the engine, so that the first read's findings are told
	// whichever comes first, the engine's first read or the tray's loop
	// (which waits for the tray host). Nil: the loop subscribes when it
	// starts, and is told only what happens from then on.
	Events <-chan monitor.Event
	Log    *slog.Logger
	// WindowsCommand builds the command that starts the windows process
	// (`gpucanary ui --link`); Windows replaces the whole process in tests.
	// CanRepair says whether it can reinstall a CUDA torch (then the menu
	// offers "Reinstall CUDA torch…").
	WindowsCommand func() *exec.Cmd
	Windows        Windows
	CanRepair      bool
	// Export writes the evidence bundle into dir; nil hides "Export report…".
	Export func(ctx context.Context, dir string) error
	// ExportJob writes what happened to the job pid into dir (`gpucanary
	// report --job`), for a JOB_ENDED notification's or History row's
	// "Report"; nil leaves those asks unanswered but logged.
	ExportJob func(ctx context.Context, dir string, pid int) error
	// ConfigPath is the settings file, watched: a change made in
	// Settings… or by hand applies at once through Reconfigure.
	ConfigPath  string
	Reconfigure func(config.Config)
	// SettingsError is what is wrong with the settings file at start
	// ("" when nothing): it is told in a notification, and the menu says
	// so until the file is mended.
	SettingsError string
	// Problems are what else is wrong with the files GPU Canary was
	// started with (a GPU scenario file that is missing or malformed):
	// each is told in a notification at start.
	Problems []string

	// Raise are windows to open that come from outside the menu: a second
	// start of GPU Canary asking this one for its Environments window
	// (package instance). nil: none. Clicks on notifications come from the
	// platform (notificationClicks).
	Raise <-chan link.Request
	// QuitAsked receives when another process asks this tray to quit
	// (package instance: `gpucanary quit`, which the Windows installer
	// runs before it replaces the tray's files): the tray ends as its
	// Quit entry ends it. nil: none.
	QuitAsked <-chan struct{}

	Host Host
	// Notify shows a desktop notification; its level picks the icon, and
	// its Env is where a click on it leads (Windows).
	Notify     func(n present.Note) error
	Clipboard  func(text string) error
	OpenFolder func(path string) error
	// HostMissing reports that no tray host is on the desktop.
	HostMissing func() bool
	// Say tells the person at the terminal that started the tray one
	// line: where GPU Canary went, or why no icon will appear (nil:
	// nothing is said).
	Say func(line string)
	// RepointAutostart points an enabled start at login at this program
	// where it is now (autostart.Repoint).
	RepointAutostart func() (bool, error)
	// StampShortcut gives the MSI's Start-menu shortcut the toasts'
	// AppUserModelID (shortcut.StampStartMenu; nothing off Windows).
	StampShortcut func() (bool, error)
}

// What the tray tells the terminal that started it.
const (
	InTray     = "GPU Canary is in your system tray (Ctrl-C quits)."
	NoTrayHint = "No system tray on this desktop (GNOME needs the AppIndicator extension, gnome-shell-extension-appindicator): the Environments window opens instead, and its Go menu reaches every other window."
)

// say tells the terminal line, when there is one to tell.
func (t *tray) say(line string) {
	if t.d.Say != nil {
		t.d.Say(line)
	}
}

// Menu labels of the fixed entries (the end-to-end test clicks them).
const (
	LabelProcesses = "GPU processes…"
	LabelEnvs      = "Environments…"
	LabelGPUs      = "GPUs…"
	LabelHistory   = "Event history…"
	LabelReport    = "Export report…"
	LabelPause     = "Pause notifications for 1 hour"
	LabelResume    = "Resume notifications"
	LabelSettings  = "Settings…"
	LabelQuit      = "Quit"
	LabelAddFirst  = "No environments found: Add environment…"
	// LabelKeep, in an environment's submenu, sets `gpucanary guard` on
	// it through the windows process; LabelKept stands there, disabled,
	// once it is guarded.
	LabelKeep = "Keep this CUDA build…"
	LabelKept = "CUDA build kept (gpucanary unguard lifts it)"
	// LabelJobs heads the running GPU jobs; each job's submenu asks to be
	// told when it ends, or quiets it until it ends, and says so once
	// done.
	LabelJobs              = "Running GPU jobs"
	LabelTellWhenEnds      = "Tell me when it ends"
	LabelTellWhenEndsAsked = "You will be told when it ends"
	LabelQuietJob          = "Not this job (quiet until it ends)"
	LabelJobQuiet          = "Quiet until it ends"
	// LabelSettingsError stands under the status while the settings file
	// has an error; it opens Settings….
	LabelSettingsError = "⚠ The settings file has an error: Settings…"
)

// Title is the tray item's name, which a tray host shows in its list of
// items (the StatusNotifierItem's Title).
const Title = "GPU Canary"

// refreshEvery is how often the tray re-reads the engine's state (which
// the engine keeps current; reading it is a copy).
const refreshEvery = 2 * time.Second

// trayIcons maps monitor's overall states to their icons.
var trayIcons = map[monitor.Overall][]byte{
	monitor.OverallHealthy:   assets.TrayHealthy,
	monitor.OverallWarning:   assets.TrayWarning,
	monitor.OverallError:     assets.TrayError,
	monitor.OverallNoDriver:  assets.TrayNoDriver,
	monitor.OverallSimulated: assets.TraySimulated,
}

// Run shows the tray and blocks until Quit or ctx ends. It must be called
// from the main goroutine (the Windows notification area's rule).
func Run(ctx context.Context, d Deps) error {
	t := newTray(d)
	// The tray library writes its errors with the standard logger
	// ("systray error: failed to register: ..." on a desktop with no tray
	// host): they go to the log, and a person is told in plain words.
	log.SetFlags(0)
	log.SetOutput(libraryLog{t.d.Log})
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan struct{})
	systray.Run(func() {
		go func() {
			defer close(done)
			waitTrayUp()
			t.loop(ctx)
			systray.Quit()
		}()
	}, nil)
	cancel()
	<-done
	return nil
}

// tray is the resident tray's state, owned by the loop goroutine.
type tray struct {
	d        Deps
	now      func() time.Time
	actions  chan func()             // menu clicks and link requests, run by the loop
	copies   sideQueue[string]       // texts for the clipboard, for copyNow
	notes    sideQueue[present.Note] // notifications, for notifyNow
	quit     chan struct{}
	quitOnce sync.Once
	// samples feed the GPUs window's graphs; Hello reads them from the
	// goroutine that starts the windows process.
	samplesMu sync.Mutex
	samples   present.GPUSamples
	// helloSince is set when a windows process said hello since the last
	// state sent: the next one carries the environments whatever they
	// are (under samplesMu, as Hello runs off the loop).
	helloSince bool
	// sentEnvs are the environments last sent to the windows process.
	sentEnvs *[]monitor.EnvReport

	// clicks are clicks on the platform's notifications and their
	// buttons: the environment to show, and its repair.
	clicks <-chan link.Request

	shownIcon monitor.Overall
	shownTip  string
	shownMenu *present.TrayModel
	// settingsErr is what is wrong with the settings file now ("" when
	// nothing), for the menu.
	settingsErr string
}

func newTray(d Deps) *tray {
	if d.Log == nil {
		d.Log = slog.New(slog.DiscardHandler)
	}
	if d.Host == nil {
		d.Host = newSystrayHost()
	}
	// The platform's notifications are listened to for their actions
	// (a click, Show, Repair); notifications of another kind (a test's)
	// have none, and nothing reaches for the session bus for them.
	listen := d.Notify == nil
	if d.Notify == nil {
		d.Notify = showNote
	}
	if d.Clipboard == nil {
		d.Clipboard = copyText
	}
	if d.OpenFolder == nil {
		d.OpenFolder = openFolder
	}
	if d.HostMissing == nil {
		d.HostMissing = trayHostMissing
	}
	if d.RepointAutostart == nil {
		d.RepointAutostart = autostart.Repoint
	}
	if d.StampShortcut == nil {
		d.StampShortcut = func() (bool, error) { return shortcut.StampStartMenu(toastAppID) }
	}
	t := &tray{d: d, now: time.Now, actions: make(chan func(), 16), copies: make(sideQueue[string], 8), notes: make(sideQueue[present.Note], 16), quit: make(chan struct{}),
		settingsErr: d.SettingsError}
	if listen {
		t.clicks = notificationClicks(d.Log)
	}
	if t.d.Windows == nil && d.WindowsCommand != nil {
		t.d.Windows = &link.Windows{Command: d.WindowsCommand, Hello: t.Hello, Handle: t.FromWindows, Log: d.Log.With("component", "link")}
	}
	return t
}

// do runs f on the loop goroutine; it is how clicks and the windows
// process's requests reach the tray's state.
func (t *tray) do(f func()) {
	select {
	case t.actions <- f:
	case <-t.quit:
	}
}

// loop renders, notifies and answers clicks until Quit or ctx ends.
func (t *tray) loop(ctx context.Context) {
	d := t.d
	events := d.Events
	if events == nil {
		var unsubscribe func()
		events, unsubscribe = d.Monitor.Subscribe()
		defer unsubscribe()
	}
	go t.copies.serve(t.quit, t.copyNow)
	go t.notes.serve(t.quit, t.notifyNow)
	settings := t.watchSettings(ctx)
	d.Host.SetTitle(Title)
	d.Host.SetTooltip(Title)
	t.render()
	t.tellStartProblems()
	// Start at login follows the program when it moved (Windows).
	if moved, err := d.RepointAutostart(); err != nil {
		d.Log.Warn("start at login could not be pointed at this program", "err", err)
	} else if moved {
		d.Log.Info("start at login now starts this program, where it is now")
	}
	// Toasts belong to the installed app when its shortcut carries their
	// AppUserModelID; the MSI cannot write it (wixl has no shortcut
	// properties), so the first start does.
	if stamped, err := d.StampShortcut(); err != nil {
		d.Log.Warn("the Start-menu shortcut could not be given GPU Canary's AppUserModelID", "err", err)
	} else if stamped {
		d.Log.Info("the Start-menu shortcut now carries GPU Canary's AppUserModelID", "id", toastAppID)
	}
	if d.HostMissing() {
		// No tray host on this desktop (a StatusNotifierWatcher is needed):
		// say so, and in a window, rather than run invisibly.
		d.Log.Debug("no system tray host (org.kde.StatusNotifierWatcher) on the session bus; showing the Environments window")
		t.say(NoTrayHint)
		t.open(link.Request{Show: link.ShowEnvs})
	} else {
		t.say(InTray)
	}
	tick := time.NewTicker(refreshEvery)
	defer tick.Stop()
	defer func() {
		if d.Windows != nil {
			d.Windows.Close()
		}
	}()
	// Once the loop is gone, do refuses work rather than wait for it (a
	// click or a request from the windows process arriving during Quit).
	defer t.stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.quit:
			return
		case ev, ok := <-events:
			if !ok {
				if ctx.Err() == nil {
					d.Log.Error("the engine stopped; the tray ends with it")
				}
				return
			}
			t.onEvent(ev)
		case f := <-t.actions:
			f()
		case r := <-d.Raise:
			t.open(r)
		case <-d.QuitAsked:
			d.Log.Info("asked to quit by another GPU Canary process (gpucanary quit, the installer)")
			t.stop()
		case r := <-t.clicks:
			t.open(r)
		case cfg, ok := <-settings:
			if !ok {
				settings = nil
				continue
			}
			t.settingsErr = "" // valid again
			d.Reconfigure(cfg)
			t.render()
		case <-tick.C:
			t.render()
		}
	}
}

// render shows the engine's state in the tray, samples the GPUs for the
// graphs, and keeps an open windows process current.
func (t *tray) render() {
	s := t.d.Monitor.State()
	now := t.now()
	t.samplesMu.Lock()
	t.samples.Add(s, now, refreshEvery/2)
	t.samplesMu.Unlock()
	m := present.Model(s, now, t.paused(now), func(env string) bool {
		return !t.d.Monitor.Snoozed(env, now).IsZero()
	})
	m.SettingsError = t.settingsErr
	if m.Icon != t.shownIcon {
		t.d.Host.SetIcon(trayIcons[m.Icon])
		t.shownIcon = m.Icon
	}
	if m.Tooltip != t.shownTip {
		t.d.Host.SetTooltip(m.Tooltip)
		t.shownTip = m.Tooltip
	}
	// Rebuild the menu only when it changed: a rebuild gives every item a
	// new id, which would break a menu the user has open. The tooltip is
	// no part of the menu (its jobs' run times change by the minute).
	m.Tooltip = ""
	if t.shownMenu == nil || !reflect.DeepEqual(*t.shownMenu, m) {
		t.d.Host.SetMenu(t.menu(m))
		t.shownMenu = &m
	}
	if t.d.Windows != nil && t.d.Windows.Running() {
		t.d.Windows.Send(t.stateMessage(s))
	}
}

// stateMessage is the refresh the windows process gets: the whole state
// when its environments changed since the last one sent (or a new
// process said hello), else the state without them (link.ToWindows'
// EnvsSame). The GPU and processes, which the charts follow, always go.
func (t *tray) stateMessage(s monitor.State) link.ToWindows {
	t.samplesMu.Lock()
	fresh := t.helloSince
	t.helloSince = false
	t.samplesMu.Unlock()
	if !fresh && t.sentEnvs != nil && reflect.DeepEqual(*t.sentEnvs, s.Envs) {
		s.Envs = nil
		return link.ToWindows{State: &s, EnvsSame: true}
	}
	t.sentEnvs = &s.Envs
	return link.ToWindows{State: &s}
}

// Hello is what a new windows process starts from. It is called by
// link.Windows on whatever goroutine opens a window (the loop's, for a
// click), so it takes no turn on the loop.
func (t *tray) Hello() link.Hello {
	t.samplesMu.Lock()
	samples := t.samples.Clone()
	t.helloSince = true
	t.samplesMu.Unlock()
	return link.Hello{State: t.d.Monitor.State(), History: t.d.Monitor.History(link.HistoryKeep), Samples: samples}
}

// FromWindows handles the windows process's requests. It is called on
// the goroutine that reads them and hands them to the loop, so a slow
// request holds neither the reader nor the windows process's end.
func (t *tray) FromWindows(m link.FromWindows) {
	t.do(func() {
		var err error
		switch {
		case m.Add != "":
			err = t.d.Monitor.Add(m.Add)
		case m.Forget != "":
			err = t.d.Monitor.Forget(m.Forget)
		case m.Copy != "":
			t.copy(m.Copy)
		case m.Journal != "":
			err = t.d.Monitor.ReadJournals()
		case m.WatchEnd != nil:
			err = t.d.Monitor.WatchEnd(m.WatchEnd.PID, m.WatchEnd.Start)
		case m.QuietJob != nil:
			err = t.d.Monitor.QuietJob(m.QuietJob.PID, m.QuietJob.Start)
		case m.ReportJob != 0:
			t.exportJobReport(m.ReportJob)
		}
		if err != nil {
			t.d.Log.Error("a request from the windows process", "add", m.Add, "forget", m.Forget, "journal", m.Journal, "err", err)
		}
	})
}

// onEvent notifies what the engine says to notify, passes the event to
// an open windows process, then re-renders.
func (t *tray) onEvent(e monitor.Event) {
	t.notifyEvent(e)
	if t.d.Windows != nil && t.d.Windows.Running() {
		t.d.Windows.Send(link.ToWindows{Event: &e})
	}
	t.render()
}

// paused reports whether notifications are paused: the policy holds the
// one pause, which the menu sets.
func (t *tray) paused(now time.Time) bool { return !t.d.Monitor.Paused(now).IsZero() }

// notifyEvent turns an event the engine says to notify (Event.Notify)
// into a desktop notification, unless notifications are paused (an event
// decided before the pause may still be on its way).
func (t *tray) notifyEvent(e monitor.Event) {
	if !e.Notify || t.paused(t.now()) {
		return
	}
	n := present.Notification(e, t.canReinstall(e.Env))
	t.tell(n)
}

// tell shows a notification. It is sent by notifyNow, off the loop, since
// the notification service is another process that may be slow.
func (t *tray) tell(n present.Note) {
	if !t.notes.offer(n) { // the service has not answered for many
		t.d.Log.Warn("desktop notification dropped: the notification service is not answering", "title", n.Title)
	}
}

// notifyNow sends one notification; a failure is logged, not fatal (a
// desktop without a notification service still has the tray and the
// windows).
func (t *tray) notifyNow(n present.Note) {
	if err := t.d.Notify(n); err != nil {
		t.d.Log.Warn("desktop notification not shown", "title", n.Title, "err", err)
	}
}

// canReinstall reports whether the menu offers "Reinstall CUDA torch…"
// for env now, so a notification may carry the repair too.
func (t *tray) canReinstall(env string) bool {
	if !t.d.CanRepair || t.d.Windows == nil || env == "" {
		return false
	}
	for _, e := range t.d.Monitor.State().Envs {
		if e.Path == env {
			return present.NeedsReinstall(e)
		}
	}
	return false
}

// open asks the windows process for a window; failing to start it is
// told, since the user clicked for something.
func (t *tray) open(r link.Request) {
	if r.ReportJob != 0 {
		t.exportJobReport(r.ReportJob)
		return
	}
	if t.d.Windows == nil {
		return
	}
	if err := t.d.Windows.Open(r); err != nil {
		t.d.Log.Error("opening a window", "err", err)
		t.tell(present.WindowNotOpened(err))
	}
}

// copy puts text on the clipboard, or, when there is none, shows it in a
// notification so it can still be read. The copy is done by copyNow, off
// the loop, in the order asked, so the clipboard holds the last one
// clicked: a clipboard tool (wl-copy) is a process that may be slow.
func (t *tray) copy(text string) {
	if !t.copies.offer(text) { // the clipboard has not answered for several
		t.d.Log.Warn("copying: the clipboard is not answering")
		t.tell(present.CopyFailed(text))
	}
}

func (t *tray) copyNow(text string) {
	if err := t.d.Clipboard(text); err != nil {
		t.d.Log.Warn("copying", "err", err)
		t.tell(present.CopyFailed(text))
	}
}

func (t *tray) openFolder(path string) {
	if err := t.d.OpenFolder(path); err != nil {
		t.d.Log.Warn("opening folder", "path", path, "err", err)
	}
}

// exportReport writes the evidence bundle into a new folder in the home
// directory, then says where and opens it.
func (t *tray) exportReport() {
	home, _ := os.UserHomeDir()
	dir := filepath.Join(home, "gpucanary-report-"+t.now().Format("20060102-150405"))
	go func() {
		if err := t.d.Export(context.Background(), dir); err != nil {
			t.tell(present.ReportNotExported(err))
			return
		}
		t.tell(present.ReportExported(dir))
		t.openFolder(dir)
	}()
}

// exportJobReport writes what happened to the job pid into a new folder
// in the home directory, then says where and opens it.
func (t *tray) exportJobReport(pid int) {
	if t.d.ExportJob == nil {
		t.d.Log.Warn("a job report was asked for, but this tray cannot write one", "pid", pid)
		return
	}
	home, _ := os.UserHomeDir()
	dir := filepath.Join(home, fmt.Sprintf("gpucanary-job-%d-%s", pid, t.now().Format("20060102-150405")))
	go func() {
		if err := t.d.ExportJob(context.Background(), dir, pid); err != nil {
			t.tell(present.ReportNotExported(err))
			return
		}
		t.tell(present.ReportExported(dir))
		t.openFolder(dir)
	}()
}

// libraryLog is the standard logger's output, as debug records of l.
type libraryLog struct{ l *slog.Logger }

func (w libraryLog) Write(p []byte) (int, error) {
	w.l.Debug(strings.TrimSpace(string(p)), "from", "library")
	return len(p), nil
}
