package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/gpucanary/gpucanary/monitor/config"
	"github.com/gpucanary/gpucanary/monitor/fix"
	"github.com/gpucanary/gpucanary/monitor/gpu"
	"github.com/gpucanary/gpucanary/monitor/health"
	"github.com/gpucanary/gpucanary/monitor/human"
	"github.com/gpucanary/gpucanary/monitor/procs"
	"github.com/gpucanary/gpucanary/monitor/pyenv"
	"github.com/gpucanary/gpucanary/monitor/pyenv/uvproject"
	"github.com/gpucanary/gpucanary/monitor/store"
)

func init() { extraCommands["fix"] = cmdFix }

// cmdFix reinstalls a CUDA torch in one environment.
func cmdFix(ctx context.Context, g *globals, args []string, std stdio) int {
	fs := flag.NewFlagSet("fix", flag.ContinueOnError)
	fs.SetOutput(std.err)
	dry := fs.Bool("dry-run", false, "show the plan and change nothing")
	yes := fs.Bool("yes", false, "do not ask before reinstalling")
	variant := fs.String("variant", "", "CUDA variant to install (cu121, cu124, ...) instead of the one chosen")
	indexBase := fs.String("index-base", "", "PyTorch index base URL (BASE/cuNNN is the index)")
	force := fs.Bool("force", false, "reinstall even while processes of the environment run")
	timeout := fs.Duration("timeout", 30*time.Minute, "stop the installer after this long")
	pin := fs.Bool("pin-index", false, "pin torch to the CUDA index in the uv project's pyproject.toml instead")
	fs.StringVar(&g.gpuSim, "gpu-sim", g.gpuSim, "simulated GPU scenario file")
	fs.Usage = func() {
		fmt.Fprintln(std.err, "Usage: gpucanary fix PATH [--dry-run] [--yes] [--variant cuNNN] [--index-base URL] [--force] [--timeout D]\n       gpucanary fix --pin-index PATH [--variant cuNNN] [--index-base URL]")
	}
	if err := parseInterspersed(fs, args); err != nil {
		return exitUsage
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return exitUsage
	}
	path, err := resolveEnv(fs.Arg(0), g.getenv, std)
	if err != nil {
		fmt.Fprintf(std.err, "gpucanary fix: %v\n", err)
		return exitUsage
	}
	env, err := pyenv.Inspect(path)
	if err != nil {
		fmt.Fprintf(std.err, "gpucanary fix: %v\n", err)
		return exitUsage
	}
	base := *indexBase
	if base == "" {
		base = g.cfg.IndexBase
	}
	b := g.openGPU()
	defer b.Close()
	st := b.Snapshot(ctx)
	plan, err := fix.NewPlan(fix.Request{Env: env, GPU: st, Variant: *variant, IndexBase: base})
	if err != nil {
		fmt.Fprintf(std.err, "gpucanary fix: %v\n", err)
		return exitFound
	}
	if *pin {
		return pinIndex(env, plan, base, std)
	}
	printPlan(std, plan, st.Simulated)
	if last := lastInterrupted(env.Path); last != "" {
		fmt.Fprintf(std.out, "\n%s\n", last)
	}
	if plan.Blocked != "" {
		fmt.Fprintf(std.out, "\nNot fixed: %s.\n", plan.Blocked)
		return exitFound
	}
	if *dry {
		fmt.Fprintln(std.out, "\nDry run: nothing was changed.")
		return exitOK
	}
	if !*force {
		if running := envProcesses(ctx, env.Path); running != "" {
			fmt.Fprintf(std.out, "\nNot fixed: %s.\n", running)
			return exitFound
		}
	}
	if !*yes && !confirm(std, "\nReinstall now? [y/N] ") {
		fmt.Fprintln(std.out, "Nothing was changed.")
		return exitFound
	}

	fmt.Fprintln(std.out)
	res, err := repairEnv(ctx, g, env, plan, st, *timeout,
		func(l string) { fmt.Fprintf(std.out, "  │ %s\n", l) },
		func(s string) { fmt.Fprintf(std.err, "→ %s\n", s) })
	if err != nil {
		fmt.Fprintf(std.err, "gpucanary fix: %v\n", err)
		return exitFound
	}
	fmt.Fprintln(std.out)
	if res.Fixed {
		t := res.After[pyenv.Torch]
		fmt.Fprintf(std.out, "Fixed: torch %s (CUDA %s) in %s, verified by reading it again (%s).\n", t, plan.CUDA, env.Path, res.Duration)
		for _, c := range res.Cleaned {
			fmt.Fprintf(std.out, "Removed %s, which an interrupted install had left.\n", c)
		}
	} else {
		fmt.Fprintf(std.out, "Not fixed: %s.\n", res.Why)
		fmt.Fprintf(std.out, "Installed now: %s\n", describeVersions(res.After))
		if len(res.Broken) > 0 {
			fmt.Fprintln(std.out, "The environment is half-installed (the installer was stopped between removing the old torch and installing the new one; pip does not undo that):")
			for _, b := range res.Broken {
				fmt.Fprintf(std.out, "  - %s\n", b)
			}
			fmt.Fprintf(std.out, "To finish the repair:\n  gpucanary fix %s\n", fix.ShellQuote(env.Path))
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
	if hint := pinHint(env); hint != "" {
		fmt.Fprintln(std.out, hint)
	}
	return exitOK
}

// resolveEnv reads a path argument as pyenv.Resolve does (a project
// folder is its environment, an interpreter its prefix) and prints what it
// resolved to; a project with no environment yet is an error that says
// how to create it.
func resolveEnv(arg string, getenv func(string) string, std stdio) (string, error) {
	r, err := pyenv.Resolve(arg, pyenv.Where{Getenv: getenv})
	if err != nil {
		return "", err
	}
	if r.Env == "" {
		return "", fmt.Errorf("%s (%s) has no environment yet: create it with `%s` in that folder, then run this again", r.Project, r.Rule, r.Create)
	}
	if l := r.Line(); l != "" {
		fmt.Fprintf(std.out, "Resolved %s\n", l)
	}
	return r.Env, nil
}

// installerGuardian is this program's executable when main runs it: a
// repair's installer runs under it (fix.GuardianMain). Tests that call
// run directly leave it empty and run installers directly.
var installerGuardian string

// repairEnv runs a plan with a journal in the state directory and the
// health rules as the verification; `fix` and the tray share it.
func repairEnv(ctx context.Context, g *globals, env *pyenv.Env, plan fix.Plan, st gpu.State, timeout time.Duration, line, progress func(string)) (fix.Result, error) {
	var journal *fix.Journal
	if dir, err := store.Dir(); err == nil {
		journal = fix.NewJournal(filepath.Join(dir, "journal"), env.Path, time.Now())
	}
	return fix.Run(ctx, plan, env, fix.RunOptions{
		Timeout:  timeout,
		Journal:  journal,
		Guardian: installerGuardian,
		Line:     line,
		Progress: progress,
		Check: func(e *pyenv.Env) []string {
			var out []string
			for _, f := range health.CheckEnv(e, st, g.healthOptions()) {
				if f.Severity == health.SeverityError && health.FixedByReinstall(f.Code) {
					out = append(out, f.Code+": "+f.Message)
				}
			}
			return out
		},
	})
}

// repairer gives the tray the same plan and run as `gpucanary fix`.
type repairer struct{ g *globals }

func (r repairer) Plan(path string) (fix.Plan, error) {
	if res, err := pyenv.Resolve(path, pyenv.Where{Getenv: r.g.getenv}); err == nil && res.Env != "" {
		path = res.Env
	}
	env, err := pyenv.Inspect(path)
	if err != nil {
		return fix.Plan{}, err
	}
	index := r.g.cfg.IndexBase
	if c, err := config.Load(r.g.configPath()); err == nil {
		index = c.IndexBase // Settings… may have changed the mirror since this process started
	}
	b := r.g.openGPU()
	defer b.Close()
	return fix.NewPlan(fix.Request{Env: env, GPU: b.Snapshot(context.Background()), IndexBase: index})
}

func (r repairer) Run(ctx context.Context, p fix.Plan, line func(string)) (fix.Result, error) {
	env, err := pyenv.Inspect(p.Env)
	if err != nil {
		return fix.Result{}, err
	}
	if running := envProcesses(ctx, env.Path); running != "" {
		return fix.Result{}, errors.New(running)
	}
	b := r.g.openGPU()
	defer b.Close()
	return repairEnv(ctx, r.g, env, p, b.Snapshot(ctx), 30*time.Minute, line, nil)
}

// lastInterrupted says so when the last repair of env never finished
// (GPU Canary was killed during it), or "".
func lastInterrupted(env string) string {
	dir, err := store.Dir()
	if err != nil {
		return ""
	}
	rec, err := fix.LastJournal(filepath.Join(dir, "journal"), env)
	if err != nil || rec == nil || !rec.Interrupted {
		return ""
	}
	return fmt.Sprintf("Note: the last repair of this environment, started %s, was interrupted before it finished (journal: %s).",
		rec.Started.Local().Format("2006-01-02 15:04"), rec.Path)
}

func printPlan(std stdio, p fix.Plan, simulated bool) {
	fmt.Fprintf(std.out, "Plan for %s\n", p.Env)
	if p.Installer != "" {
		fmt.Fprintf(std.out, "  installer: %s\n", p.Installer)
	}
	if len(p.Packages) > 0 {
		var pins []string
		for _, pin := range p.Packages {
			pins = append(pins, pin.Name+" "+pin.Version)
		}
		fmt.Fprintf(std.out, "  packages:  %s\n", strings.Join(pins, ", "))
	}
	if p.Variant != "" {
		fmt.Fprintf(std.out, "  variant:   %s (CUDA %s)\n  index:     %s\n", p.Variant, p.CUDA, p.Index)
	}
	if p.Upgrade {
		fmt.Fprintln(std.out, "  NOTE:      this installs a newer torch than the one installed (see why below)")
	}
	if simulated {
		fmt.Fprintln(std.out, "  GPU:       simulated (--gpu-sim)")
	}
	for _, r := range p.Reasons {
		fmt.Fprintf(std.out, "  why:       %s\n", r)
	}
	if len(p.Argv) > 0 {
		fmt.Fprintf(std.out, "  command:   %s\n", p.Command())
	}
	for _, c := range p.Cleanup {
		fmt.Fprintf(std.out, "  cleanup:   %s (left by an interrupted install; removed once the new torch is verified)\n", c)
	}
}

func describeVersions(v map[string]string) string {
	if len(v) == 0 {
		return "no torch"
	}
	var parts []string
	for _, n := range []string{pyenv.Torch, pyenv.TorchVision, pyenv.TorchAudio} {
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

// envProcesses names the processes running from env, or "".
func envProcesses(ctx context.Context, env string) string {
	s := procs.NewSource(procs.Options{})
	ps, err := s.Scan(ctx)
	if err != nil {
		return ""
	}
	var names []string
	for _, p := range ps {
		inside := p.EnvPath == env
		if !inside && len(p.Cmdline) > 0 && strings.HasPrefix(p.Cmdline[0], env+string(filepath.Separator)) {
			inside = true
		}
		if inside && p.PID != os.Getpid() {
			names = append(names, fmt.Sprintf("PID %d (%s)", p.PID, human.Truncate(p.Command(), 60)))
		}
	}
	if len(names) == 0 {
		return ""
	}
	return fmt.Sprintf("%d process(es) run from %s and hold torch open: %s; stop them first, or pass --force", len(names), env, strings.Join(names, ", "))
}

// pinIndex pins torch (and its installed companions) to the plan's CUDA
// index in the uv project of env.
func pinIndex(env *pyenv.Env, plan fix.Plan, base string, std stdio) int {
	p, ok := uvproject.FindProject(env.Path)
	if !ok {
		fmt.Fprintf(std.err, "gpucanary fix --pin-index: no pyproject.toml beside or above %s: this environment is not in a uv project\n", env.Path)
		return exitFound
	}
	if plan.Variant == "" {
		fmt.Fprintf(std.err, "gpucanary fix --pin-index: no CUDA variant can be chosen (%s); pass --variant cuNNN\n", plan.Blocked)
		return exitFound
	}
	var pkgs []string
	for _, n := range []string{pyenv.Torch, pyenv.TorchVision, pyenv.TorchAudio} {
		if env.Packages[n] != nil {
			pkgs = append(pkgs, n)
		}
	}
	res, err := uvproject.PinIndex(p.Pyproject, base, plan.Variant, pkgs)
	if err != nil {
		fmt.Fprintf(std.err, "gpucanary fix --pin-index: %v\n", err)
		return exitFound
	}
	fmt.Fprintln(std.out, strings.ToUpper(res.Message[:1])+res.Message[1:]+".")
	return exitOK
}

// pinHint tells the user to pin the index when the environment is in a uv
// project that does not pin it, so the next `uv run` does not undo the fix.
func pinHint(env *pyenv.Env) string {
	p, ok := uvproject.FindProject(env.Path)
	if !ok {
		return ""
	}
	info, err := uvproject.ReadProject(p)
	if err != nil || strings.Contains(info.PinnedURL, "/cu") {
		return ""
	}
	return fmt.Sprintf("This environment is in a uv project (%s) that does not pin torch's index: the next `uv sync` or `uv run` may undo this. Run: gpucanary fix --pin-index %s", p.Pyproject, fix.ShellQuote(env.Path))
}
