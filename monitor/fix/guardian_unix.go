//go:build !windows

package fix

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"syscall"
	"time"
)

// guardianEnv marks a process started as an installer's guardian: GPU
// Canary's own executable, run with the installer's argv.
const guardianEnv = "GPUCANARY_INSTALLER_GUARDIAN"

// GuardianMain runs this process as an installer's guardian when it was
// started as one, and returns true with the exit status; otherwise it
// returns false at once. Every program that passes its own executable as
// RunOptions.Guardian calls it first thing in main.
//
// Why a guardian: the kernel tells only a process's direct child that the
// process died (Linux's PR_SET_PDEATHSIG), and the installer is often not
// the direct child: `python3` may be a pyenv or asdf shim (a shell script
// that defers SIGINT while it waits), and `pip --python` runs a second
// pip. The guardian is the direct child and the leader of the
// installer's process group; when GPU Canary dies, even by kill -9, it
// stops the whole group as an interrupted repair would: SIGINT, then
// SIGTERM, then SIGKILL.
func GuardianMain() (handled bool, code int) {
	if os.Getenv(guardianEnv) != "1" {
		return false, 0
	}
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "gpucanary: installer guardian started without an installer")
		return true, 2
	}
	// SIGINT is caught, not ignored: an ignored signal stays ignored in
	// the installer, and Python then never raises KeyboardInterrupt.
	// GPU Canary sends SIGINT to the whole group; the installer acts on it.
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	os.Unsetenv(guardianEnv)
	cmd := exec.Command(os.Args[1], os.Args[2:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(os.Stderr, "gpucanary: starting %s: %v\n", os.Args[1], err)
		return true, 127
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	for {
		select {
		case err := <-done:
			return true, exitStatus(err)
		case sig := <-sigs:
			if sig == syscall.SIGINT {
				continue // the group got it: the installer is unwinding
			}
			// GPU Canary is gone (the kernel's parent-death signal) or
			// asks harder: stop the group ourselves.
			return true, stopGroupAlone(done)
		}
	}
}

// stopGroupAlone stops the guardian's process group (itself and the
// installer) the way stopSteps do, and returns the installer's status.
func stopGroupAlone(done <-chan error) int {
	pgid := syscall.Getpgrp()
	for _, step := range []struct {
		sig  syscall.Signal
		wait time.Duration
	}{{syscall.SIGINT, 15 * time.Second}, {syscall.SIGTERM, 5 * time.Second}} {
		_ = syscall.Kill(-pgid, step.sig)
		select {
		case err := <-done:
			return exitStatus(err)
		case <-time.After(step.wait):
		}
	}
	_ = syscall.Kill(-pgid, syscall.SIGKILL) // the guardian goes with it
	return exitStatus(<-done)
}

func exitStatus(err error) int {
	var exit *exec.ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &exit):
		if ws, ok := exit.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return 128 + int(ws.Signal())
		}
		return exit.ExitCode()
	}
	return 127
}

// guarded returns the command that runs argv under guardian.
func guarded(guardian string, argv []string) *exec.Cmd {
	cmd := exec.Command(guardian, argv...)
	cmd.Env = append(cmd.Environ(), guardianEnv+"=1")
	return cmd
}
