package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"os"
	"slices"
	"strings"

	"github.com/gpucanary/gpucanary/monitor/config"
	"github.com/gpucanary/gpucanary/monitor/gpu"
	"github.com/gpucanary/gpucanary/monitor/health"
	"github.com/gpucanary/gpucanary/monitor/pyenv"
	"github.com/gpucanary/gpucanary/monitor/store"
)

// Exit statuses (DESIGN.md's command-line contract).
const (
	exitOK    = 0
	exitFound = 1 // error findings, or "not fixed"
	exitUsage = 2 // usage or internal error
)

type stdio struct {
	in       io.Reader
	out, err io.Writer
}

// globals are the flags every command shares.
type globals struct {
	gpuSim   string
	config   string
	logLevel string
	cfg      config.Config
	log      *slog.Logger
	getenv   func(string) string
}

const usage = `Usage: gpucanary [--gpu-sim FILE] [--config FILE] [COMMAND] [ARGS]

Without a command, GPU Canary starts in the system tray.

Commands:
  check [--json] [PATH...]     inspect environments and the GPU; exit 1 on error findings
  ps [--json] [--watch]        per-process GPU use and verdicts
  watch [--json] [PATH...]     run the engine headless and print each event
  fix PATH [--dry-run] [--yes] [--variant cuNNN] [--index-base URL]
                               reinstall a CUDA torch in the environment at PATH
  report [-o DIR]              write the evidence bundle
  version                      print the version

Global flags:
  --gpu-sim FILE   replace NVML with a simulated GPU (also GPUCANARY_GPU_SIM)
  --config FILE    settings file (default: the user config directory)
  --log-level L    debug, info, warn or error (default warn)
`

// run parses the global flags and runs one command; it returns the exit status.
func run(ctx context.Context, args []string, std stdio) int {
	g := &globals{getenv: os.Getenv}
	fs := flag.NewFlagSet("gpucanary", flag.ContinueOnError)
	fs.SetOutput(std.err)
	fs.Usage = func() { fmt.Fprint(std.err, usage) }
	fs.StringVar(&g.gpuSim, "gpu-sim", "", "simulated GPU scenario file")
	fs.StringVar(&g.config, "config", "", "settings file")
	fs.StringVar(&g.logLevel, "log-level", "warn", "log level")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitOK
		}
		return exitUsage
	}
	if g.gpuSim == "" {
		g.gpuSim = g.getenv("GPUCANARY_GPU_SIM")
	}
	var lvl slog.Level
	if err := lvl.UnmarshalText([]byte(g.logLevel)); err != nil {
		fmt.Fprintf(std.err, "gpucanary: --log-level %q: want debug, info, warn or error\n", g.logLevel)
		return exitUsage
	}
	g.log = slog.New(slog.NewTextHandler(std.err, &slog.HandlerOptions{Level: lvl}))
	g.loadConfig(std.err)

	rest := fs.Args()
	if len(rest) == 0 {
		return runTray(ctx, g, std)
	}
	cmd, cargs := rest[0], rest[1:]
	switch cmd {
	case "check":
		return cmdCheck(ctx, g, cargs, std)
	case "version":
		fmt.Fprintln(std.out, "gpucanary", version)
		return exitOK
	case "help", "-h", "--help":
		fmt.Fprint(std.out, usage)
		return exitOK
	}
	if c, ok := extraCommands[cmd]; ok {
		return c(ctx, g, cargs, std)
	}
	fmt.Fprintf(std.err, "gpucanary: unknown command %q\n\n%s", cmd, usage)
	return exitUsage
}

// extraCommands are registered by the files that implement them.
var extraCommands = map[string]func(context.Context, *globals, []string, stdio) int{}

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

func (g *globals) loadConfig(stderr io.Writer) {
	path := g.config
	if path == "" {
		p, err := config.Path()
		if err != nil {
			g.cfg = config.Default()
			return
		}
		path = p
	}
	cfg, err := config.Load(path)
	if err != nil {
		fmt.Fprintf(stderr, "gpucanary: warning: %v (using the default settings)\n", err)
	}
	g.cfg = cfg
}

// configPath is the settings file in use.
func (g *globals) configPath() string {
	if g.config != "" {
		return g.config
	}
	p, _ := config.Path()
	return p
}

// openGPU opens the configured backend: the scenario file, else NVML.
func (g *globals) openGPU() gpu.Backend {
	return gpu.Open(gpu.Options{SimFile: g.gpuSim, Logger: g.log.With("component", "gpu")})
}

// discoverOptions says where to look for environments: home, the
// configured roots and the environments added by hand.
func (g *globals) discoverOptions(paths []string) pyenv.DiscoverOptions {
	home, _ := os.UserHomeDir()
	cwd, _ := os.Getwd()
	o := pyenv.DiscoverOptions{
		Paths: paths, Getenv: g.getenv, Cwd: cwd, Home: home,
		Roots: append(append([]string{}, g.cfg.Roots...), addedEnvs(g.cfg.Envs, g.getenv)...), Logger: g.log.With("component", "pyenv"),
	}
	if !g.cfg.DiscoverHome {
		o.Home = ""
	}
	return o
}

// addedEnvs are the environments added by hand, each resolved (a project
// folder added with "Add environment…" is its environment).
func addedEnvs(paths []string, getenv func(string) string) []string {
	out := make([]string, 0, len(paths))
	for _, p := range paths {
		if r, err := pyenv.Resolve(p, pyenv.Where{Getenv: getenv}); err == nil && r.Env != "" {
			p = r.Env
		}
		out = append(out, p)
	}
	return out
}

// discover lists the environments to look at: the paths given (each
// resolved: a project folder to its environment), else the discovered
// ones.
func (g *globals) discover(ctx context.Context, paths []string) []pyenv.Found {
	return g.search(ctx, paths).Found
}

// search is discover that also says whether the search was complete; it
// reads the environments remembered in the state folder when it was not.
func (g *globals) search(ctx context.Context, paths []string) pyenv.Discovery {
	o := g.discoverOptions(paths)
	if dir, err := store.Dir(); err == nil && len(paths) == 0 {
		if st, err := store.Open(dir).LoadState(); err == nil {
			o.Remembered = slices.Sorted(maps.Keys(st.Envs))
		}
	}
	return pyenv.Search(ctx, o)
}

func (g *globals) healthOptions() health.Options {
	return health.Options{IndexBase: g.cfg.IndexBase, Getenv: g.getenv}
}

// colour reports whether w is a terminal that should get colour.
func colour(w io.Writer, getenv func(string) string) bool {
	f, ok := w.(*os.File)
	if !ok || getenv("NO_COLOR") != "" || strings.EqualFold(getenv("TERM"), "dumb") {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}
