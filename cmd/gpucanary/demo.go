package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"

	"github.com/gpucanary/gpucanary/monitor/demo"
)

const demoHelp = `Usage: gpucanary demo [--cli] [--dir DIR]

Shows GPU Canary without a GPU and without touching your environments: it
writes a demonstration home (a healthy CUDA venv, a uv project whose
'uv run' replaced its CUDA torch with a CPU build, llama-cpp-python without
its CUDA backend, ComfyUI's portable release) and two simulated GPUs into a
new folder, and starts the tray on them. Everything says it is simulated;
your settings, history and environments are neither read nor changed.
Without a desktop (or with --cli) it prints what 'gpucanary check' says of
the demonstration instead.

Flags:
  --cli                print the check in this terminal instead of starting
                       the tray
  --dir DIR            write the demonstration into DIR (new or empty); the
                       default is a new folder in the temporary folder, kept
                       so that you can look at it, and named on the first line

Examples:
  gpucanary demo
  gpucanary demo --cli
  gpucanary-cli demo

Exit status: 0 when the demonstration was shown (its errors are the point),
2 when it could not be written or started.
`

func demoFlags(fs *flag.FlagSet, g *globals) runFunc {
	cli := fs.Bool("cli", false, "print the check instead of starting the tray")
	dir := fs.String("dir", "", "write the demonstration into DIR")
	return func(ctx context.Context, std stdio) int { return cmdDemo(ctx, g, *cli, *dir, std) }
}

// cmdDemo writes the demonstration and runs this program on it, as a
// child whose home, settings, state, cache and GPUs are the
// demonstration's: nothing of the user's is read, and the child is the
// program a user runs, not a special mode of it.
func cmdDemo(ctx context.Context, g *globals, cli bool, dir string, std stdio) int {
	if dir == "" {
		d, err := os.MkdirTemp("", "gpucanary-demo-")
		if err != nil {
			fmt.Fprintf(std.err, "gpucanary demo: making its folder: %v\n", err)
			return exitUsage
		}
		dir = d
	}
	d, err := demo.Write(dir)
	if err != nil {
		fmt.Fprintf(std.err, "gpucanary demo: %v\n", err)
		return exitUsage
	}
	exe, err := os.Executable()
	if err != nil {
		fmt.Fprintf(std.err, "gpucanary demo: finding this program to run it on the demonstration: %v\n", err)
		return exitUsage
	}
	fmt.Fprintf(std.out, "GPU Canary demo: %d environments and two simulated GPUs in %s (delete it when done).\n", len(d.Envs), d.Dir)
	var args []string
	if !cli {
		if why := trayUnavailable(g.getenv); why != nil {
			fmt.Fprintf(std.out, "No tray here (%v): this is what 'gpucanary check' says of it.\n", why)
			cli = true
		}
	}
	if cli {
		args = append([]string{"check"}, d.Envs...)
		fmt.Fprintln(std.out)
	} else {
		fmt.Fprintln(std.out, "GPU Canary is in your system tray; quit it from its menu (or Ctrl-C here).")
	}
	cmd := exec.CommandContext(ctx, exe, args...)
	cmd.Env = d.Environ(os.Environ())
	cmd.Dir = d.Home
	cmd.Stdin, cmd.Stdout, cmd.Stderr = std.in, std.out, std.err
	err = cmd.Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return exitOK
	case cli && errors.As(err, &exit) && exit.ExitCode() == exitFound:
		return exitOK // check's errors are the demonstration's incidents
	case ctx.Err() != nil:
		return exitOK // Ctrl-C ends the tray, as its menu does
	}
	fmt.Fprintf(std.err, "gpucanary demo: running %s on the demonstration: %v\n", exe, err)
	return exitUsage
}
