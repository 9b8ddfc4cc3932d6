package fix

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/gpucanary/gpucanary/monitor/finding"
	"github.com/gpucanary/gpucanary/monitor/fixjournal"
	"github.com/gpucanary/gpucanary/monitor/fixplan"
	"github.com/gpucanary/gpucanary/monitor/gpu"
	"github.com/gpucanary/gpucanary/monitor/human"
	"github.com/gpucanary/gpucanary/monitor/procs"
	"github.com/gpucanary/gpucanary/monitor/pyenv"
	"github.com/gpucanary/gpucanary/monitor/pyenv/uvproject"
	"github.com/gpucanary/gpucanary/monitor/shell"
)

// Scanner lists the processes running now; the in-use guard asks it.
// procs' process reader satisfies it.
type Scanner interface {
	Scan(ctx context.Context) ([]procs.Proc, error)
}

// Service is the repair as `gpucanary fix` and the tray's windows both run
// it: a plan from the environment as it is on disk and the GPU as it is
// now, a refusal while programs of the environment run, the installer with
// a journal, and a verification by the health rules it is given. What it
// needs from above (the GPU backend, the settings, the rules, the process
// list) comes in as fields, so fix imports none of them.
type Service struct {
	// GPU reads the GPU state now; nil means no driver answered.
	GPU func(ctx context.Context) gpu.State
	// IndexBase is the PyTorch index base ("" = DefaultIndexBase). It is
	// asked at every plan, so a mirror changed in Settings applies at
	// once; nil means the official index.
	IndexBase func() string
	// LlamaIndexBase is the base of llama-cpp-python's CUDA wheel
	// indexes ("" = kb.LlamaIndexBase), asked at every plan as IndexBase
	// is; nil means the official one.
	LlamaIndexBase func() string
	// Variant overrides the chosen CUDA variant ("cu121").
	Variant string
	// Verify lists the error findings a repair fixes (finding.Repaired)
	// that are raised about env on the GPU g: cmd passes the health
	// rules' (Reinstallable). A plan is chosen by them, and a run must
	// clear those its plan clears. nil checks the build only.
	Verify func(env *pyenv.Env, g gpu.State) []finding.Finding
	// Check lists every finding about env on g (the health rules'), so
	// that the errors a plan does not repair are named with their fix
	// (Prepared.Unrepaired); nil names none.
	Check func(env *pyenv.Env, g gpu.State) []finding.Finding
	// Processes lists the running processes for the in-use guard; nil
	// skips the guard. Runs at once may call it at once.
	Processes Scanner
	// Force runs the installer even while processes of the environment
	// run (--force).
	Force bool
	// JournalDir is where each run's journal is written; "" writes none.
	// The live engine reads the journals there and records each repair
	// as events (monitor/engine's repairs).
	JournalDir string
	// Recorded, when set, is told a journal's path each time it has
	// recorded a run's start or end, so that the engine can read it at
	// once rather than at its next poll (the tray's windows process sends
	// it over the link).
	Recorded func(journal string)
	// Guardian is GPU Canary's own executable, run between it and the
	// installer so that the installer stops if GPU Canary dies (see
	// GuardianMain); "" runs the installer directly.
	Guardian string
	// Timeout bounds the installer; 0 means 30 minutes.
	Timeout time.Duration
	// Guards, when set, lifts an environment's guard before the install
	// and sets it again after (guarded.go); nil leaves guards alone.
	Guards Guards
}

// Prepared is a plan with what it was made from.
type Prepared struct {
	// Env is the environment as read when the plan was made.
	Env *pyenv.Env
	// GPU is the GPU state the plan was made for.
	GPU  gpu.State
	Plan fixplan.Plan
	// Findings are the error findings Plan clears that are raised about
	// Env on GPU now (by Verify).
	Findings []finding.Finding
	// Healthy is true when Verify was asked and raised none of the
	// findings a repair fixes: there is nothing for a reinstall to fix,
	// by the tool's own rules.
	Healthy bool
	// Unrepaired are the error findings about Env (by Check) that Plan
	// does not clear, or all of them when nothing is to be fixed: fix
	// names each with its command, and does not say "nothing to fix".
	Unrepaired []finding.Finding
}

// ErrNothingToFix is wrapped by Plan's error for a healthy environment
// (Prepared.Healthy), unless a reinstall is asked for anyway (Force, or a
// Variant chosen).
var ErrNothingToFix = errors.New("nothing to fix")

// Prepare reads the environment at path and the GPU, and plans the
// reinstall. Its errors are pyenv's when the environment cannot be read,
// and wrap ErrNoTorch when it holds no torch; a plan that cannot be carried
// out is no error (Plan.Blocked says why).
func (s Service) Prepare(ctx context.Context, path string) (Prepared, error) {
	env, err := pyenv.Inspect(path)
	if err != nil {
		return Prepared{}, err
	}
	g := s.gpu(ctx)
	req := fixplan.Request{Env: env, GPU: g, Variant: s.Variant, IndexBase: s.indexBase(), LlamaIndexBase: s.llamaIndexBase()}
	var repairable []finding.Finding
	if s.Verify != nil {
		repairable = s.Verify(env, g)
	}
	if s.Variant == "" && slices.ContainsFunc(repairable, func(f finding.Finding) bool { return finding.FixedByLlamaReinstall(f.Code) }) &&
		!slices.ContainsFunc(repairable, func(f finding.Finding) bool { return finding.FixedByReinstall(f.Code) }) {
		// Only llama-cpp-python's build is wrong: its plan, whatever
		// torch is (none at all, often). A torch that is wrong too is
		// repaired first, and this one named as not repaired yet.
		if p, err := fixplan.NewLlamaPlan(req); err == nil {
			return s.prepared(env, g, p, repairable), nil
		}
	}
	p, err := fixplan.NewPlan(req)
	if errors.Is(err, fixplan.ErrNoTorch) || (err == nil && env.Torch() == nil && p.Recreate == "") {
		// Gone because a repair was cut short: its journal says what to
		// finish, better than pip's stash (a plan from it, Restores),
		// which says only what the repair was replacing.
		if rec := s.lastUnfinished(env.Path); rec != nil {
			if rp, ok := fixplan.Resume(req, rec.Plan, rec.Path, rec.Started); ok {
				p, err = rp, nil
			}
		}
	}
	if err != nil {
		return Prepared{}, err
	}
	return s.prepared(env, g, withStashOfRecord(env, p), repairable), nil
}

// prepared is p made for env on g, with the findings it clears among
// those a repair fixes (repairable, Verify's), and those it leaves
// (Check's errors).
func (s Service) prepared(env *pyenv.Env, g gpu.State, p fixplan.Plan, repairable []finding.Finding) Prepared {
	pr := Prepared{Env: env, GPU: g, Plan: p}
	if s.Verify != nil {
		pr.Healthy = len(repairable) == 0
		for _, f := range repairable {
			if p.Clears(f.Code) {
				pr.Findings = append(pr.Findings, f)
			}
		}
	}
	if s.Check != nil {
		nothing := s.NothingToFix(pr)
		for _, f := range s.Check(env, g) {
			if f.Severity == finding.SeverityError && (nothing || !p.Clears(f.Code)) {
				pr.Unrepaired = append(pr.Unrepaired, f)
			}
		}
	}
	return pr
}

// Plan is the plan Prepare makes: what the tray shows before it asks. A
// healthy environment has none, unless a reinstall is asked for anyway:
// the error wraps ErrNothingToFix and says so.
func (s Service) Plan(ctx context.Context, path string) (fixplan.Plan, error) {
	pr, err := s.Prepare(ctx, path)
	if err == nil && s.NothingToFix(pr) {
		return pr.Plan, fmt.Errorf("%w in %s: %s", ErrNothingToFix, pr.Env.Path, HealthyText(pr.Env))
	}
	return pr.Plan, err
}

// NothingToFix reports whether pr's environment is healthy and no
// reinstall was asked for anyway (Force, a Variant): then no plan runs.
// An environment whose interpreter cannot run is never healthy, whatever
// its torch: its blocked plan says how to make it again.
func (s Service) NothingToFix(pr Prepared) bool {
	return pr.Healthy && pr.Plan.Recreate == "" && pr.Plan.Resumes == "" && pr.Plan.Restores == "" && !s.Force && s.Variant == ""
}

// HealthyText says why a healthy environment needs no reinstall, in one
// sentence without a final stop.
func HealthyText(env *pyenv.Env) string {
	what := "its torch"
	if t := env.Torch(); t != nil {
		what = "torch " + t.Version + " (" + t.BuildText() + ")"
	}
	return what + " raises none of the findings a CUDA torch reinstall fixes on this machine"
}

// Run carries out p: it refuses while programs of the environment run
// (unless Force), reads the environment again, runs the installer with
// its output sent to line, and verifies the result against the GPU as it
// is now. The journal, when JournalDir is set, records the run whatever
// happens.
func (s Service) run(ctx context.Context, p fixplan.Plan, line func(string)) (fixjournal.Result, error) {
	env, err := pyenv.Inspect(p.Env)
	if err != nil {
		return fixjournal.Result{}, err
	}
	if !s.Force {
		if err := s.InUse(ctx, env.Path); err != nil {
			return fixjournal.Result{}, err
		}
	}
	g := s.gpu(ctx)
	o := RunOptions{Timeout: s.Timeout, Line: line, Guardian: s.Guardian, Recorded: s.Recorded}
	if s.JournalDir != "" {
		o.Journal = fixjournal.NewJournal(s.JournalDir, env.Path, time.Now())
	}
	if s.Verify != nil {
		o.Check = func(e *pyenv.Env) []finding.Finding { return s.Verify(e, g) }
	}
	return Run(ctx, p, env, o)
}

// lastUnfinished is the journal of the last repair of env when it did
// not get to its end (JournalRecord.Unfinished), or nil.
func (s Service) lastUnfinished(env string) *fixjournal.JournalRecord {
	if s.JournalDir == "" {
		return nil
	}
	rec, err := fixjournal.LastJournal(s.JournalDir, env)
	if err != nil || !rec.Unfinished() {
		return nil
	}
	return rec
}

// ClearLeftovers removes pip's stash folders (~orch) from a healthy
// environment when the last repair of it did not finish: that repair's
// installer left them, and a torch installed since (by hand, or by pip
// run again) works without them, so there is nothing to reinstall and
// no reason to keep them. It returns what it removed.
func (s Service) ClearLeftovers(pr Prepared) []string {
	if !pr.Healthy || len(pr.Plan.Cleanup) == 0 || s.lastUnfinished(pr.Env.Path) == nil {
		return nil
	}
	return removeStashes(pr.Env, pr.Plan.Cleanup)
}

// LastInterrupted is the journal of the last repair of env when that
// repair never finished (GPU Canary was killed during it), or nil.
func (s Service) LastInterrupted(env string) *fixjournal.JournalRecord {
	if s.JournalDir == "" {
		return nil
	}
	rec, err := fixjournal.LastJournal(s.JournalDir, env)
	if err != nil || rec == nil || !rec.Interrupted {
		return nil
	}
	return rec
}

// InUseError is the refusal to reinstall torch under running programs:
// they hold the old files open, and a program started from a half-replaced
// torch fails in ways that look like a bug of its own.
type InUseError struct {
	Env string
	// Processes names each one: "PID 4242 (python train.py)".
	Processes []string
	// Procs are the processes themselves, for a view that lists them
	// its own way or offers to stop them (their PIDs and start times).
	Procs []procs.Proc
}

func (e *InUseError) Error() string {
	return fmt.Sprintf("%d process(es) run from %s and hold torch open: %s; stop them first, or pass --force",
		len(e.Processes), e.Env, strings.Join(e.Processes, ", "))
}

// InUse returns an *InUseError naming the processes that run from env
// (this one aside), or nil. A process runs from env when it was attributed
// to it, or its program lies inside it: the program as started, resolved
// against the process's working directory (`cd /work && env/bin/python`,
// `./python` from bin/), or its executable file (procs.Proc.Inside), or
// a runtime library it has mapped, each with symlinks resolved on both
// sides (runsFrom). A list that cannot be read refuses nothing: the
// guard is a courtesy, not a lock.
func (s Service) InUse(ctx context.Context, env string) error {
	if s.Processes == nil {
		return nil
	}
	ps, err := s.Processes.Scan(ctx)
	if err != nil {
		return nil
	}
	var names []string
	running := inUse(ps, env)
	for _, p := range running {
		names = append(names, fmt.Sprintf("PID %d (%s)", p.PID, human.Truncate(p.Command(), 60)))
	}
	if len(names) == 0 {
		return nil
	}
	return &InUseError{Env: env, Processes: names, Procs: running}
}

// RunAnyway is Run while programs of the environment run (Force, as
// `gpucanary fix --force`): the windows' "Repair anyway", once the person
// has been shown them.
func (s Service) RunAnyway(ctx context.Context, p fixplan.Plan, line func(string)) (fixjournal.Result, error) {
	s.Force = true
	return s.Run(ctx, p, line)
}

// PinIndex pins torch, and whichever of its companions are installed, to
// the plan's CUDA index in the uv project around the environment, so the
// next `uv sync` or `uv run` keeps the CUDA build. It returns what was
// done, in uvproject's words.
func (s Service) PinIndex(pr Prepared) (string, error) {
	proj, ok := uvproject.FindProject(pr.Env.Path)
	if !ok {
		return "", fmt.Errorf("no pyproject.toml beside or above %s: this environment is not in a uv project", pr.Env.Path)
	}
	if pr.Plan.Variant == "" {
		return "", fmt.Errorf("no CUDA variant can be chosen (%s); pass --variant cuNNN", pr.Plan.Blocked)
	}
	var pkgs []string
	for _, n := range []string{pyenv.Torch, pyenv.TorchVision, pyenv.TorchAudio} {
		if pr.Env.Packages[n] != nil {
			pkgs = append(pkgs, n)
		}
	}
	res, err := uvproject.PinIndex(proj.Pyproject, s.indexBase(), pr.Plan.Variant, pkgs)
	if err != nil {
		return "", err
	}
	return res.Message, nil
}

// PinHint tells the user to pin torch's index when the environment at env
// is in a uv project that does not pin it, so that the next `uv run` does
// not undo a repair; "" otherwise.
func PinHint(env string) string {
	p, ok := uvproject.FindProject(env)
	if !ok {
		return ""
	}
	info, err := uvproject.ReadProject(p)
	if err != nil || strings.Contains(info.PinnedURL, "/cu") {
		return ""
	}
	return fmt.Sprintf("This environment is in a uv project (%s) that does not pin torch's index: the next `uv sync` or `uv run` may undo this. Run: gpucanary fix --pin-index %s", p.Pyproject, shell.Quote(env))
}

func (s Service) gpu(ctx context.Context) gpu.State {
	if s.GPU == nil {
		return gpu.State{}
	}
	return s.GPU(ctx)
}

func (s Service) llamaIndexBase() string {
	if s.LlamaIndexBase != nil {
		return s.LlamaIndexBase()
	}
	return ""
}

func (s Service) indexBase() string {
	if s.IndexBase != nil {
		if b := s.IndexBase(); b != "" {
			return b
		}
	}
	return fixplan.DefaultIndexBase
}
