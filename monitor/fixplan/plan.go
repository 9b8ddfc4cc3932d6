// Package fixplan plans the repair of an environment whose torch is not
// the CUDA build it should be: an install of torch and its installed
// companions, pinned exactly, from the right download.pytorch.org index,
// which brings the NVIDIA runtime wheels a CUDA torch requires and leaves
// every other package that is satisfied alone; or, for the very builds
// that are installed, a forced reinstall that repairs their files
// (installForm).
//
// A Plan is data a person can read before anything runs: the installer, the
// exact argv (never a shell string), the packages and why each choice was
// made. Health findings show Plan.Command() as their fix (through Advice,
// which the rules ask directly: the planner sits below them), so the
// advice and the repair can never disagree. Running a plan is
// monitor/fix's job.
package fixplan

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"

	"github.com/gpucanary/gpucanary/monitor/finding"
	"github.com/gpucanary/gpucanary/monitor/gpu"
	"github.com/gpucanary/gpucanary/monitor/kb"
	"github.com/gpucanary/gpucanary/monitor/procs"
	"github.com/gpucanary/gpucanary/monitor/pyenv"
	"github.com/gpucanary/gpucanary/monitor/pyenv/managers"
	"github.com/gpucanary/gpucanary/monitor/pyenv/uvproject"
	"github.com/gpucanary/gpucanary/monitor/shell"
)

// DefaultIndexBase is where official torch wheels live; BASE/TAG is an index.
const DefaultIndexBase = "https://download.pytorch.org/whl"

// Request is what a plan is made from.
type Request struct {
	Env *pyenv.Env
	GPU gpu.State
	// Variant overrides the chosen CUDA variant ("cu121").
	Variant string
	// IndexBase replaces DefaultIndexBase (a mirror).
	IndexBase string
	// LlamaIndexBase replaces kb.LlamaIndexBase, where llama-cpp-python's
	// CUDA wheels are (BASE/cuNNN), for NewLlamaPlan.
	LlamaIndexBase string
	// WheelPlatform is the wheel platform llama-cpp-python's wheels are
	// chosen for ("" is this host's, kb.LlamaHostPlatform).
	WheelPlatform string
	// LookPath finds executables (uv); nil means exec.LookPath.
	LookPath func(string) (string, error)
	// HostPython is the interpreter used for `-m pip --python ENV` when the
	// environment has no pip of its own; "" means the platform's launchers
	// (managers.HostLaunchers: python3 on Linux; py -3, then python on Windows).
	HostPython string
}

// Pin is one package at one exact version.
type Pin struct {
	Name    string `json:"name"`
	Version string `json:"version"`
}

// Plan is a reinstall a person can read before it runs.
type Plan struct {
	Env string `json:"env"`
	// Package is what the plan reinstalls: "" for torch and its
	// companions (NewPlan), llama-cpp-python for NewLlamaPlan.
	Package string `json:"package,omitempty"`
	// Installer is "uv", "pip" or "conda".
	Installer string `json:"installer"`
	// Argv is the command to run; empty when Blocked.
	Argv     []string `json:"argv,omitempty"`
	Packages []Pin    `json:"packages"`
	// Variant is the index tag ("cu124") and CUDA its CUDA version.
	Variant string `json:"variant"`
	CUDA    string `json:"cuda"`
	// Index is where the pins come from; for a removal, where the
	// removed build comes from, which its rollback installs it from.
	Index string `json:"index"`
	// Removes are the copies the plan uninstalls from RemoveFrom, a
	// folder import searches before the environment's own site-packages
	// (shadow.go); Packages is then what import loads once they are gone.
	Removes    []Pin  `json:"removes,omitempty"`
	RemoveFrom string `json:"remove_from,omitempty"`
	// Upgrade is true when no build of the installed torch runs on this
	// machine's GPUs and driver and the plan proposes a newer release
	// instead; it is never done silently: Consequences say what else
	// changes.
	Upgrade bool `json:"upgrade,omitempty"`
	// Downgrade is true when neither the installed torch nor any newer
	// release has code for a GPU here and the plan proposes the last
	// release that does (kb.LastReleaseFor): as with an upgrade,
	// Consequences say what else changes.
	Downgrade bool `json:"downgrade,omitempty"`
	// Consequences say what the plan changes besides the build of torch:
	// an upgrade's other releases, an editable install (a source
	// checkout) that the installer uninstalls and replaces.
	Consequences []string `json:"consequences,omitempty"`
	// SameBuild is true when the plan reinstalls exactly what is
	// installed: that repairs broken files and nothing else, so the rules
	// propose it for nothing but a broken install.
	SameBuild bool `json:"same_build,omitempty"`
	// Reasons says why each choice was made, in order.
	Reasons []string `json:"reasons"`
	// Warnings say what about a variant asked for by hand cannot run
	// here, or could not be checked; the plan still runs if asked to.
	Warnings []string `json:"warnings,omitempty"`
	// Blocked says why no command can be proposed; Argv is empty then.
	Blocked string `json:"blocked,omitempty"`
	// Manual, on a blocked plan, is the command that fixes it by hand
	// and GPU Canary does not run (a build from source of
	// llama-cpp-python with CUDA), for a shell.
	Manual string `json:"manual,omitempty"`
	// Recreate is the command that makes the environment again over its
	// packages when its interpreter is missing or runs another Python
	// than theirs (interpreter.go): the plan is Blocked, and no
	// reinstall can run until this has.
	Recreate string `json:"recreate,omitempty"`
	// Cleanup are pip's stash folders an earlier interrupted install left
	// (~orch, ~orch-2.5.1.dist-info): the run removes them once the new
	// torch is verified, never before (until then they may be the only
	// copy of the old one).
	Cleanup []string `json:"cleanup,omitempty"`
	// Resumes is the journal of the interrupted repair this plan
	// finishes, when torch is gone because of it (Resume).
	Resumes string `json:"resumes,omitempty"`
	// Restores is pip's stash of the torch an interrupted install of the
	// user's own removed (~orch-2.5.1+cpu.dist-info), when the plan was made
	// from it: torch is gone, no journal says what was being installed,
	// and the stash's version is the release the plan installs.
	Restores string `json:"restores,omitempty"`
	// Undoes is the journal of the repair this plan takes back
	// (fix.UndoPlan): it puts back the exact versions that repair
	// replaced, whatever their build, and is verified by those versions.
	Undoes string `json:"undoes,omitempty"`
}

// Command is Argv as one line a person can paste into their shell. Its
// secrets are redacted as every command line GPU Canary shows is
// (procs.Redact): a mirror's password in the index URL shows as
// user:***@host, here, in findings, in the journal and in the tray. Argv,
// which runs, keeps it.
func (p Plan) Command() string { return shell.Join(procs.Redact(p.Argv)) }

// Clears reports whether carrying out p clears a finding with this code:
// one a torch reinstall fixes, or, for llama-cpp-python's plan, one its
// reinstall fixes.
func (p Plan) Clears(code string) bool {
	if p.Package == pyenv.LlamaCppPython {
		return finding.FixedByLlamaReinstall(code)
	}
	return finding.FixedByReinstall(code)
}

// What names what p reinstalls: "torch" or "llama-cpp-python".
func (p Plan) What() string {
	if p.Package == "" {
		return pyenv.Torch
	}
	return p.Package
}

// ShownIndex is Index as it may be shown: a password in it redacted.
func (p Plan) ShownIndex() string { return procs.Redact([]string{p.Index})[0] }

// Shown is p as it may be written down (the journal): its argv and index
// redacted.
func (p Plan) Shown() Plan {
	p.Argv, p.Index = procs.Redact(p.Argv), p.ShownIndex()
	return p
}

// ErrNoTorch is returned when the environment has no torch to reinstall.
var ErrNoTorch = errors.New("torch is not installed")

// ErrBadVariant is returned for a variant asked for by hand that cannot
// exist: not a CUDA tag, or a tag pytorch.org has no build of this torch
// for. Its message says which variants there are.
var ErrBadVariant = errors.New("no such variant")

// NewPlan decides how to reinstall a CUDA torch in r.Env. A plan that
// cannot be carried out is returned with Blocked set, not as an error: the
// reasons are what the user needs to read. Errors are for requests that
// make no sense (no environment, no torch). An environment whose
// interpreter cannot run is blocked before its torch is looked at: a
// torch in the folder the running Python does not search is not read,
// and no installer can run there either way.
func NewPlan(r Request) (Plan, error) {
	if r.Env == nil {
		return Plan{}, errors.New("planning a reinstall: no environment")
	}
	if p, ok := interpreterPlan(r.Env); ok {
		return p, nil
	}
	torch := r.Env.Torch()
	var stash stashed
	if torch == nil {
		// Gone because pip was stopped halfway: its stash says which
		// torch was there, and the GPU which build of it is right.
		s, ok := stashOf(r.Env)
		if !ok {
			return Plan{}, fmt.Errorf("planning a reinstall in %s: %w", r.Env.Path, ErrNoTorch)
		}
		if s.blocked != "" {
			return Plan{Env: r.Env.Path, Blocked: s.blocked}, nil
		}
		torch, stash = s.torch, s
	}
	if r.Env.AheadOfOwn(torch) {
		return removalPlan(r, torch), nil
	}
	p := Plan{Env: r.Env.Path, Cleanup: stashes(r.Env)}
	if stash.torch != nil {
		// Only torch's own stash: whatever else pip left is not this
		// repair's to delete.
		p.Cleanup, p.Restores = stash.entries, filepath.Join(r.Env.SitePackages, stash.distInfo)
		p.Reasons = append(p.Reasons, stashReason(stash))
	}
	// A pre-release, nightly or source build ("1.13.0a0+gitunknown",
	// Debian's) has no wheel of its own version on pytorch.org: the
	// release it belongs to is what can be installed.
	public := kb.ReleaseVersion(torch.Version)
	if public == "" {
		public = kb.PublicVersion(torch.Version)
	}
	if public == "" {
		p.Blocked = fmt.Sprintf("the installed torch version %q cannot be read", torch.Version)
		return p, nil
	}

	target := public
	if r.Variant != "" {
		if err := askedVariant(&p, r, public); err != nil {
			return Plan{}, fmt.Errorf("planning a reinstall in %s: %w", r.Env.Path, err)
		}
	} else if !choose(&p, r, public) {
		return p, nil
	}
	if p.Upgrade || p.Downgrade {
		target = p.Packages[0].Version
	}
	if len(p.Packages) == 0 {
		p.Packages = companions(r.Env, target, p.Variant)
	}

	p.Index = uvproject.IndexURL(indexBase(r), p.Variant)
	if site := pyenv.DistroManaged(r.Env); site != "" {
		distroBlock(&p, r.Env, site)
		return p, nil
	}

	if p.SameBuild = sameBuild(r.Env, p); p.SameBuild {
		p.Reasons = append(p.Reasons, "this installs the very builds that are installed: it repairs the install, and changes nothing about how they fit the driver and GPUs")
	}
	form, why := installForm(r.Env, p)
	p.Reasons = append(p.Reasons, why)
	installer(&p, r, torch, form)
	if p.Upgrade || p.Downgrade {
		p.Consequences = upgradeConsequences(r.Env, torch, p)
	}
	if p.Blocked == "" {
		p.Consequences = append(p.Consequences, editableConsequences(r.Env, p.Packages, false)...)
	}
	return p, nil
}

// sameBuild is true when every pin of p is installed already, at that
// version and CUDA variant.
func sameBuild(env *pyenv.Env, p Plan) bool {
	for _, pin := range p.Packages {
		have := env.Packages[pin.Name]
		if have == nil || kb.PublicVersion(have.Version) != kb.PublicVersion(pin.Version) ||
			have.Build != pyenv.BuildCUDA || kb.TagForCUDA(have.CUDA) != p.Variant {
			return false
		}
	}
	return len(p.Packages) > 0
}

// askedVariant takes the variant asked for by hand: refused when it cannot
// exist (ErrBadVariant), kept with Warnings when it cannot run here or the
// tables cannot tell, judged by the same kb verdict as the rules.
func askedVariant(p *Plan, r Request, public string) error {
	offered, why := kb.VariantOffered(public, r.Variant)
	if offered == kb.SupportNo {
		return fmt.Errorf("%w: %s", ErrBadVariant, why)
	}
	cuda, _ := kb.CUDAForTag(r.Variant)
	p.Variant, p.CUDA = r.Variant, cuda
	p.Reasons = append(p.Reasons, fmt.Sprintf("variant %s was asked for", r.Variant))
	if offered == kb.SupportUnknown {
		p.Warnings = append(p.Warnings, why)
	}
	if !r.GPU.HasDriver() {
		p.Warnings = append(p.Warnings, "no NVIDIA driver answered, so whether "+r.Variant+" runs here was not checked")
		return nil
	}
	m := kb.MachineOf(r.GPU)
	b := kb.CheckBuild(public+"+"+r.Variant, cuda, m)
	// A verdict drawn from a CUDA version derived from the driver's
	// version (a lower bound) that the version cannot settle is
	// Unconfirmed: it may say "may", never "will fail".
	switch {
	case b.Driver.Support == kb.SupportNo:
		p.Warnings = append(p.Warnings, fmt.Sprintf("%s will not run here: the driver %s supports %s, and %s", r.Variant, r.GPU.Driver, driverCUDAWords(m), b.Driver.Reason))
	case b.Driver.MinorCompat && b.Driver.Unconfirmed:
		p.Warnings = append(p.Warnings, fmt.Sprintf("%s may run here only through minor-version compatibility: the driver %s supports %s, and whether it supports CUDA %s in full could not be confirmed; if it does not, kernels compiled just in time may fail (%s)", r.Variant, r.GPU.Driver, driverCUDAWords(m), cuda, b.Driver.Reason))
	case b.Driver.MinorCompat && m.DriverCUDAFrom != "":
		// Settled by the driver's version: it is older than the floor of
		// the variant's CUDA in full, whatever CUDA it supports.
		p.Warnings = append(p.Warnings, fmt.Sprintf("%s runs here only through minor-version compatibility, and kernels compiled just in time will fail: the driver %s supports %s, and its version is below CUDA %s's floor (%s)", r.Variant, r.GPU.Driver, driverCUDAWords(m), cuda, b.Driver.Reason))
	case b.Driver.MinorCompat:
		p.Warnings = append(p.Warnings, fmt.Sprintf("%s is newer than the driver's %s: it runs through minor-version compatibility, and kernels compiled just in time will fail (%s)", r.Variant, m.DriverCUDALabel(), b.Driver.Reason))
	case b.Driver.Unconfirmed:
		p.Warnings = append(p.Warnings, fmt.Sprintf("whether %s runs here could not be confirmed: the driver %s supports %s (%s)", r.Variant, r.GPU.Driver, driverCUDAWords(m), b.Driver.Reason))
	}
	if b.Unchecked != "" && offered == kb.SupportYes {
		p.Warnings = append(p.Warnings, "it could not be checked against this machine's GPUs: "+b.Unchecked)
	}
	for _, g := range b.Unsupported() {
		p.Warnings = append(p.Warnings, fmt.Sprintf("%s will not run on %s: %s", r.Variant, g.GPU.Label(), g.Reason))
	}
	for _, g := range b.PTXOnly() {
		p.Warnings = append(p.Warnings, fmt.Sprintf("%s reaches %s only through PTX compiled on first use: %s", r.Variant, g.GPU.Label(), g.Reason))
	}
	return nil
}

// driverCUDAWords names the CUDA version the driver supports for a
// plan's own words: "CUDA 12.4" as the driver said it, or "at least CUDA
// 12.2 (derived from the driver version)" where the driver did not say
// it and it was derived from the driver's version, a lower bound: the
// driver may support a newer one.
func driverCUDAWords(m kb.Machine) string {
	switch {
	case m.DriverCUDA == "":
		return "a CUDA version that is not known"
	case m.DriverCUDAFrom != "":
		return "at least CUDA " + m.DriverCUDA + " (derived from the driver version)"
	}
	return "CUDA " + m.DriverCUDA
}

// choose fills Variant, CUDA and, for an upgrade, Packages, judging every
// GPU of the machine (kb.MachineOf) by kb.ChooseRepair: a variant the
// rules find nothing wrong with here (kb.CheckBuild's Clean), else the
// oldest newer release that has one, else the best variant that runs with
// faults the rules only warn about (said in Warnings); the rules attach
// the plan's command only to the findings that build clears. It reports
// false when the plan is blocked.
func choose(p *Plan, r Request, public string) bool {
	if !r.GPU.HasDriver() {
		p.Blocked = "no NVIDIA driver answered, so no CUDA variant can be chosen; pass --variant cuNNN to choose one"
		return false
	}
	if !kb.Judged(public) {
		p.Blocked = fmt.Sprintf("torch %s is not in GPU Canary's release table, so its CUDA variants are not known; pass --variant cuNNN", public)
		return false
	}
	m := kb.MachineOf(r.GPU)
	c, ok := kb.ChooseRepair(public, m)
	if !ok {
		p.Blocked = c.Reason
		return false
	}
	p.Variant, p.CUDA = c.Tag, c.CUDA
	p.Reasons = append(p.Reasons, c.Reason)
	if !c.Check.Clean() {
		// The best that runs here still has faults the rules warn about.
		p.Warnings = append(p.Warnings, c.Check.Problems())
	}
	if c.Upgrade {
		p.Upgrade = true
		p.Reasons = append(p.Reasons, fmt.Sprintf("only a newer torch runs here: the oldest release after %s with a build for every GPU here is torch %s (%s), so the plan upgrades to it", public, c.Torch, c.Tag))
		p.Packages = upgradePins(r.Env, c.Choice)
	}
	if c.Downgrade {
		p.Downgrade = true
		p.Packages = upgradePins(r.Env, c.Choice)
	}
	return true
}

// upgradeConsequences says what an upgrade changes besides torch: the
// companions move with it, extensions built for the old torch may break,
// and a uv project's lock would put the old torch back.
func upgradeConsequences(env *pyenv.Env, torch *pyenv.Package, p Plan) []string {
	from := kb.PublicVersion(torch.Version)
	to := kb.PublicVersion(p.Packages[0].Version)
	out := []string{fmt.Sprintf("torch changes release, %s → %s: code written for %s may need changes (see the release notes)", from, to, from)}
	if torch.CUDA != "" && p.CUDA != "" && torch.CUDA != p.CUDA {
		out = append(out, fmt.Sprintf("its CUDA changes with it, %s → %s (%s)", torch.CUDA, p.CUDA, p.Variant))
	}
	for _, pin := range p.Packages[1:] {
		if old := env.Packages[pin.Name]; old != nil {
			out = append(out, fmt.Sprintf("%s changes with it, %s → %s (each torchvision and torchaudio release works with one torch release)", pin.Name, kb.PublicVersion(old.Version), kb.PublicVersion(pin.Version)))
		}
	}
	out = append(out, fmt.Sprintf("packages built against torch %s (extensions such as xformers, flash-attn, torch-scatter) may fail to load and need their own upgrade; the installer checks what torch requires, not what requires torch, so it does not stop for them", from))
	if proj, ok := uvproject.FindProject(env.Path); ok {
		out = append(out, fmt.Sprintf("this environment belongs to the uv project in %s: `uv sync` and `uv run` would put back the torch its lock pins. Require torch==%s in %s, pin torch to the %s index (`gpucanary fix --pin-index %s --variant %s`), then run `uv lock`",
			proj.Dir, to, proj.Pyproject, p.Variant, shell.Quote(env.Path), p.Variant))
	}
	return out
}

// stashes lists the pip stash folders in env, sorted.
func stashes(env *pyenv.Env) []string {
	var out []string
	add := func(ps []pyenv.Problem) {
		for _, p := range ps {
			if p.Kind == pyenv.ProblemPipStash && !slices.Contains(out, p.Path) {
				out = append(out, p.Path)
			}
		}
	}
	add(env.Problems)
	for _, pkg := range env.Packages {
		add(pkg.Problems)
	}
	slices.Sort(out)
	return out
}

// companions pins torch and whichever of torchvision/torchaudio are
// installed, at the versions kb pairs with torch.
func companions(env *pyenv.Env, torch, variant string) []Pin {
	vision, audio, ok := kb.Companions(torch)
	pins := []Pin{{pyenv.Torch, torch + "+" + variant}}
	if v := env.Packages[pyenv.TorchVision]; v != nil {
		if !ok {
			vision = kb.PublicVersion(v.Version)
		}
		pins = append(pins, Pin{pyenv.TorchVision, vision + "+" + variant})
	}
	// No torchaudio belongs to a torch after 2.11 (kb.Companions): the
	// installed one is left as it is.
	if a := env.Packages[pyenv.TorchAudio]; a != nil && (!ok || audio != "") {
		if !ok {
			audio = kb.PublicVersion(a.Version)
		}
		pins = append(pins, Pin{pyenv.TorchAudio, audio + "+" + variant})
	}
	return pins
}

func upgradePins(env *pyenv.Env, c kb.Choice) []Pin {
	pins := []Pin{{pyenv.Torch, c.Torch + "+" + c.Tag}}
	if env.Packages[pyenv.TorchVision] != nil && c.Vision != "" {
		pins = append(pins, Pin{pyenv.TorchVision, c.Vision + "+" + c.Tag})
	}
	if env.Packages[pyenv.TorchAudio] != nil && c.Audio != "" {
		pins = append(pins, Pin{pyenv.TorchAudio, c.Audio + "+" + c.Tag})
	}
	return pins
}

// installer asks pyenv's manager table who reinstalls torch here and
// with which argv: the manager that installed torch may refuse (conda),
// the environment's manager builds the command (uv), pip is the last
// resort. A refusal blocks the plan with its advice.
func installer(p *Plan, r Request, torch *pyenv.Package, form managers.InstallForm) {
	specs := make([]string, len(p.Packages))
	for i, pin := range p.Packages {
		specs[i] = pin.Name + "==" + pin.Version
	}
	c := managers.ReinstallCommand(torch, managers.ReinstallRequest{
		Env: r.Env, Python: r.Env.Interpreter(), Specs: specs, Index: p.Index, CUDA: p.CUDA, Form: form,
		LookPath: r.LookPath, HostPython: r.HostPython, Quote: shell.Quote,
	})
	p.Installer, p.Argv, p.Blocked = c.Manager, c.Argv, c.Blocked
	p.Reasons = append(p.Reasons, c.Reasons...)
}
