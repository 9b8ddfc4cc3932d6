package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"strings"
)

// commands is the registry: every command `run` dispatches, in the order
// the top-level usage lists them. A new command is one entry here and the
// file that implements it.
func commands() []command {
	return append([]command{
		{name: "check", args: "[--json] [--format prom [--textfile PATH]] [PATH...]", setup: checkFlags,
			usage: "check [--json] [--format text|json|prom [--textfile PATH]] [PATH...]\n" +
				"Exit status: 0 no error findings, 1 error findings (a PATH that names no environment is one), 2 usage or internal error.",
			summary: "inspect environments and the GPU; exit 1 on error findings"},
		{name: "ps", args: "[--json] [--watch]", setup: psFlags,
			summary: "per-process GPU use and verdicts"},
		{name: "watch", args: "[--json] [PATH...]", setup: watchFlags,
			usage: "watch [--json] [--all] [PATH...]\n" +
				"Runs until interrupted; exit status 1 when a PATH names no environment (its finding is printed first), 2 on usage.",
			summary: "run the engine headless and print each event"},
		{name: "fix", args: "PATH [--dry-run] [--yes] [--variant cuNNN] [--index-base URL]", setup: fixFlags,
			usage: "fix PATH [--dry-run] [--yes] [--variant cuNNN] [--index-base URL] [--force] [--timeout D]\n" +
				"       gpucanary fix --pin-index PATH [--variant cuNNN] [--index-base URL]",
			summary: "reinstall a CUDA torch in the environment at PATH"},
		{name: "report", args: "[-o DIR]", usage: "report [-o DIR] [PATH...]", setup: reportFlags,
			summary: "write the evidence bundle"},
		{name: "agent", args: "[--web.listen-address ADDR] [--web.config.file FILE] [--textfile PATH]", setup: agentFlags, help: agentUsage,
			summary: "run the engine headless and serve Prometheus metrics"},
		{name: "version", rawArgs: true, setup: versionFlags,
			summary: "print the version"},
		{name: "help", aliases: []string{"-h", "--help"}, hidden: true, rawArgs: true, setup: helpFlags,
			summary: "print this usage"},
	}, guiCommands()...)
}

// runFunc is a command's body, run once its flags are parsed.
type runFunc func(ctx context.Context, std stdio) int

// command is one entry of the registry.
type command struct {
	name    string
	aliases []string
	// args are the command's arguments as the top-level usage lists them.
	args string
	// summary is its one line in the top-level usage.
	summary string
	// usage is the command's own usage, shown when its flags are wrong;
	// "" means its name and args.
	usage string
	// help, when set, is the command's whole help (usage, flags,
	// examples), shown instead of usage; --help then prints it and exits 0.
	help string
	// hidden leaves it out of the top-level usage (help; ui, which the
	// tray starts).
	hidden bool
	// rawArgs hands the arguments over unparsed (version and help take
	// none and ignore what they are given).
	rawArgs bool
	// showsBadInput runs the command even when a file a global flag names
	// is missing or malformed (globals.badInput): it shows that itself
	// (ui, the windows: a dialog). Every other command stops with exit
	// status 2.
	showsBadInput bool
	// setup declares the command's flags on fs and returns its body, which
	// reads the positional arguments from fs.Args().
	setup func(fs *flag.FlagSet, g *globals) runFunc
}

// lookup finds the command called name.
func lookup(name string) (command, bool) {
	for _, c := range commands() {
		if c.name == name {
			return c, true
		}
		for _, a := range c.aliases {
			if a == name {
				return c, true
			}
		}
	}
	return command{}, false
}

// run parses the command's flags, interspersed with its arguments, and
// runs it.
func (c command) run(ctx context.Context, g *globals, args []string, std stdio) int {
	fs := flag.NewFlagSet(c.name, flag.ContinueOnError)
	fs.SetOutput(std.err)
	fs.Usage = func() { fmt.Fprintln(std.err, "Usage: gpucanary "+c.usageText()) }
	if c.help != "" {
		fs.Usage = func() { fmt.Fprint(std.err, c.help) }
	}
	body := c.setup(fs, g)
	if !c.rawArgs {
		if err := parseInterspersed(fs, args); err != nil {
			if errors.Is(err, flag.ErrHelp) && c.help != "" {
				return exitOK
			}
			return exitUsage
		}
		if errs := g.badInput(); len(errs) > 0 && !c.showsBadInput {
			for _, err := range errs {
				fmt.Fprintf(std.err, "gpucanary %s: %v\n", c.name, err)
			}
			return exitUsage
		}
	}
	return body(ctx, std)
}

func (c command) usageText() string {
	if c.usage != "" {
		return c.usage
	}
	return c.synopsis()
}

// synopsis is the name and arguments, as the top-level usage lists them.
func (c command) synopsis() string {
	if c.args == "" {
		return c.name
	}
	return c.name + " " + c.args
}

// usageText is the top-level usage, its list of commands made from the
// registry.
func usageText() string {
	var list strings.Builder
	for _, c := range commands() {
		if c.hidden {
			continue
		}
		if s := c.synopsis(); len(s) > 28 {
			fmt.Fprintf(&list, "  %s\n  %28s %s\n", s, "", c.summary)
		} else {
			fmt.Fprintf(&list, "  %-28s %s\n", s, c.summary)
		}
	}
	return `Usage: gpucanary [--gpu-sim FILE] [--config FILE] [COMMAND] [ARGS]

Without a command, GPU Canary starts in the system tray.

Commands:
` + list.String() + `
Global flags:
  --gpu-sim FILE   replace NVML with a simulated GPU (also GPUCANARY_GPU_SIM)
  --config FILE    settings file (default: the user config directory)
  --log-level L    debug, info, warn or error (default warn)
`
}

// parseInterspersed parses flags that may come after positional arguments
// ("check ./venv --json"), as people type them.
func parseInterspersed(fs *flag.FlagSet, args []string) error {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return err
		}
		args = fs.Args()
		if len(args) == 0 {
			break
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
	return fs.Parse(append([]string{"--"}, pos...))
}

// simFlag lets a command take --gpu-sim after its name too.
func (g *globals) simFlag(fs *flag.FlagSet) {
	fs.StringVar(&g.gpuSim, "gpu-sim", g.gpuSim, "simulated GPU scenario file")
}

func versionFlags(*flag.FlagSet, *globals) runFunc {
	return func(_ context.Context, std stdio) int {
		printVersion(std.out)
		return exitOK
	}
}

func helpFlags(*flag.FlagSet, *globals) runFunc {
	return func(_ context.Context, std stdio) int {
		fmt.Fprint(std.out, usageText())
		return exitOK
	}
}
