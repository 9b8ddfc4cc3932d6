// Command gpucanary is GPU Canary: run without arguments it is the tray app;
// its subcommands (check, ps, watch, fix, report) give every tray feature on
// the command line. This package only wires flags, the logger, the engine
// and the app together.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/gpucanary/gpucanary/monitor/fix"
)

func main() {
	// A repair runs its installer under a copy of this program, which
	// stops it if this one dies (fix.GuardianMain).
	if handled, code := fix.GuardianMain(); handled {
		os.Exit(code)
	}
	if exe, err := os.Executable(); err == nil {
		installerGuardian = exe
	}
	stopProfiles := startProfiles()
	if err := kernelCache(); err != nil {
		fmt.Fprintln(os.Stderr, cacheWarning(err))
	}
	// SIGHUP (a closed terminal, a dropped SSH session) stops a command
	// as Ctrl-C does: a repair stops its installer, reports and records
	// how it ended, rather than dying with the environment half-installed.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	code := run(ctx, os.Args[1:], stdio{in: os.Stdin, out: os.Stdout, err: os.Stderr})
	stop()
	flushCaches()
	stopProfiles()
	os.Exit(code)
}
