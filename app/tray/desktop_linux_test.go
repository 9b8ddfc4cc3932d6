package tray

import (
	"bufio"
	"context"
	"errors"
	"log/slog"
	"os/exec"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/godbus/dbus/v5"

	"github.com/gpucanary/gpucanary/app/link"
	"github.com/gpucanary/gpucanary/app/present"
	"github.com/gpucanary/gpucanary/monitor"
)

// privateBus starts a dbus-daemon of the test's own and returns its
// address.
func privateBus(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("dbus-daemon"); err != nil {
		t.Skip("dbus-daemon is not installed (make test installs it)")
	}
	cmd := exec.Command("dbus-daemon", "--session", "--nofork", "--nopidfile", "--print-address=1")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting dbus-daemon: %v", err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	addr, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("reading dbus-daemon's address: %v", err)
	}
	return strings.TrimSpace(addr)
}

func connect(t *testing.T, addr string) *dbus.Conn {
	t.Helper()
	conn, err := dbus.Connect(addr)
	if err != nil {
		t.Fatalf("connecting to the test bus: %v", err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

// hungNotifications serves org.freedesktop.Notifications and never
// answers Notify until released, like a notification daemon that hangs.
type hungNotifications struct{ release chan struct{} }

func (h hungNotifications) Notify(app string, id uint32, icon, title, body string, actions []string,
	hints map[string]dbus.Variant, timeout int32) (uint32, *dbus.Error) {
	<-h.release
	return 1, nil
}

func TestNotifyGivesUpOnAHungService(t *testing.T) {
	addr := privateBus(t)
	server := connect(t, addr)
	hung := hungNotifications{release: make(chan struct{})}
	t.Cleanup(func() { close(hung.release) })
	if err := server.Export(hung, "/org/freedesktop/Notifications", "org.freedesktop.Notifications"); err != nil {
		t.Fatal(err)
	}
	if reply, err := server.RequestName("org.freedesktop.Notifications", dbus.NameFlagDoNotQueue); err != nil || reply != dbus.RequestNameReplyPrimaryOwner {
		t.Fatalf("owning the Notifications name: %v %v", reply, err)
	}
	old := busTimeout
	busTimeout = 300 * time.Millisecond
	t.Cleanup(func() { busTimeout = old })

	client := connect(t, addr)
	done := make(chan error, 1)
	go func() {
		done <- notifyOn(client, present.Note{Title: "torch replaced", Body: "a CPU build", Level: present.LevelError})
	}()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "sending a notification") {
			t.Errorf("notify on a hung service returned %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("notify waited for a service that does not answer")
	}
}

// recordingNotifications serves org.freedesktop.Notifications with the
// given capabilities and hands each Notify's summary and body to got, and
// its icon and urgency to looks when that is not nil.
type recordingNotifications struct {
	caps  []string
	got   chan [2]string
	looks chan look
	// actions, when not nil, gets each Notify's actions; the ID it
	// answers is then 100 more than the last.
	actions chan []string
	lastID  *atomic.Uint32 // the bus's goroutines write it, the test reads it
}

// look is how a notification is drawn: its icon and urgency hint.
type look struct {
	icon    string
	urgency byte
}

func (r recordingNotifications) GetCapabilities() ([]string, *dbus.Error) { return r.caps, nil }

func (r recordingNotifications) Notify(app string, id uint32, icon, title, body string, actions []string,
	hints map[string]dbus.Variant, timeout int32) (uint32, *dbus.Error) {
	answer := uint32(1)
	if r.actions != nil {
		answer = r.lastID.Add(100)
	}
	r.got <- [2]string{title, body}
	if r.looks != nil {
		u, _ := hints["urgency"].Value().(byte)
		r.looks <- look{icon, u}
	}
	if r.actions != nil {
		r.actions <- actions
	}
	return answer, nil
}

// serveNotifications owns the Notifications name on the bus at addr with
// rec.
func serveNotifications(t *testing.T, addr string, rec recordingNotifications) *dbus.Conn {
	t.Helper()
	server := connect(t, addr)
	if err := server.Export(rec, "/org/freedesktop/Notifications", "org.freedesktop.Notifications"); err != nil {
		t.Fatal(err)
	}
	if reply, err := server.RequestName("org.freedesktop.Notifications", dbus.NameFlagDoNotQueue); err != nil || reply != dbus.RequestNameReplyPrimaryOwner {
		t.Fatalf("owning the Notifications name: %v %v", reply, err)
	}
	return server
}

// TestNotificationActions: a notification about an environment carries
// "Show" as its default action and, when it has a repair, "Repair"; the
// server's ActionInvoked for one of them becomes the request the tray
// hands the windows (the Environments window on the environment, and its
// repair). An action on a closed notification, on another program's, or
// sent by anyone but the server, is not ours to follow. A server without
// buttons gets the tray menu's way to the repair in the body instead.
func TestNotificationActions(t *testing.T) {
	addr := privateBus(t)
	rec := recordingNotifications{caps: []string{"actions", "body"}, got: make(chan [2]string, 4), actions: make(chan []string, 4), lastID: new(atomic.Uint32)}
	server := serveNotifications(t, addr, rec)
	client := connect(t, addr)
	clicks, err := listenActions(client, sentNotes, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	const env = "/home/ada/work/llm/.venv"
	replaced := monitor.Event{Kind: monitor.KindCUDAWheelReplaced, Env: env, Message: "torch in " + env + " was replaced, by `uv run`."}
	if err := notifyOn(client, present.Notification(replaced, true)); err != nil {
		t.Fatal(err)
	}
	if got := <-rec.got; strings.Contains(got[1], "`") || strings.Contains(got[1], "tray menu") {
		t.Errorf("body %q: Markdown, or the menu pointed at beside the button", got[1])
	}
	if got, want := <-rec.actions, []string{"default", "Show", "repair", "Repair"}; !slices.Equal(got, want) {
		t.Fatalf("actions %q, want %q", got, want)
	}
	repairID := rec.lastID.Load()
	if err := notifyOn(client, present.Notification(replaced, false)); err != nil {
		t.Fatal(err)
	}
	<-rec.got
	if got, want := <-rec.actions, []string{"default", "Show"}; !slices.Equal(got, want) {
		t.Fatalf("without a repair, actions %q, want %q", got, want)
	}
	showID := rec.lastID.Load()
	if err := notifyOn(client, present.ReportExported("/tmp/r")); err != nil {
		t.Fatal(err)
	}
	<-rec.got
	if got := <-rec.actions; len(got) != 0 {
		t.Errorf("a notification about no environment has actions %q", got)
	}
	ended := monitor.Event{Kind: monitor.KindJobEnded, PID: 4242, Message: "train.py (PID 4242) crashed after 1h15m.",
		Job: &monitor.JobEnd{PID: 4242}}
	if err := notifyOn(client, present.Notification(ended, false)); err != nil {
		t.Fatal(err)
	}
	<-rec.got
	if got, want := <-rec.actions, []string{"report", "Report"}; !slices.Equal(got, want) {
		t.Fatalf("a job that ended: actions %q, want %q", got, want)
	}
	reportID := rec.lastID.Load()

	invoke := func(from *dbus.Conn, id uint32, key string) {
		t.Helper()
		if err := from.Emit("/org/freedesktop/Notifications", "org.freedesktop.Notifications.ActionInvoked", id, key); err != nil {
			t.Fatal(err)
		}
	}
	want := func(what string, r link.Request) {
		t.Helper()
		select {
		case got := <-clicks:
			if got != r {
				t.Errorf("%s: request %+v, want %+v", what, got, r)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("%s: no request", what)
		}
	}
	none := func(what string) {
		t.Helper()
		select {
		case got := <-clicks:
			t.Errorf("%s: request %+v, want none", what, got)
		case <-time.After(300 * time.Millisecond):
		}
	}
	invoke(server, repairID, "repair")
	want("Repair", link.Request{Show: link.ShowEnvs, Env: env, Repair: env})
	invoke(server, repairID, "default")
	want("a click", link.Request{Show: link.ShowEnvs, Env: env})
	invoke(server, showID, "repair")
	none("Repair on a notification without it")
	invoke(server, reportID, "report")
	want("Report", link.Request{ReportJob: 4242})
	invoke(server, showID, "report")
	none("Report on a notification about no job")
	invoke(server, 7, "default")
	none("another program's notification")
	invoke(connect(t, addr), repairID, "repair")
	none("a signal from someone other than the server")
	if err := server.Emit("/org/freedesktop/Notifications", "org.freedesktop.Notifications.NotificationClosed", repairID, uint32(2)); err != nil {
		t.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond)
	invoke(server, repairID, "repair")
	none("a closed notification")

	// A server without buttons.
	plainAddr := privateBus(t)
	plain := recordingNotifications{caps: []string{"body"}, got: make(chan [2]string, 1)}
	serveNotifications(t, plainAddr, plain)
	if err := notifyOn(connect(t, plainAddr), present.Notification(replaced, true)); err != nil {
		t.Fatal(err)
	}
	if got := <-plain.got; !strings.Contains(got[1], "Reinstall… entry under the environment in the tray menu") {
		t.Errorf("without buttons the body is %q", got[1])
	}
	if err := notifyOn(connect(t, plainAddr), present.Notification(ended, false)); err != nil {
		t.Fatal(err)
	}
	if got := <-plain.got; !strings.Contains(got[1], "run: gpucanary report --job 4242") {
		t.Errorf("a job's end without buttons: the body is %q", got[1])
	}
}

// TestNotifyIconByLevel: the icon says what the notification says, a
// report exported is not drawn as a warning.
func TestNotifyIconByLevel(t *testing.T) {
	addr := privateBus(t)
	rec := recordingNotifications{caps: []string{"body"}, got: make(chan [2]string, 1), looks: make(chan look, 1)}
	serveNotifications(t, addr, rec)
	client := connect(t, addr)
	for _, tc := range []struct {
		n    present.Note
		want look
	}{
		{present.ReportExported("/tmp/r"), look{"emblem-default", 0}},
		{present.ReportNotExported(errors.New("disk full")), look{"dialog-error", 1}},
		{present.CopyFailed("pip check"), look{"dialog-warning", 1}},
		{present.Notification(monitor.Event{Kind: monitor.KindGPUStateChanged}, false), look{"dialog-information", 0}},
		{present.Notification(monitor.Event{Kind: monitor.KindCUDAWheelReplaced, Env: "/e"}, false), look{"dialog-error", 1}},
		{present.Note{Title: "no level"}, look{"dialog-information", 0}},
	} {
		t.Run(tc.n.Title, func(t *testing.T) {
			if err := notifyOn(client, tc.n); err != nil {
				t.Fatal(err)
			}
			<-rec.got
			if got := <-rec.looks; got != tc.want {
				t.Errorf("%s notification drawn as %+v, want %+v", tc.n.Level, got, tc.want)
			}
		})
	}
}

// TestNotifyEscapesMarkupTheServerParses: a venv folder named with HTML
// reaches a server that parses body markup as text, never as a link; a
// server without markup gets the text as it is, and the summary (plain
// text by the specification) is never altered.
func TestNotifyEscapesMarkupTheServerParses(t *testing.T) {
	const hostile = `/home/ada/<a href="file:/etc/passwd">CLICK</a> & <b>x</b>/.venv`
	tests := []struct {
		name     string
		caps     []string
		wantBody string
	}{
		{"body-markup and hyperlinks", []string{"actions", "body", "body-hyperlinks", "body-markup"},
			`/home/ada/&lt;a href=&#34;file:/etc/passwd&#34;&gt;CLICK&lt;/a&gt; &amp; &lt;b&gt;x&lt;/b&gt;/.venv`},
		{"plain text only", []string{"body"}, hostile},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			addr := privateBus(t)
			server := connect(t, addr)
			rec := recordingNotifications{caps: tt.caps, got: make(chan [2]string, 1)}
			if err := server.Export(rec, "/org/freedesktop/Notifications", "org.freedesktop.Notifications"); err != nil {
				t.Fatal(err)
			}
			if reply, err := server.RequestName("org.freedesktop.Notifications", dbus.NameFlagDoNotQueue); err != nil || reply != dbus.RequestNameReplyPrimaryOwner {
				t.Fatalf("owning the Notifications name: %v %v", reply, err)
			}
			if err := notifyOn(connect(t, addr), present.Note{Title: "torch replaced in " + hostile, Body: hostile, Level: present.LevelError}); err != nil {
				t.Fatal(err)
			}
			got := <-rec.got
			if got[0] != "torch replaced in "+hostile {
				t.Errorf("summary = %q, want it as written", got[0])
			}
			if got[1] != tt.wantBody {
				t.Errorf("body = %q, want %q", got[1], tt.wantBody)
			}
		})
	}
}

// TestBodyMarkupWhenTheServerCannotSay: a server that does not answer
// GetCapabilities is treated as parsing markup (escaping is the safe side).
func TestBodyMarkupWhenTheServerCannotSay(t *testing.T) {
	addr := privateBus(t)
	server := connect(t, addr)
	// No object is exported: GetCapabilities fails at once.
	if reply, err := server.RequestName("org.freedesktop.Notifications", dbus.NameFlagDoNotQueue); err != nil || reply != dbus.RequestNameReplyPrimaryOwner {
		t.Fatalf("owning the Notifications name: %v %v", reply, err)
	}
	obj := connect(t, addr).Object("org.freedesktop.Notifications", "/org/freedesktop/Notifications")
	if _, known := capabilities(context.Background(), obj); known {
		t.Error("a server that cannot say is taken as saying")
	}
}
