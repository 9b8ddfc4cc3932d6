//go:build !nogui

package main

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestNoDesktopOneLineNoBus runs the program as `make run` would on a
// server: the tray (and the windows on their own) with no display, or a
// display but no session bus. Each says so in one line and exits 2,
// without a Go panic, and no dbus-daemon started by it is left running.
// The program and whatever it starts carry a marker in their environment,
// so a dbus-daemon of another test or of the desktop is not counted.
func TestNoDesktopOneLineNoBus(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	display := listenX(t)
	sim := simFile(t, simA100)
	for _, tc := range []struct {
		name string
		env  []string
		args []string
		line string
	}{
		{"the tray, no display", nil, nil, "gpucanary: no desktop session (DISPLAY and WAYLAND_DISPLAY are unset): the tray needs one; 'gpucanary watch' watches in this terminal instead."},
		{"the tray, a display and no bus", []string{"DISPLAY=" + display}, nil, "gpucanary: no desktop session (no session bus: "},
		{"the windows, no display", nil, []string{"ui"}, "gpucanary ui: no desktop session (DISPLAY is unset: the windows need an X display)."},
		{"the windows, a display and no bus", []string{"DISPLAY=" + display}, []string{"ui"}, "gpucanary ui: no desktop session (no session bus: "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			marker := fmt.Sprintf("GPUCANARY_TEST_MARKER=%d-%d", os.Getpid(), time.Now().UnixNano())
			cmd := programCommand(t, append([]string{"--gpu-sim", sim}, tc.args...)...)
			cmd.Env = append(withoutDesktop(cmd.Env), append(tc.env, marker, "XDG_RUNTIME_DIR="+t.TempDir())...)
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			select {
			case <-done:
			case <-time.After(60 * time.Second):
				cmd.Process.Kill()
				<-done
				t.Errorf("it ran on without a desktop")
			}
			t.Cleanup(func() { killMarked(marker) })
			if code := cmd.ProcessState.ExitCode(); code != exitUsage {
				t.Errorf("exit %d, want %d", code, exitUsage)
			}
			lines := strings.Split(strings.TrimSuffix(stderr.String(), "\n"), "\n")
			if len(lines) != 1 || !strings.HasPrefix(lines[0], tc.line) || stdout.Len() > 0 {
				t.Errorf("want one line %q…; stderr:\n%s\nstdout:\n%s", tc.line, stderr.String(), stdout.String())
			}
			if pids := marked(marker, "dbus-daemon", "dbus-launch"); len(pids) > 0 {
				t.Errorf("a session bus it started is left running: PIDs %v", pids)
			}
		})
	}
}

// listenX answers where the X server of a display listens (its abstract
// socket): enough for "is a display there", with no X server to start.
func listenX(t *testing.T) string {
	t.Helper()
	for n := 4700 + os.Getpid()%1000; n < 6000; n++ {
		l, err := net.Listen("unix", fmt.Sprintf("@/tmp/.X11-unix/X%d", n))
		if err != nil {
			continue
		}
		t.Cleanup(func() { l.Close() })
		go func() {
			for {
				c, err := l.Accept()
				if err != nil {
					return
				}
				c.Close()
			}
		}()
		return ":" + strconv.Itoa(n)
	}
	t.Fatal("no free display number")
	return ""
}

func withoutDesktop(env []string) []string {
	var out []string
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		switch name {
		case "DISPLAY", "WAYLAND_DISPLAY", "DBUS_SESSION_BUS_ADDRESS", "XDG_RUNTIME_DIR":
			continue
		}
		out = append(out, kv)
	}
	return out
}

// marked lists the processes named one of names whose environment holds
// marker: those the program under test started.
func marked(marker string, names ...string) []int {
	var pids []int
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	for _, d := range dirs {
		comm, err := os.ReadFile(filepath.Join(d, "comm"))
		if err != nil {
			continue
		}
		found := false
		for _, n := range names {
			found = found || strings.TrimSpace(string(comm)) == n
		}
		if !found {
			continue
		}
		environ, err := os.ReadFile(filepath.Join(d, "environ"))
		if err != nil || !bytes.Contains(environ, []byte(marker+"\x00")) {
			continue
		}
		if pid, err := strconv.Atoi(filepath.Base(d)); err == nil {
			pids = append(pids, pid)
		}
	}
	return pids
}

// killMarked ends what a failing run left behind, so that it does not
// outlive the test.
func killMarked(marker string) {
	for _, pid := range marked(marker, "dbus-daemon", "dbus-launch") {
		if p, err := os.FindProcess(pid); err == nil {
			p.Kill()
		}
	}
}
