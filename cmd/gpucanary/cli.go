package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"maps"
	"os"
	"slices"

	"github.com/gpucanary/gpucanary/monitor/config"
	"github.com/gpucanary/gpucanary/monitor/fixplan"
	"github.com/gpucanary/gpucanary/monitor/gpu"
	"github.com/gpucanary/gpucanary/monitor/health"
	"github.com/gpucanary/gpucanary/monitor/kb"
	"github.com/gpucanary/gpucanary/monitor/pyenv/envsearch"
	"github.com/gpucanary/gpucanary/monitor/pyenv/managers"
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
	// configErr is what is wrong with the settings file (loadConfig).
	configErr error
	log       *slog.Logger
	getenv    func(string) string
}

// run parses the global flags and runs one command; it returns the exit status.
func run(ctx context.Context, args []string, std stdio) int {
	if versionRequested(args) {
		printVersion(std.out)
		return exitOK
	}
	// Windows starts the program a notification's activator names with
	// -Embedding when a notification is clicked while GPU Canary is not
	// running: that is a start of the tray.
	if len(args) == 1 && args[0] == "-Embedding" {
		args = nil
	}
	g := &globals{getenv: os.Getenv}
	fs := flag.NewFlagSet("gpucanary", flag.ContinueOnError)
	fs.SetOutput(io.Discard) // its errors are printed below, naming flags as the usage does
	fs.Usage = func() {}     // printed below: on stdout when asked for
	fs.StringVar(&g.gpuSim, "gpu-sim", "", "simulated GPU scenario file")
	fs.StringVar(&g.config, "config", "", "settings file")
	fs.StringVar(&g.logLevel, "log-level", "warn", "log level")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprint(std.out, usageText())
			return exitOK
		}
		fmt.Fprintf(std.err, "gpucanary: %s\n%s", flagError(err), usageText())
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
	g.configErr = g.loadConfig()

	rest := fs.Args()
	if len(rest) == 0 {
		return runTray(ctx, g, std)
	}
	c, ok := lookup(rest[0])
	if !ok {
		fmt.Fprintf(std.err, "gpucanary: unknown command %q\n\n%s", rest[0], usageText())
		return exitUsage
	}
	return c.run(ctx, g, rest[1:], std)
}

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

// loadConfig reads the settings file into g.cfg. A missing file is the
// defaults, unless --config named it; a malformed one is the defaults and
// the error saying what is wrong, which a command reports (badInput) and
// the tray and windows show.
func (g *globals) loadConfig() error {
	g.cfg = config.Default()
	path := g.config
	if path == "" {
		p, err := config.Path()
		if err != nil {
			return nil // no config folder: the defaults, as on a first run
		}
		path = p
	} else if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("reading settings %s: the file does not exist (--config names it)", path)
	}
	cfg, err := config.Load(path)
	g.cfg = cfg
	return err
}

// badInput lists what is wrong with the files the global flags name and
// the settings file: a --gpu-sim scenario that is missing or malformed
// (the flag may follow the command's name, so it is read once the
// command's flags are parsed), a --config that is missing, a settings
// file that is malformed. A command stops at them with exit status 2;
// the tray and the windows run on with the defaults and show them.
func (g *globals) badInput() []error {
	var errs []error
	if g.configErr != nil {
		errs = append(errs, g.configErr)
	}
	if err := g.simErr(); err != nil {
		errs = append(errs, err)
	}
	return errs
}

// simErr is what is wrong with the --gpu-sim scenario file, nil when
// none is given or it is good.
func (g *globals) simErr() error {
	if g.gpuSim == "" {
		return nil
	}
	if _, err := gpu.ReadScenario(g.gpuSim); err != nil {
		return fmt.Errorf("%w (--gpu-sim or GPUCANARY_GPU_SIM names it)", err)
	}
	return nil
}

// configPath is the settings file in use.
func (g *globals) configPath() string {
	if g.config != "" {
		return g.config
	}
	p, _ := config.Path()
	return p
}

// openGPU opens the configured backend: the scenario file, else NVML,
// annotated with what kb knows (kb.Annotated), so that every command
// describes the GPU as the engine does.
func (g *globals) openGPU() gpu.Backend {
	return kb.Annotated(gpu.Open(gpu.Options{SimFile: g.gpuSim, Logger: g.log.With("component", "gpu")}))
}

// discoverOptions says where to look for environments: home, the
// configured roots and the environments added by hand.
func (g *globals) discoverOptions(paths []string) envsearch.Options {
	home, _ := os.UserHomeDir()
	cwd, _ := os.Getwd()
	o := envsearch.Options{
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
		if r, err := envsearch.ResolveArg(p, managers.Where{Getenv: getenv}); err == nil {
			p = r.Env
		}
		out = append(out, p)
	}
	return out
}

// discover lists the environments to look at: the paths given (each
// resolved: a project folder to its environment), else the discovered
// ones.
func (g *globals) discover(ctx context.Context, paths []string) []envsearch.Found {
	return g.search(ctx, paths).Found
}

// search is discover that also says whether the search was complete; it
// reads the environments remembered in the state folder when it was not.
func (g *globals) search(ctx context.Context, paths []string) envsearch.Discovery {
	o := g.discoverOptions(paths)
	if dir, err := store.Dir(); err == nil && len(paths) == 0 {
		if st, err := store.Open(dir).LoadState(); err == nil {
			o.Remembered = slices.Sorted(maps.Keys(st.Envs))
		}
	}
	return envsearch.Search(ctx, o)
}

// healthOptions are the rules' options: fix commands from the planner,
// from the configured indexes.
func (g *globals) healthOptions() health.Options {
	return health.Options{Getenv: g.getenv, Advice: fixplan.Advice{IndexBase: g.cfg.IndexBase, LlamaIndexBase: g.cfg.LlamaIndexBase}}
}
