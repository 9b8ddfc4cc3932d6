//go:build lean

package main

// The lean build (-tags lean; make cli's gpucanary-cli) leaves out the
// code of the commands that serve or fetch over the network: the agent
// (Prometheus client, HTTP server, TLS), kb refresh (HTTPS client) and
// check --format prom. Every byte of a Go binary is mapped when it runs
// (ARCHITECTURE.md, "Start-up memory"), so these made a one-environment
// check cost 19 MB instead of 10 (issue 34). The lean build hands those
// commands, with the same command line, to the full build installed
// beside it (gpucanary-full): every command stays.

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/gpucanary/gpucanary/monitor"
)

// fullPath is where the full build is: beside this program; command is
// what it is wanted for, for the error.
func fullPath(command string) (string, error) {
	exe, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("finding this program's folder: %w", err)
	}
	name := fullName
	if runtime.GOOS == "windows" {
		name += ".exe"
	}
	p := filepath.Join(filepath.Dir(exe), name)
	if _, err := os.Stat(p); err != nil {
		return "", fmt.Errorf("this build hands %s to %s, which should be installed beside it: %w", command, name, err)
	}
	return p, nil
}

// handOver runs args with the full build and returns its exit status;
// on Unix the full build replaces this process (fullexec_lean_unix.go),
// so signals, the PID and the exit status are its.
func handOver(command string, args []string, std stdio) int {
	p, err := fullPath(command)
	if err != nil {
		fmt.Fprintf(std.err, "gpucanary %s: %v\n", command, err)
		return exitUsage
	}
	return execFull(p, args, std)
}

// cmdAgent hands the whole command line over.
func cmdAgent(_ context.Context, g *globals, _ *flag.FlagSet, _ agentConfig, std stdio) int {
	return handOver("agent", g.args, std)
}

// cmdKBRefresh hands kb refresh over, with the index the settings or
// --index-url give.
func cmdKBRefresh(_ context.Context, index string, std stdio) int {
	return handOver("kb refresh", []string{"kb", "refresh", "--index-url", index}, std)
}

// checkSetup is check's flags and body; check --format prom is handed
// over once its flags are parsed.
func checkSetup(fs *flag.FlagSet, g *globals) runFunc {
	body := checkFlags(fs, g)
	return func(ctx context.Context, std stdio) int {
		if f := fs.Lookup("format"); f != nil && f.Value.String() == "prom" {
			return handOver("check", g.args, std)
		}
		return body(ctx, std)
	}
}

// checkMetrics is never called: checkSetup hands --format prom over first.
func checkMetrics(monitor.CheckResult, bool, time.Time, string, stdio) error {
	return errors.New("this build writes no metrics: " + fullName + " does")
}

// refreshKnowledge is the engine's daily kb refresh (knowledgeRefresher):
// the full build runs kb refresh on index, which writes the overlay.
func refreshKnowledge(ctx context.Context, index, _ string) error {
	p, err := fullPath("kb refresh")
	if err != nil {
		return err
	}
	out, err := exec.CommandContext(ctx, p, "kb", "refresh", "--index-url", index).CombinedOutput()
	if err != nil {
		return fmt.Errorf("running %s kb refresh: %w: %s", p, err, strings.TrimSpace(string(out)))
	}
	return nil
}
