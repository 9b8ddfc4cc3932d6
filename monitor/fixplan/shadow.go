package fixplan

import (
	"fmt"
	"slices"
	"strings"

	"github.com/gpucanary/gpucanary/monitor/gpu"
	"github.com/gpucanary/gpucanary/monitor/kb"
	"github.com/gpucanary/gpucanary/monitor/procs"
	"github.com/gpucanary/gpucanary/monitor/pyenv"
	"github.com/gpucanary/gpucanary/monitor/pyenv/managers"
	"github.com/gpucanary/gpucanary/monitor/pyenv/uvproject"
	"github.com/gpucanary/gpucanary/monitor/shell"
)

// A torch that import loads from a folder it searches before the
// environment's own site-packages (pyenv's Env.AheadOfOwn: the user site
// of a conda env or an interpreter's prefix, a folder a .pth import line
// puts in front) cannot be repaired by installing into the environment:
// the new torch lands behind the copy that is loaded, and pip, finding
// that copy first, would uninstall it and write over the environment's
// own torch (a conda torch, whose records go wrong; another build's
// dist-info left beside the new one). The repair removes the copy from
// where it is, so that the torch it hides is the one imported; it does
// so only when that torch is a CUDA build that runs here.

// removalPlan plans taking away the torch that shadows the environment's
// own: pip's uninstall, run as the environment's interpreter, which
// removes the first copy import finds (managers.UninstallCommand). The plan
// is blocked, saying what to do by hand, when the copy is not in the user
// site (pip removes nothing outside a venv, nor a .pth file's line), when
// the interpreter is marked externally managed, and when the torch it
// hides would not do either.
func removalPlan(r Request, torch *pyenv.Package) Plan {
	env := r.Env
	site, _ := env.SiteOf(torch)
	folder, says, _ := env.Origin(torch)
	p := Plan{Env: env.Path, Installer: pyenv.InstallerPip, RemoveFrom: folder, Removes: borrowedPins(env, folder)}
	p.Reasons = append(p.Reasons, fmt.Sprintf("torch %s is loaded from %s (%s): a torch installed into the environment would never be imported while that copy is there, so the repair removes the copy instead", torch.Version, folder, says))
	if tag := localTag(torch.Version); tag != "" {
		p.Index = uvproject.IndexURL(indexBase(r), tag) // where the rollback gets the removed build back from
	}
	names := make([]string, len(p.Removes))
	for i, pin := range p.Removes {
		names[i] = pin.Name
	}
	c := managers.UninstallCommand(managers.ReinstallRequest{Env: env, Python: env.Interpreter(), LookPath: r.LookPath, HostPython: r.HostPython}, names)
	cmd := shell.Join(c.Argv)
	next := torch.Shadows
	switch {
	case site.From != pyenv.SiteUser:
		p.Blocked = fmt.Sprintf("torch is loaded from %s, %s; pip removes nothing there for this environment. Delete that line (or the torch in %s), then check again", folder, says, folder)
	case pyenv.ExternallyManaged(env):
		p.Blocked = fmt.Sprintf("this interpreter is marked as managed by the system (EXTERNALLY-MANAGED), so pip refuses to uninstall without --break-system-packages. `%s --break-system-packages` removes the copy in %s, the first one it finds, and leaves the system's packages alone; run it if that is what you want, then check again", cmd, folder)
	case next == nil:
		p.Blocked = fmt.Sprintf("the environment has no torch of its own under it. Remove the copy (`%s`), then run `gpucanary fix %s` again to install a CUDA torch into the environment", cmd, shell.Quote(env.Path))
	default:
		if why := unfit(next, r.GPU); why != "" {
			p.Blocked = fmt.Sprintf("the torch it hides, %s (%s) in %s, would not do either: %s. Remove the copy (`%s`), then run `gpucanary fix %s` again", next.Version, next.BuildText(), next.Site, why, cmd, shell.Quote(env.Path))
		}
	}
	if p.Blocked != "" {
		return p
	}
	p.Argv = c.Argv
	p.Reasons = append(p.Reasons, fmt.Sprintf("the torch it hides, %s (%s) in %s, is then the one imported", next.Version, next.BuildText(), next.Site), c.Reason)
	p.Packages, p.CUDA = []Pin{{pyenv.Torch, next.Version}}, next.CUDA
	p.Consequences = editableConsequences(env, p.Removes, true)
	if b := kb.CheckBuild(next.Version, next.CUDA, kb.MachineOf(r.GPU)); !b.Clean() {
		p.Warnings = append(p.Warnings, "the torch it hides still has faults here: "+b.Problems())
	}
	return p
}

// unfit says why torch p, once imported, would not run on g: not a CUDA
// build, a driver too old, GPUs it has no kernels for, broken files; ""
// when it runs (maybe with faults the rules only warn about).
func unfit(p *pyenv.Package, g gpu.State) string {
	if p.Build != pyenv.BuildCUDA {
		return "it is a " + p.BuildText() + " build"
	}
	if !g.HasDriver() {
		return "no NVIDIA driver answered, so whether it runs here is not known"
	}
	b := kb.CheckBuild(p.Version, p.CUDA, kb.MachineOf(g))
	if b.Driver.Support == kb.SupportNo {
		return b.Driver.Reason
	}
	if bad := b.Unsupported(); len(bad) > 0 {
		return "it has no kernels for " + bad[0].GPU.Label()
	}
	for _, pr := range p.Problems {
		if pr.Kind != pyenv.ProblemPipStash && pr.Kind != pyenv.ProblemRuntimeMismatch {
			return pr.Message
		}
	}
	return ""
}

// borrowedPins are torch and its companions as read from folder: what
// the removal takes away.
func borrowedPins(env *pyenv.Env, folder string) []Pin {
	var pins []Pin
	for _, n := range []string{pyenv.Torch, pyenv.TorchVision, pyenv.TorchAudio} {
		if p := env.Packages[n]; p != nil && p.Site == folder {
			pins = append(pins, Pin{n, p.Version})
		}
	}
	return pins
}

// localTag is a version's local tag ("cpu" of "2.5.1+cpu"), "" for none.
func localTag(v string) string {
	_, tag, _ := strings.Cut(v, "+")
	return tag
}

func indexBase(r Request) string {
	if b := strings.TrimRight(r.IndexBase, "/"); b != "" {
		return b
	}
	return DefaultIndexBase
}

// RestoreCommand puts back what a removal took from the user site: pip
// install --user of the very versions, without dependencies, run as the
// removal ran.
func RestoreCommand(p Plan) string {
	i := slices.Index(p.Argv, "uninstall")
	if i < 0 {
		return ""
	}
	argv := append(slices.Clone(p.Argv[:i]), "install", "--user", "--no-deps")
	for _, pin := range p.Removes {
		argv = append(argv, pin.Name+"=="+pin.Version)
	}
	if p.Index != "" {
		argv = append(argv, "--index-url", p.Index)
	}
	return shell.Join(procs.Redact(argv))
}
