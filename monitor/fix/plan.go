// Package fix plans and runs the repair of an environment whose torch is not
// the CUDA build it should be: a forced reinstall of torch and its installed
// companions from the right download.pytorch.org index, without touching
// other dependencies.
//
// A Plan is data a person can read before anything runs: the installer, the
// exact argv (never a shell string), the packages and why each choice was
// made. Health findings show Plan.Command() as their fix (through Advice,
// which cmd hands the rules), so the advice and the repair can never
// disagree. Service is the repair as a whole (plan, in-use guard, run with a
// journal, verification), which `gpucanary fix` and the tray's windows both
// call.
package fix

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/gpucanary/gpucanary/monitor/gpu"
	"github.com/gpucanary/gpucanary/monitor/kb"
	"github.com/gpucanary/gpucanary/monitor/pyenv"
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
	// LookPath finds executables (uv); nil means exec.LookPath.
	LookPath func(string) (string, error)
	// HostPython is the interpreter used for `-m pip --python ENV` when the
	// environment has no pip of its own; "" means the platform's launchers
	// (pyenv.HostLaunchers: python3 on Linux; py -3, then python on Windows).
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
	// Installer is "uv", "pip" or "conda".
	Installer string `json:"installer"`
	// Argv is the command to run; empty when Blocked.
	Argv     []string `json:"argv,omitempty"`
	Packages []Pin    `json:"packages"`
	// Variant is the index tag ("cu124") and CUDA its CUDA version.
	Variant string `json:"variant"`
	CUDA    string `json:"cuda"`
	Index   string `json:"index"`
	// Upgrade is true when the installed torch has no build for this GPU and
	// the plan proposes a newer release instead; it is never done silently.
	Upgrade bool `json:"upgrade,omitempty"`
	// Reasons says why each choice was made, in order.
	Reasons []string `json:"reasons"`
	// Blocked says why no command can be proposed; Argv is empty then.
	Blocked string `json:"blocked,omitempty"`
	// Cleanup are pip's stash folders an earlier interrupted install left
	// (~orch, ~orch-2.5.1.dist-info): the run removes them once the new
	// torch is verified, never before (until then they may be the only
	// copy of the old one).
	Cleanup []string `json:"cleanup,omitempty"`
}

// Command is Argv as one line a person can paste into their shell.
func (p Plan) Command() string { return shell.Join(p.Argv) }

// ErrNoTorch is returned when the environment has no torch to reinstall.
var ErrNoTorch = errors.New("torch is not installed")

// NewPlan decides how to reinstall a CUDA torch in r.Env. A plan that
// cannot be carried out is returned with Blocked set, not as an error: the
// reasons are what the user needs to read. Errors are for requests that
// make no sense (no environment, no torch).
func NewPlan(r Request) (Plan, error) {
	if r.Env == nil {
		return Plan{}, errors.New("planning a reinstall: no environment")
	}
	torch := r.Env.Torch()
	if torch == nil {
		return Plan{}, fmt.Errorf("planning a reinstall in %s: %w", r.Env.Path, ErrNoTorch)
	}
	p := Plan{Env: r.Env.Path, Cleanup: stashes(r.Env)}
	public := kb.PublicVersion(torch.Version)
	if public == "" {
		p.Blocked = fmt.Sprintf("the installed torch version %q cannot be read", torch.Version)
		return p, nil
	}

	target := public
	if !choose(&p, r, public) {
		return p, nil
	}
	if p.Upgrade {
		target = p.Packages[0].Version
	}
	if len(p.Packages) == 0 {
		p.Packages = companions(r.Env, target, p.Variant)
	}

	base := strings.TrimRight(r.IndexBase, "/")
	if base == "" {
		base = DefaultIndexBase
	}
	p.Index = base + "/" + p.Variant

	installer(&p, r, torch)
	return p, nil
}

// choose fills Variant, CUDA and, for an upgrade, Packages. It reports false
// when the plan is blocked.
func choose(p *Plan, r Request, public string) bool {
	cc := ""
	if len(r.GPU.Devices) > 0 {
		cc = r.GPU.Devices[0].ComputeCapability
	}
	if r.Variant != "" {
		cuda, ok := kb.CUDAForTag(r.Variant)
		if !ok {
			p.Blocked = fmt.Sprintf("%q is not a CUDA variant (expected a tag like cu121)", r.Variant)
			return false
		}
		p.Variant, p.CUDA = r.Variant, cuda
		p.Reasons = append(p.Reasons, fmt.Sprintf("variant %s was asked for", r.Variant))
		return true
	}
	if !r.GPU.HasDriver() {
		p.Blocked = "no NVIDIA driver answered, so no CUDA variant can be chosen; pass --variant cuNNN to choose one"
		return false
	}
	if !kb.Known(public) {
		p.Blocked = fmt.Sprintf("torch %s is newer than GPU Canary's release table, so its CUDA variants are not known; pass --variant cuNNN", public)
		return false
	}
	if c, ok := kb.ChooseVariant(public, r.GPU.CUDADriver, cc); ok {
		p.Variant, p.CUDA = c.Tag, c.CUDA
		p.Reasons = append(p.Reasons, c.Reason)
		return true
	} else if old, ok := kb.OldestReleaseFor(r.GPU.CUDADriver, cc); ok {
		p.Upgrade = true
		p.Variant, p.CUDA = old.Tag, old.CUDA
		p.Reasons = append(p.Reasons, c.Reason,
			fmt.Sprintf("torch %s has no CUDA build for this GPU and driver; the oldest release that has one is %s (%s), so the plan installs that instead", public, old.Torch, old.Tag))
		p.Packages = upgradePins(r.Env, old)
		return true
	} else {
		p.Blocked = c.Reason + "; no torch release in GPU Canary's table has a build for this GPU and driver"
		return false
	}
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
	if a := env.Packages[pyenv.TorchAudio]; a != nil {
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
func installer(p *Plan, r Request, torch *pyenv.Package) {
	specs := make([]string, len(p.Packages))
	for i, pin := range p.Packages {
		specs[i] = pin.Name + "==" + pin.Version
	}
	c := pyenv.ReinstallCommand(torch, pyenv.ReinstallRequest{
		Env: r.Env, Python: r.Env.Interpreter(), Specs: specs, Index: p.Index, CUDA: p.CUDA,
		LookPath: r.LookPath, HostPython: r.HostPython, Quote: shell.Quote,
	})
	p.Installer, p.Argv, p.Blocked = c.Manager, c.Argv, c.Blocked
	p.Reasons = append(p.Reasons, c.Reasons...)
}
