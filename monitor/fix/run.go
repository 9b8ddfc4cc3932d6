package fix

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/gpucanary/gpucanary/monitor/finding"
	"github.com/gpucanary/gpucanary/monitor/fixjournal"
	"github.com/gpucanary/gpucanary/monitor/fixplan"
	"github.com/gpucanary/gpucanary/monitor/kb"
	"github.com/gpucanary/gpucanary/monitor/procs"
	"github.com/gpucanary/gpucanary/monitor/pyenv"
	"github.com/gpucanary/gpucanary/monitor/shell"
)

// RunOptions controls one repair.
type RunOptions struct {
	// Timeout bounds the installer (default 30 minutes).
	Timeout time.Duration
	// Line receives each line the installer prints, as it prints it.
	Line func(string)
	// Progress receives a short status ("downloading torch (2.4 GB)") when
	// the installer's output says what it is doing.
	Progress func(string)
	// Journal, when set, records the run.
	Journal *fixjournal.Journal
	// Recorded, when set, is called with the journal's path once it has
	// recorded the start of the run, and again once it has recorded the
	// end: a live engine reads it then (fix.Service.Recorded).
	Recorded func(journal string)
	// Check lists the error findings that remain about an environment;
	// the caller passes the health rules' (Reinstallable). nil checks
	// nothing beyond the build.
	Check func(*pyenv.Env) []finding.Finding
	// Env is the environment variables of the installer ("" = inherit).
	Env []string
	// Guardian is GPU Canary's own executable, run between it and the
	// installer so that the installer stops when GPU Canary dies, however
	// it dies (see GuardianMain, which that program's main must call).
	// Empty runs the installer directly.
	Guardian string
}

// ErrNoJournal is wrapped by Run's error when the repair's journal cannot
// be written: the installer is not started, since a repair that is cut
// short must leave a journal that says how to finish or undo it.
var ErrNoJournal = errors.New("the repair journal cannot be written")

// ErrBlocked is returned when a blocked plan is asked to run.
var ErrBlocked = errors.New("the plan cannot be carried out")

// Run carries out p on env: it runs the installer (its output streamed to
// o.Line), stops its whole process group on cancellation or timeout,
// reads the environment again and verifies the result. The journal, when
// given, gets the plan, the before state, the output and the after state
// whatever happens.
func Run(ctx context.Context, p fixplan.Plan, env *pyenv.Env, o RunOptions) (fixjournal.Result, error) {
	if p.Blocked != "" || len(p.Argv) == 0 {
		return fixjournal.Result{}, fmt.Errorf("%w: %s", ErrBlocked, p.Blocked)
	}
	if o.Timeout <= 0 {
		o.Timeout = 30 * time.Minute
	}
	start := time.Now()
	res := fixjournal.Result{Before: versions(env, p), Rollback: rollbackCommand(p, env)}
	if o.Journal != nil {
		if err := o.Journal.Begin(p, res.Before, res.Rollback); err != nil {
			return fixjournal.Result{Before: res.Before}, fmt.Errorf("%w, so the repair did not start and nothing was changed (free some space in the state folder, or make it writable, and run it again): %w", ErrNoJournal, err)
		}
		o.recorded()
	}
	var cause causeLines
	out := func(line string) {
		// An installer prints its index URL ("Looking in indexes: …"):
		// a mirror's token in it must reach neither the terminal nor
		// the journal.
		line = procs.RedactLine(line)
		cause.add(line)
		if o.Line != nil {
			o.Line(line)
		}
		if o.Progress != nil {
			if s := Progress(line); s != "" {
				o.Progress(s)
			}
		}
		if o.Journal != nil {
			o.Journal.Line(line)
		}
	}

	code, runErr := runInstaller(ctx, p.Argv, o.Env, o.Guardian, o.Timeout, out, func(pid int) {
		if o.Journal != nil {
			o.Journal.Installer(pid)
		}
	})
	res.ExitCode = code
	res.Duration = time.Since(start).Round(time.Millisecond).String()
	res.Interrupted = errors.Is(runErr, errStopped)
	if runErr != nil && !res.Interrupted {
		res.Cause = cause.lines()
	}

	after, readErr := pyenv.Inspect(env.Path)
	switch {
	case runErr != nil:
		res.Why = runErr.Error()
	case readErr != nil:
		res.Why = fmt.Sprintf("the environment cannot be read after the install: %v", readErr)
	default:
		res.Fixed, res.Why, res.Remaining = verify(p, after, o)
	}
	if res.Fixed && len(p.Cleanup) > 0 {
		// The stash was the only copy of the old torch until the new one
		// was verified; now it is garbage that pip warns about.
		res.Cleaned = removeStashes(env, p.Cleanup)
		after, readErr = pyenv.Inspect(env.Path)
	}
	if readErr == nil {
		res.After = versions(after, p)
		res.Broken = halfDone(after)
		if maps.Equal(res.Before, res.After) && len(res.Broken) == 0 {
			res.Rollback = "" // nothing changed: there is nothing to put back
		}
	}
	if o.Journal != nil {
		res.Journal = o.Journal.Path
		err := o.Journal.Finish(res)
		o.recorded()
		if err != nil {
			return res, err
		}
	}
	return res, nil
}

func (o RunOptions) recorded() {
	if o.Recorded != nil {
		o.Recorded(o.Journal.Path)
	}
}

// errStopped is wrapped by runInstaller's error when the run was
// cancelled or timed out and the installer was stopped.
var errStopped = errors.New("the installer was stopped")

// stopStep is one way of asking the installer to end, and how long it is
// given to (stopSteps, per platform).
type stopStep struct {
	name string
	send func(*exec.Cmd)
	wait time.Duration
}

// runInstaller runs argv in its own process group and returns its exit
// code. On cancellation or timeout it asks the whole group to stop the
// way an installer handles (stopSteps) before forcing it. started gets
// the PID of the group's leader: the installer, or its guardian.
func runInstaller(ctx context.Context, argv, env []string, guardian string, timeout time.Duration, out func(string), started func(pid int)) (int, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.Command(argv[0], argv[1:]...)
	if guardian != "" {
		cmd = guarded(guardian, argv)
	}
	if env != nil {
		cmd.Env = slices.Concat(env, cmd.Env)
	}
	cmd.Env = append(cmd.Environ(), "PYTHONUNBUFFERED=1", "PIP_PROGRESS_BAR=off", "PIP_NO_INPUT=1")
	setProcessGroup(cmd, guardian != "")
	pr, pw := io.Pipe()
	cmd.Stdout, cmd.Stderr = pw, pw
	startErr := make(chan error, 1)
	done := make(chan error, 1)
	go func() {
		if lockStartThread {
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
		}
		if err := cmd.Start(); err != nil {
			startErr <- err
			return
		}
		startErr <- nil
		done <- cmd.Wait()
	}()
	if err := <-startErr; err != nil {
		pw.Close()
		return -1, fmt.Errorf("starting %s: %w", argv[0], err)
	}
	if started != nil {
		started(cmd.Process.Pid)
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		sc := bufio.NewScanner(pr)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			out(sc.Text())
		}
		io.Copy(io.Discard, pr)
	}()
	var err error
	select {
	case err = <-done:
	case <-ctx.Done():
		how := stopInstaller(cmd, done)
		pw.Close()
		wg.Wait()
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return -1, fmt.Errorf("the installer ran longer than %s and was stopped (%s): %w", timeout, how, errStopped)
		}
		return -1, fmt.Errorf("the repair was interrupted and the installer stopped (%s): %w", how, errStopped)
	}
	pw.Close()
	wg.Wait()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return exit.ExitCode(), fmt.Errorf("the installer failed with exit status %d", exit.ExitCode())
	}
	if err != nil {
		return -1, fmt.Errorf("running %s: %w", argv[0], err)
	}
	return 0, nil
}

// stopInstaller walks stopSteps until the installer has exited and says
// which step ended it ("it exited on SIGINT").
func stopInstaller(cmd *exec.Cmd, done <-chan error) string {
	for _, step := range stopSteps {
		step.send(cmd)
		if step.wait == 0 {
			<-done
			return "it was killed with " + step.name
		}
		select {
		case <-done:
			return "it exited on " + step.name
		case <-time.After(step.wait):
		}
	}
	<-done
	return "it was killed"
}

// halfDone lists what is half-installed in env: pip's stash folders and
// torch or a companion present as files without its dist-info.
func halfDone(env *pyenv.Env) []string {
	var out []string
	add := func(ps []pyenv.Problem) {
		for _, p := range ps {
			if p.Kind == pyenv.ProblemPipStash || p.Kind == pyenv.ProblemMissingDistInfo {
				out = append(out, p.Message)
			}
		}
	}
	add(env.Problems)
	for _, n := range []string{pyenv.Torch, pyenv.TorchVision, pyenv.TorchAudio, pyenv.LlamaCppPython} {
		if p := env.Packages[n]; p != nil {
			add(p.Problems)
		}
	}
	return out
}

// removeStashes deletes the stash folders the plan listed, if they are
// still pip stashes directly in env's site-packages, and returns those
// removed. Anything else is left alone.
func removeStashes(env *pyenv.Env, stashes []string) []string {
	var removed []string
	for _, s := range stashes {
		if env.SitePackages == "" || filepath.Dir(s) != env.SitePackages || !strings.HasPrefix(filepath.Base(s), "~") {
			continue
		}
		fi, err := os.Lstat(s)
		if err != nil || !fi.IsDir() {
			continue
		}
		if err := os.RemoveAll(s); err == nil {
			removed = append(removed, s)
		}
	}
	return removed
}

// verify reads the result: fixed when torch is the planned CUDA build (or
// llama-cpp-python has its CUDA backend, for its plan) and no error
// finding the plan clears remains.
func verify(p fixplan.Plan, env *pyenv.Env, o RunOptions) (bool, string, []string) {
	var remaining []string
	if o.Check != nil {
		var left []finding.Finding
		for _, f := range o.Check(env) {
			if p.Clears(f.Code) {
				left = append(left, f)
			}
		}
		remaining = lines(left)
	}
	if p.Package == pyenv.LlamaCppPython {
		return verifyLlama(p, env, remaining)
	}
	if p.Undoes != "" {
		ok, why := putBack(p, env)
		return ok, why, remaining
	}
	t := env.Torch()
	switch {
	case t == nil:
		return false, "torch is not installed after the run", remaining
	case t.Build != pyenv.BuildCUDA:
		return false, fmt.Sprintf("torch is a %s build after the run, not CUDA %s", t.Build, p.CUDA), remaining
	case t.CUDA != p.CUDA:
		return false, fmt.Sprintf("torch is built for CUDA %s after the run, not the planned %s", t.CUDA, p.CUDA), remaining
	case kb.PublicVersion(t.Version) != kb.PublicVersion(p.Packages[0].Version):
		return false, fmt.Sprintf("torch is %s after the run, not the planned %s", t.Version, p.Packages[0].Version), remaining
	}
	for _, pin := range p.Packages[1:] {
		c := env.Packages[pin.Name]
		if c == nil || kb.PublicVersion(c.Version) != kb.PublicVersion(pin.Version) {
			got := "missing"
			if c != nil {
				got = c.Version
			}
			return false, fmt.Sprintf("%s is %s after the run, not the planned %s", pin.Name, got, pin.Version), remaining
		}
	}
	if len(remaining) > 0 {
		return false, fmt.Sprintf("torch is now %s, but a problem remains: %s", t.Version, remaining[0]), remaining
	}
	return true, "", nil
}

// verifyLlama reads the result of llama-cpp-python's plan: fixed when
// the planned release is there with its CUDA backend (a ggml-cuda
// library, as pyenv reads it) and nothing the plan clears remains.
func verifyLlama(p fixplan.Plan, env *pyenv.Env, remaining []string) (bool, string, []string) {
	l := env.Packages[pyenv.LlamaCppPython]
	switch {
	case l == nil:
		return false, "llama-cpp-python is not installed after the run", remaining
	case !slices.Contains(l.Backends, "cuda"):
		return false, fmt.Sprintf("llama-cpp-python %s has no CUDA backend after the run (%s)", l.Version, pyenv.Describe(pyenv.LlamaCppPython, l)), remaining
	case kb.PublicVersion(l.Version) != kb.PublicVersion(p.Packages[0].Version):
		return false, fmt.Sprintf("llama-cpp-python is %s after the run, not the planned %s", l.Version, p.Packages[0].Version), remaining
	case len(remaining) > 0:
		return false, fmt.Sprintf("llama-cpp-python is now %s with its CUDA backend, but a problem remains: %s", l.Version, remaining[0]), remaining
	}
	return true, "", nil
}

// planned are the packages whose versions a run of p records: torch and
// its companions, or llama-cpp-python for its plan.
func planned(p fixplan.Plan) []string {
	if p.Package == pyenv.LlamaCppPython {
		return []string{pyenv.LlamaCppPython}
	}
	return []string{pyenv.Torch, pyenv.TorchVision, pyenv.TorchAudio}
}

// versions records the exact versions of what p reinstalls: torch and
// its companions, or llama-cpp-python.
func versions(env *pyenv.Env, p fixplan.Plan) map[string]string {
	out := map[string]string{}
	for _, n := range planned(p) {
		if p := env.Packages[n]; p != nil {
			out[n] = p.Version
		}
	}
	return out
}

// rollbackCommand reinstalls what was there before: from the index of its
// local tag (+cpu, +cu121), or from the default index when it had none.
func rollbackCommand(p fixplan.Plan, env *pyenv.Env) string {
	if len(p.Removes) > 0 {
		return fixplan.RestoreCommand(p)
	}
	argv, _ := rollbackArgv(p, versions(env, p))
	if argv == nil {
		return ""
	}
	return shell.Join(procs.Redact(argv))
}

// rollbackArgv is the argv of rollbackCommand for the versions before,
// and the index tag it installs them from ("" for the default index).
func rollbackArgv(p fixplan.Plan, before map[string]string) ([]string, string) {
	if len(before) == 0 {
		return nil, ""
	}
	base := strings.TrimSuffix(p.Index, "/"+p.Variant)
	var specs []string
	tag := ""
	for _, n := range planned(p) {
		v, ok := before[n]
		if !ok {
			continue
		}
		specs = append(specs, n+"=="+v)
		if _, local, found := strings.Cut(v, "+"); found && tag == "" {
			tag = local
		}
	}
	argv := append([]string(nil), p.Argv...)
	// Replace the planned package specs and index in the same argv shape.
	var kept []string
	for i := 0; i < len(argv); i++ {
		a := argv[i]
		if a == "--index-url" {
			i++
			continue
		}
		if strings.Contains(a, "==") {
			continue
		}
		kept = append(kept, a)
	}
	kept = append(kept, specs...)
	if tag != "" {
		kept = append(kept, "--index-url", base+"/"+tag)
	}
	return kept, tag
}

// Progress turns one line of pip's or uv's output into a short status
// ("downloading torch-2.5.1+cu124-….whl (908.2 MB)"), or "" for a line that
// says nothing worth a status.
func Progress(line string) string {
	l := strings.TrimSpace(line)
	switch {
	case strings.HasPrefix(l, "Downloading "):
		// pip: "Downloading https://…/torch-2.5.1%2Bcu124-cp311-…whl (908.2 MB)"
		name := l[len("Downloading "):]
		size := ""
		if i := strings.LastIndex(name, " ("); i > 0 {
			name, size = name[:i], strings.TrimSuffix(name[i+2:], ")")
		}
		if i := strings.LastIndex(name, "/"); i >= 0 {
			name = name[i+1:]
		}
		name = strings.ReplaceAll(name, "%2B", "+")
		if size != "" {
			return "downloading " + name + " (" + size + ")"
		}
		return "downloading " + name
	case strings.HasPrefix(l, "Installing collected packages"):
		return "installing"
	case strings.HasPrefix(l, "Successfully installed"):
		return "installed"
	case strings.HasPrefix(l, "Prepared ") || strings.HasPrefix(l, "Resolved "):
		return strings.ToLower(l[:1]) + l[1:]
	case strings.HasPrefix(l, "Installed "):
		return "installed"
	}
	return ""
}
