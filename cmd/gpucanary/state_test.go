package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gpucanary/gpucanary/monitor/pyenv/pyenvtest"
)

// gpucanaryCmd is this test binary run as gpucanary with args
// (programCommand, main_test.go), with its own state folder.
func gpucanaryCmd(t *testing.T, state string, args ...string) *exec.Cmd {
	t.Helper()
	cmd := programCommand(t, args...)
	cmd.Env = append(cmd.Env, "XDG_STATE_HOME="+state, "XDG_CONFIG_HOME="+t.TempDir())
	return cmd
}

// TestTwoWatchesRefuseToShareAStateFolder: a second `watch` on the state
// folder a running one writes exits 2 at once, naming the running one and
// what to do; once the first has ended, a watch starts there again.
func TestTwoWatchesRefuseToShareAStateFolder(t *testing.T) {
	state := t.TempDir()
	env := filepath.Join(t.TempDir(), "proj", ".venv")
	if err := pyenvtest.Write(env, incidentsSpec("good-cu121")); err != nil {
		t.Fatal(err)
	}
	sim := simFile(t, simA100)
	first := startWatch(t, state, sim, env)

	second := gpucanaryCmd(t, state, "--gpu-sim", sim, "watch", env)
	var stderr bytes.Buffer
	second.Stderr = &stderr
	if err := second.Start(); err != nil {
		t.Fatal(err)
	}
	// Without the lock it would watch on: it is given a minute to refuse.
	stop := time.AfterFunc(time.Minute, func() { second.Process.Kill() })
	err := second.Wait()
	stop.Stop()
	if code := second.ProcessState.ExitCode(); code != exitUsage {
		t.Fatalf("the second watch: %v (exit %d), want exit 2; stderr: %s", err, code, stderr.String())
	}
	want := fmt.Sprintf("gpucanary watch: GPU Canary's watch (PID %d) is already running with the state folder %s.\n", first.Process.Pid, filepath.Join(state, "gpucanary"))
	if !strings.Contains(stderr.String(), want) || !strings.Contains(stderr.String(), "XDG_STATE_HOME=DIR gpucanary watch") {
		t.Errorf("the second watch says:\n%s\nwant it to start:\n%s", stderr.String(), want)
	}

	first.Process.Signal(os.Interrupt)
	if err := first.Wait(); err != nil {
		t.Fatalf("the first watch: %v", err)
	}
	third := startWatch(t, state, sim, env)
	third.Process.Signal(os.Interrupt)
	third.Wait()
}

// startWatch starts `watch env` on the state folder and returns once it
// has said it is watching (it holds the folder by then).
func startWatch(t *testing.T, state, sim, env string) *exec.Cmd {
	t.Helper()
	cmd := gpucanaryCmd(t, state, "--gpu-sim", sim, "watch", env)
	errPipe, _ := cmd.StderrPipe()
	cmd.Stdout = io.Discard
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			cmd.Wait()
		}
	})
	stderr := &bytes.Buffer{}
	watching := make(chan bool, 1)
	go func() {
		sc := bufio.NewScanner(errPipe)
		said := false
		for sc.Scan() {
			stderr.WriteString(sc.Text() + "\n")
			if !said && strings.Contains(sc.Text(), "watching environments") {
				said = true
				watching <- true
			}
		}
		if !said {
			watching <- false
		}
	}()
	select {
	case ok := <-watching:
		if !ok {
			cmd.Wait()
			t.Fatalf("watch ended without watching; stderr: %s", stderr.String())
		}
	case <-time.After(time.Minute):
		t.Fatal("watch did not start watching in a minute")
	}
	return cmd
}

// TestWatchRunsWithoutAnUntrustedStateFolder is issue 42 for the command
// line: a state folder anyone can write is not used (no lock, no state,
// no history written there); watch says so once, naming the folder, its
// owner and mode and what to do, and watches all the same.
func TestWatchRunsWithoutAnUntrustedStateFolder(t *testing.T) {
	state := t.TempDir()
	dir := filepath.Join(state, "gpucanary")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	env := filepath.Join(t.TempDir(), "proj", ".venv")
	if err := pyenvtest.Write(env, incidentsSpec("good-cu121")); err != nil {
		t.Fatal(err)
	}
	cmd := gpucanaryCmd(t, state, "--gpu-sim", simFile(t, simA100), "watch", env)
	errPipe, _ := cmd.StderrPipe()
	cmd.Stdout = io.Discard
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	stop := time.AfterFunc(2*time.Minute, func() { cmd.Process.Kill() })
	defer stop.Stop()
	var said []string
	sc := bufio.NewScanner(errPipe)
	for sc.Scan() {
		said = append(said, sc.Text())
		if strings.Contains(sc.Text(), "watching environments") {
			break
		}
	}
	cmd.Process.Signal(os.Interrupt)
	io.Copy(io.Discard, errPipe)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("watch: %v; stderr:\n%s", err, strings.Join(said, "\n"))
	}
	all := strings.Join(said, "\n")
	if strings.Count(all, "the state folder is not used") != 1 || !strings.Contains(all, "watching environments") {
		t.Fatalf("watch did not say once that it does not use the folder, then watch; stderr:\n%s", all)
	}
	for _, want := range []string{dir, "drwxrwxrwx", "other users can write it", "chmod go-w", "XDG_STATE_HOME"} {
		if !strings.Contains(all, want) {
			t.Errorf("the warning does not say %q:\n%s", want, all)
		}
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("files were written into the untrusted folder: %v", ents)
	}
}
