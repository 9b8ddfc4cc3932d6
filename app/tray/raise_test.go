package tray

import (
	"slices"
	"testing"
	"time"

	"github.com/gpucanary/gpucanary/app/link"
	"github.com/gpucanary/gpucanary/app/present/presenttest"
)

// TestRaiseOpensTheWindow: a window asked for from outside the menu (a
// second start of GPU Canary, a click on a notification) is opened by the
// tray's windows process.
func TestRaiseOpensTheWindow(t *testing.T) {
	raise := make(chan link.Request)
	h := start(t, presenttest.A100, func(d *Deps) { d.Raise = raise })
	raise <- link.Request{Show: link.ShowEnvs, Env: h.paths[1]}
	h.sync()
	h.wins.mu.Lock()
	defer h.wins.mu.Unlock()
	if !slices.Equal(h.wins.requests, []link.Request{{Show: link.ShowEnvs, Env: h.paths[1]}}) {
		t.Errorf("requests %+v", h.wins.requests)
	}
}

// TestStartChecksStartAtLogin: each start of the tray points an enabled
// start at login at the program where it is now (autostart.Repoint).
func TestStartChecksStartAtLogin(t *testing.T) {
	h := start(t, presenttest.A100, nil)
	h.sync()
	if n := h.repointed.Load(); n != 1 {
		t.Errorf("start at login was checked %d times, want once", n)
	}
}

// TestQuitAskedEndsTheTray: another process asking the tray to quit
// (gpucanary quit, the installer) ends it as its Quit entry does: the
// loop ends and the windows process is closed.
func TestQuitAskedEndsTheTray(t *testing.T) {
	quit := make(chan struct{}, 1)
	h := start(t, presenttest.A100, func(d *Deps) { d.QuitAsked = quit })
	h.click(LabelEnvs)
	quit <- struct{}{}
	select {
	case <-h.done:
	case <-time.After(30 * time.Second):
		t.Fatal("a quit asked did not end the tray")
	}
	if !h.wins.closed {
		t.Error("the windows process was not closed")
	}
}
