package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/gpucanary/gpucanary/monitor/config"
	"github.com/gpucanary/gpucanary/monitor/finding"
	"github.com/gpucanary/gpucanary/monitor/fix"
	"github.com/gpucanary/gpucanary/monitor/fixplan"
	"github.com/gpucanary/gpucanary/monitor/gpu"
	"github.com/gpucanary/gpucanary/monitor/health"
	"github.com/gpucanary/gpucanary/monitor/human"
	"github.com/gpucanary/gpucanary/monitor/procs"
	"github.com/gpucanary/gpucanary/monitor/pyenv"
	"github.com/gpucanary/gpucanary/monitor/shell"
	"github.com/gpucanary/gpucanary/monitor/store"
	"github.com/gpucanary/gpucanary/output/plantext"
)

// fixOptions are fix's flags.
type fixOptions struct {
	dry, yes, force, pin           bool
	variant, indexBase, llamaIndex string
	timeout                        time.Duration
}

func fixFlags(fs *flag.FlagSet, g *globals) runFunc {
	var o fixOptions
	fs.BoolVar(&o.dry, "dry-run", false, "show the plan and change nothing")
	fs.BoolVar(&o.yes, "yes", false, "do not ask before reinstalling")
	fs.StringVar(&o.variant, "variant", "", "CUDA variant to install (cu121, cu124, ...) instead of the one chosen")
	fs.StringVar(&o.indexBase, "index-base", "", "PyTorch index base URL (BASE/cuNNN is the index)")
	fs.StringVar(&o.llamaIndex, "llama-index-base", "", "llama-cpp-python CUDA wheel index base URL (BASE/cuNNN is the index)")
	fs.BoolVar(&o.force, "force", false, "reinstall even while processes of the environment run")
	o.timeout = 30 * time.Minute
	fs.Var((*positiveDuration)(&o.timeout), "timeout", "stop the installer after this long (above zero)")
	fs.BoolVar(&o.pin, "pin-index", false, "pin torch to the CUDA index in the uv project's pyproject.toml instead")
	g.simFlag(fs)
	// run has checked that there is one PATH (the registry's operands).
	return func(ctx context.Context, std stdio) int { return cmdFix(ctx, g, fs.Arg(0), o, std) }
}

// cmdFix reinstalls a CUDA torch in the environment at arg.
func cmdFix(ctx context.Context, g *globals, arg string, o fixOptions, std stdio) int {
	// The plan, the installer's output and the outcome name the
	// environment's path and whatever a package's build prints: shown as
	// text, never obeyed by the terminal.
	std.out = human.NewWriter(std.out)
	for _, f := range []struct{ flag, value string }{{"--index-base", o.indexBase}, {"--llama-index-base", o.llamaIndex}} {
		if f.value == "" {
			continue
		}
		if err := config.CheckIndexBase(f.value); err != nil {
			fmt.Fprintf(std.err, "gpucanary fix: %s %v\n", f.flag, err)
			return exitUsage
		}
	}
	path, resolved, err := envArg(arg, g.getenv)
	if err != nil {
		fmt.Fprintf(std.err, "gpucanary fix: %s\n", badPathMessage(path, err))
		return exitUsage
	}
	if resolved != "" {
		fmt.Fprintf(std.out, "Resolved %s\n", resolved)
	}
	svc := g.fixService()
	svc.Variant, svc.Force, svc.Timeout = o.variant, o.force, o.timeout
	base := o.indexBase
	if base == "" {
		base = g.cfg.IndexBase
	}
	svc.IndexBase = func() string { return base }
	if o.llamaIndex != "" {
		svc.LlamaIndexBase = func() string { return o.llamaIndex }
	}
	pr, err := svc.Prepare(ctx, path)
	if err != nil {
		fmt.Fprintf(std.err, "gpucanary fix: %v\n", err)
		if errors.Is(err, fixplan.ErrNoTorch) && !errors.Is(err, fixplan.ErrBadVariant) {
			return exitFound
		}
		return exitUsage
	}
	env, plan := pr.Env, pr.Plan
	if o.pin {
		msg, err := svc.PinIndex(pr)
		if err != nil {
			fmt.Fprintf(std.err, "gpucanary fix --pin-index: %v\n", err)
			return exitFound
		}
		fmt.Fprintln(std.out, strings.ToUpper(msg[:1])+msg[1:]+".")
		return exitOK
	}
	if svc.NothingToFix(pr) {
		for _, c := range svc.ClearLeftovers(pr) {
			fmt.Fprintf(std.out, "Removed %s, which an interrupted repair had left.\n", c)
		}
		if len(pr.Unrepaired) > 0 {
			// Not "nothing to fix": check calls these errors, and fix
			// repairs none of them.
			fmt.Fprintf(std.out, "Not fixed: gpucanary fix repairs none of the errors check finds in %s:\n", env.Path)
			writeUnrepaired(std.out, pr.Unrepaired)
			return exitFound
		}
		fmt.Fprintf(std.out, "Nothing to fix in %s: %s.\nTo reinstall anyway: gpucanary fix --force %s (or choose a build with --variant cuNNN).\n",
			env.Path, fix.HealthyText(env), shell.Quote(env.Path))
		return exitOK
	}
	plantext.Write(std.out, plan, pr.GPU.Simulated)
	if rec := svc.LastInterrupted(env.Path); rec != nil {
		fmt.Fprintf(std.out, "\nNote: the last repair of this environment, started %s, was interrupted before it finished (journal: %s).\n",
			rec.Started.Local().Format("2006-01-02 15:04"), rec.Path)
	}
	if plan.Blocked != "" {
		fmt.Fprintf(std.out, "\nNot fixed: %s.\n", plan.Blocked)
		if plan.Manual != "" {
			fmt.Fprintf(std.out, "To do it by hand:\n  %s\n", plan.Manual)
		}
		if len(pr.Unrepaired) > 0 {
			fmt.Fprintln(std.out, "\nThis plan does not repair these either:")
			writeUnrepaired(std.out, pr.Unrepaired)
		}
		return exitFound
	}
	if len(pr.Unrepaired) > 0 {
		fmt.Fprintln(std.out, "\nThis plan does not repair these (run gpucanary fix again once it is done, or their fix):")
		writeUnrepaired(std.out, pr.Unrepaired)
	}
	if o.dry {
		fmt.Fprintln(std.out, "\nDry run: nothing was changed.")
		return exitOK
	}
	if !o.force {
		if err := svc.InUse(ctx, env.Path); err != nil {
			fmt.Fprintf(std.out, "\nNot fixed: %s.\n", err)
			return exitFound
		}
	}
	question := "\nReinstall now? [y/N] "
	if len(plan.Removes) > 0 {
		question = "\nRemove it now? [y/N] "
	}
	if !o.yes && !confirm(std, question) {
		fmt.Fprintln(std.out, "Nothing was changed.")
		return exitFound
	}

	fmt.Fprintln(std.out)
	res, err := svc.Run(ctx, plan, func(l string) {
		fmt.Fprintf(std.out, "  │ %s\n", l)
		if s := fix.Progress(l); s != "" {
			fmt.Fprintf(std.err, "→ %s\n", s)
		}
	})
	if err != nil {
		fmt.Fprintf(std.err, "gpucanary fix: %v\n", err)
		return exitFound
	}
	fmt.Fprintln(std.out)
	if res.Fixed {
		what := plan.What()
		fmt.Fprintf(std.out, "Fixed: %s %s (CUDA %s) in %s, verified by reading it again (%s).\n", what, res.After[what], plan.CUDA, env.Path, res.Duration)
		for _, c := range res.Cleaned {
			fmt.Fprintf(std.out, "Removed %s, which an interrupted install had left.\n", c)
		}
	} else {
		fmt.Fprintf(std.out, "Not fixed: %s.\n", res.Why)
		if len(res.Cause) > 0 {
			fmt.Fprintln(std.out, "The installer said:")
			for _, l := range res.Cause {
				fmt.Fprintf(std.out, "  │ %s\n", l)
			}
		}
		fmt.Fprintf(std.out, "Installed now: %s\n", describeVersions(res.After))
		if len(res.Broken) > 0 {
			fmt.Fprintln(std.out, "The environment is half-installed (the installer was stopped between removing the old torch and installing the new one; pip does not undo that):")
			for _, b := range res.Broken {
				fmt.Fprintf(std.out, "  - %s\n", b)
			}
			fmt.Fprintf(std.out, "To finish the repair:\n  gpucanary fix %s\n", shell.Quote(env.Path))
		}
		if res.Rollback != "" {
			fmt.Fprintf(std.out, "To put back what was there before (%s):\n  %s\n", describeVersions(res.Before), res.Rollback)
		}
	}
	if res.Journal != "" {
		fmt.Fprintf(std.out, "Journal: %s\n", res.Journal)
	}
	if !res.Fixed {
		return exitFound
	}
	if hint := fix.PinHint(env.Path); hint != "" && plan.Package == "" {
		fmt.Fprintln(std.out, hint)
	}
	if len(pr.Unrepaired) > 0 {
		// Fixed what the plan repairs; the environment still has errors.
		fmt.Fprintf(std.out, "Still wrong in %s, which this repair does not fix:\n", env.Path)
		writeUnrepaired(std.out, pr.Unrepaired)
		return exitFound
	}
	return exitOK
}

// writeUnrepaired names findings fix did not repair, each with its fix
// command: the one check shows (fixplan.Advice.Fix), or none.
func writeUnrepaired(w io.Writer, fs []finding.Finding) {
	for _, f := range fs {
		fmt.Fprintf(w, "  %s: %s\n", f.Code, f.Message)
		if f.Fix != "" {
			fmt.Fprintf(w, "    fix: %s\n", f.Fix)
		}
	}
}

// installerGuardian is this program's executable when main runs it: a
// repair's installer runs under it (fix.GuardianMain). Tests that call
// run directly leave it empty and run installers directly.
var installerGuardian string

// fixService is the repair `fix` and the tray's windows share, wired to
// the GPU, the settings, the state directory, the process list and the
// health rules.
func (g *globals) fixService() fix.Service {
	s := fix.Service{
		GPU: func(ctx context.Context) gpu.State {
			b := g.openGPU()
			defer b.Close()
			return b.Snapshot(ctx)
		},
		IndexBase: func() string {
			if c, err := config.Load(g.configPath()); err == nil {
				return c.IndexBase // Settings… may have changed the mirror since this process started
			}
			return g.cfg.IndexBase
		},
		LlamaIndexBase: func() string {
			if c, err := config.Load(g.configPath()); err == nil {
				return c.LlamaIndexBase
			}
			return g.cfg.LlamaIndexBase
		},
		Verify: fix.Reinstallable(g.healthOptions()),
		Check: func(env *pyenv.Env, gs gpu.State) []finding.Finding {
			return health.CheckEnv(env, gs, g.healthOptions())
		},
		Processes: freshScan{},
		Guardian:  installerGuardian,
		Guards:    fixGuards{g.keeper()},
	}
	if dir, err := store.Dir(); err == nil {
		s.JournalDir = journalDir(dir)
	}
	return s
}

// journalDir is where repairs write their journals, in the state folder
// stateDir: the engine reads them from there (engine.Options.Journals).
func journalDir(stateDir string) string { return filepath.Join(stateDir, "journal") }

// freshScan lists processes with a scanner of its own for each call, so
// repairs that run at once never share one (a scanner is not safe for
// concurrent use).
type freshScan struct{}

func (freshScan) Scan(ctx context.Context) ([]procs.Proc, error) {
	return procs.NewSource(procs.Options{}).Scan(ctx)
}

func describeVersions(v map[string]string) string {
	if len(v) == 0 {
		return "no torch"
	}
	var parts []string
	for _, n := range []string{pyenv.Torch, pyenv.TorchVision, pyenv.TorchAudio, pyenv.LlamaCppPython} {
		if s, ok := v[n]; ok {
			parts = append(parts, n+" "+s)
		}
	}
	return strings.Join(parts, ", ")
}

// confirm asks a yes/no question on standard input.
func confirm(std stdio, q string) bool {
	fmt.Fprint(std.out, q)
	line, _ := bufio.NewReader(std.in).ReadString('\n')
	a := strings.ToLower(strings.TrimSpace(line))
	return a == "y" || a == "yes"
}
