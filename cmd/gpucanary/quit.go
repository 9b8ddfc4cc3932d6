package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"time"

	"github.com/gpucanary/gpucanary/monitor/instance"
	"github.com/gpucanary/gpucanary/monitor/store"
)

const quitHelp = `Usage: gpucanary quit [--timeout D]

Asks the tray of this session to quit, as its menu's Quit does, and waits
until it has: through the channel a second start uses to bring its window
up (its name on the session bus on Linux; named objects of the session on
Windows). Nothing is killed. The Windows installer runs it before an
upgrade or an uninstall replaces the tray's files.

Flags:
  --timeout D          how long to wait for the tray to quit (default 10s)

Examples:
  gpucanary quit
  gpucanary quit --timeout 30s

Exit status: 0 when no tray was running, or it quit; 1 when it did not
quit in time, or could not be asked (a tray started without a session
bus; a GPU Canary older than this one); 2 on usage.
`

func quitFlags(fs *flag.FlagSet, g *globals) runFunc {
	timeout := 10 * time.Second
	fs.Var((*positiveDuration)(&timeout), "timeout", "how long to wait for the tray to quit (above zero)")
	return func(ctx context.Context, std stdio) int { return cmdQuit(ctx, timeout, std) }
}

// cmdQuit asks the session's tray to quit and waits up to timeout for it
// (instance.Quit).
func cmdQuit(ctx context.Context, timeout time.Duration, std stdio) int {
	dir, _ := store.Dir() // where the lock says a tray runs without a session bus
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	was, err := instance.Quit(ctx, dir)
	var nq *instance.NotQuit
	switch {
	case err == nil && !was:
		fmt.Fprintln(std.out, "GPU Canary's tray is not running.")
		return exitOK
	case err == nil:
		fmt.Fprintln(std.out, "GPU Canary's tray quit.")
		return exitOK
	case errors.As(err, &nq) && nq.Asked && errors.Is(err, context.DeadlineExceeded):
		who := "GPU Canary's tray"
		if nq.PID > 0 {
			who += fmt.Sprintf(" (PID %d)", nq.PID)
		}
		fmt.Fprintf(std.err, "gpucanary quit: %s was asked to quit and still runs after %s.\n", who, timeout)
		return exitFound
	case errors.As(err, &nq):
		fmt.Fprintf(std.err, "gpucanary quit: %v\n", err)
		return exitFound
	default:
		fmt.Fprintf(std.err, "gpucanary quit: %v\n", err)
		return exitUsage
	}
}
