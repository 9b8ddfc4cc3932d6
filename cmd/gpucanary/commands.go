package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/gpucanary/gpucanary/monitor/human"
)

// commands is the registry: every command `run` dispatches, in the order
// the top-level usage lists them. A new command is one entry here and the
// file that implements it.
func commands() []command {
	return append([]command{
		{name: "check", operands: anyPaths, setup: checkFlags, help: checkHelp,
			summary: "inspect environments and the GPU; exit 1 on error findings"},
		{name: "ps", setup: psFlags, help: psHelp,
			summary: "per-process GPU use and verdicts"},
		{name: "watch", operands: anyPaths, setup: watchFlags, help: watchHelp,
			summary: "run the engine headless and print each event"},
		{name: "wait", operands: operands{min: 1, max: -1, what: "PID"}, setup: waitFlags, help: waitHelp,
			summary: "wait until processes end and say how each did: finished or crashed, and why"},
		{name: "fix", operands: operands{min: 1, max: 1, what: "environment path"},
			setup: fixFlags, help: fixHelp,
			summary: "reinstall a CUDA torch in the environment at PATH, or pin its CUDA index"},
		{name: "guard", operands: operands{min: 1, max: 1, what: "environment path"},
			setup: guardFlags, help: guardHelp,
			summary: "keep the environment's CUDA torch from being replaced by later installs"},
		{name: "unguard", operands: operands{min: 1, max: 1, what: "environment path"},
			setup: unguardFlags, help: unguardHelp,
			summary: "lift that guard, giving the environment back byte for byte"},
		{name: "report", operands: anyPaths, setup: reportFlags, help: reportHelp,
			summary: "write the evidence bundle"},
		{name: "agent", operands: anyPaths, setup: agentFlags, help: agentUsage,
			summary: "run the engine headless and serve Prometheus metrics"},
		{name: "kb", operands: operands{max: 1, what: "kb command (refresh)"}, setup: kbFlags, help: kbHelp,
			summary: "what GPU Canary knows of torch and drivers; refresh learns new releases"},
		{name: "demo", setup: demoFlags, help: demoHelp,
			summary: "try GPU Canary on a demonstration home and simulated GPUs"},
		// quit reads no settings: a broken settings file must not keep
		// the installer from stopping the tray.
		{name: "quit", readsNoInput: true, setup: quitFlags, help: quitHelp,
			summary: "ask this session's tray to quit, and wait until it has"},
		{name: "version", readsNoInput: true, setup: versionFlags, help: versionHelp,
			summary: "print the version"},
		{name: "help", aliases: []string{"-h", "--help"}, hidden: true, rawArgs: true, readsNoInput: true, operands: operands{max: 1, what: "command name"},
			setup: helpFlags, help: helpHelp,
			summary: "print this usage, or a command's help"},
	}, guiCommands()...)
}

// runFunc is a command's body, run once its flags are parsed.
type runFunc func(ctx context.Context, std stdio) int

// command is one entry of the registry.
type command struct {
	name    string
	aliases []string
	// args are the arguments of a command without a help, for its usage
	// line. A command with a help is listed as the help's usage lines say
	// (synopses), which name every flag (TestUsageNamesEveryFlag).
	args string
	// summary is its one line in the top-level usage.
	summary string
	// help is the command's whole help: usage, what it does, every flag,
	// examples and exit status. `gpucanary CMD --help` and `gpucanary
	// help CMD` print it on stdout and exit 0; wrong flags print it on
	// stderr and exit 2.
	help string
	// hidden leaves it out of the top-level usage (help; ui, which the
	// tray starts).
	hidden bool
	// rawArgs hands the arguments over unparsed, as positional arguments
	// (help takes a command's name, which may look like a flag), except a
	// first argument asking for help.
	rawArgs bool
	// operands is how many arguments besides flags it takes; run refuses
	// another count before the body runs.
	operands operands
	// showsBadInput runs the command even when a file a global flag names
	// is missing or malformed (globals.badInput): it shows that itself
	// (ui, the windows: a dialog). Every other command stops with exit
	// status 2.
	showsBadInput bool
	// readsNoInput runs the command whatever those files hold: it reads
	// none of them (help, version).
	readsNoInput bool
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
// runs it. Asked for help (-h, --help), it prints the command's help on
// stdout and exits 0; on a wrong flag or a wrong number of operands, one
// line saying what is wrong and the help go to stderr (exit 2).
func (c command) run(ctx context.Context, g *globals, args []string, std stdio) int {
	// Error messages name paths from the command line and the disk: they
	// reach the terminal as text (human.NewWriter), like everything
	// output/text prints.
	std.err = human.NewWriter(std.err)
	fs := flag.NewFlagSet(c.name, flag.ContinueOnError)
	fs.SetOutput(io.Discard) // its errors are printed below, naming flags as the help does
	fs.Usage = func() {}     // while parsing: the help is printed below, where it belongs
	body := c.setup(fs, g)
	parse := parseInterspersed
	if c.rawArgs {
		if len(args) > 0 && isHelpFlag(args[0]) {
			fmt.Fprint(std.out, c.helpText())
			return exitOK
		}
		parse = func(fs *flag.FlagSet, args []string) error { return fs.Parse(append([]string{"--"}, args...)) }
	}
	if err := parse(fs, args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprint(std.out, c.helpText())
			return exitOK
		}
		return c.usageError(std, flagError(err))
	}
	if msg := c.operands.check(fs.Args()); msg != "" {
		return c.usageError(std, msg)
	}
	if !c.readsNoInput && !c.showsBadInput {
		if errs := g.badInput(); len(errs) > 0 {
			for _, err := range errs {
				fmt.Fprintf(std.err, "gpucanary %s: %v\n", c.name, err)
			}
			return exitUsage
		}
	}
	return c.runParsed(ctx, g, fs, body, std)
}

// usageError says on stderr what is wrong with the command line, in one
// line, then the command's help; the exit status is 2.
func (c command) usageError(std stdio, msg string) int {
	fmt.Fprintf(std.err, "gpucanary %s: %s\n%s", c.name, msg, c.helpText())
	return exitUsage
}

// runParsed runs the body; a body that finds its arguments wrong calls
// fs.Usage, which now prints the help on stderr.
func (c command) runParsed(ctx context.Context, _ *globals, fs *flag.FlagSet, body runFunc, std stdio) int {
	fs.Usage = func() { fmt.Fprint(std.err, c.helpText()) }
	return body(ctx, std)
}

// helpText is the command's help, or its usage line when it has none.
func (c command) helpText() string {
	if c.help != "" {
		return c.help
	}
	return "Usage: gpucanary " + c.synopsis() + "\n"
}

func isHelpFlag(a string) bool { return a == "-h" || a == "-help" || a == "--help" }

// synopsis is the name and args: the usage line of a command without a
// help.
func (c command) synopsis() string {
	if c.args == "" {
		return c.name
	}
	return c.name + " " + c.args
}

// synopses are the command's forms as the top-level usage lists them: its
// help's usage lines ("Usage: gpucanary fix PATH [--dry-run] ...", then
// "       gpucanary fix --pin-index PATH ..."), less "gpucanary ", so the
// list says what the help says and cannot fall behind it. A form that is
// not of this command (version's "gpucanary --version", a global flag)
// is left out. Without a help, the synopsis.
func (c command) synopses() []string {
	if c.help == "" {
		return []string{c.synopsis()}
	}
	var forms []string
	for i, line := range strings.Split(c.help, "\n") {
		switch {
		case i == 0:
			line = strings.TrimPrefix(line, "Usage:")
		case !strings.HasPrefix(line, "       gpucanary "):
			return forms
		}
		form := strings.TrimPrefix(strings.TrimSpace(line), "gpucanary ")
		if form == c.name || strings.HasPrefix(form, c.name+" ") {
			forms = append(forms, form)
		}
	}
	return forms
}

// usageText is the top-level usage, its list of commands made from the
// registry.
func usageText() string {
	var list strings.Builder
	for _, c := range commands() {
		if c.hidden {
			continue
		}
		forms := c.synopses()
		for _, s := range forms[:len(forms)-1] {
			fmt.Fprintf(&list, "  %s\n", s)
		}
		if s := forms[len(forms)-1]; len(s) > 28 {
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
  --version        print the version

Run 'gpucanary help COMMAND' (or 'gpucanary COMMAND --help') for a
command's flags and examples.
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

// helpFlags is `help [COMMAND]`: the top-level usage, or COMMAND's help.
func helpFlags(fs *flag.FlagSet, _ *globals) runFunc {
	return func(_ context.Context, std stdio) int {
		if fs.NArg() == 0 {
			fmt.Fprint(std.out, usageText())
			return exitOK
		}
		c, ok := lookup(fs.Arg(0))
		if !ok {
			fmt.Fprintf(std.err, "gpucanary help: no command %q\n\n%s", fs.Arg(0), usageText())
			return exitUsage
		}
		fmt.Fprint(std.out, c.helpText())
		return exitOK
	}
}
