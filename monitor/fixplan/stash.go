package fixplan

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/gpucanary/gpucanary/monitor/kb"
	"github.com/gpucanary/gpucanary/monitor/pyenv"
)

// stashed is the torch pip moved aside and never put back: pip renames
// the folders of a package it uninstalls (torch -> ~orch,
// torch-2.5.1+cpu.dist-info -> ~orch-2.5.1+cpu.dist-info), installs the
// new version and only then deletes them; an install stopped in between
// (Ctrl-C, a closed terminal, a killed pip) leaves no torch, only the
// stash. With no journal of GPU Canary's to say what was being installed
// (Resume), the stash is the one record of which torch was there.
type stashed struct {
	// torch stands for the torch that is gone: its version as the stashed
	// dist-info's folder name gives it, installed by pip (pip made the
	// stash, so pip is what installed and was removing it).
	torch *pyenv.Package
	// distInfo is the stashed dist-info folder the version was read from.
	distInfo string
	// entries are pip's stash folders of torch in the environment's own
	// site-packages (the folder and its dist-info), sorted: the only ones
	// the repair removes once the new torch is verified.
	entries []string
	// blocked says why the stash cannot say which torch was there (two
	// stashed dist-infos of different releases); "" when it can.
	blocked string
}

// stashOf finds pip's stash of torch in env's own site-packages, and
// reports whether there is one with a dist-info to name the version. Only
// the names are read: they are what the environment's read listed, so
// the advice the rules show from this plan depends on nothing the read
// did not look at. pip names the stashed dist-info after the distribution's
// own folder, whose version is the one installed (the normalized version
// METADATA holds).
func stashOf(env *pyenv.Env) (stashed, bool) {
	var s stashed
	versions := map[string]string{} // public release -> dist-info
	for _, p := range env.Problems {
		if p.Kind != pyenv.ProblemPipStash || env.SitePackages == "" || filepath.Dir(p.Path) != env.SitePackages {
			continue
		}
		name := filepath.Base(p.Path)
		if pyenv.StashOwner(name) != pyenv.Torch || slices.Contains(s.entries, p.Path) {
			continue
		}
		s.entries = append(s.entries, p.Path)
		if v := stashedVersion(name); v != "" {
			if _, ok := versions[kb.PublicVersion(v)]; !ok {
				versions[kb.PublicVersion(v)] = name
			}
			if s.torch == nil || name < s.distInfo {
				s.torch, s.distInfo = &pyenv.Package{Version: v, DistInfo: p.Path, Installer: "pip"}, name
			}
		}
	}
	if s.torch == nil {
		return stashed{}, false
	}
	slices.Sort(s.entries)
	if len(versions) > 1 {
		names := make([]string, 0, len(versions))
		for _, n := range versions {
			names = append(names, n)
		}
		slices.Sort(names)
		s.blocked = fmt.Sprintf("torch is not installed, and pip left stashes of more than one torch release (%s), so which one was installed cannot be told: install the torch you want by hand (its CUDA build from download.pytorch.org), then delete them", strings.Join(names, ", "))
	}
	return s, true
}

// stashedVersion is the version in a stashed dist-info's folder name
// ("~orch-2.5.1+cpu.dist-info" -> "2.5.1+cpu"), or "" for a stashed
// folder that is not a dist-info (~orch) or names no version.
func stashedVersion(name string) string {
	const suffix = ".dist-info"
	if len(name) <= len(suffix) || !strings.EqualFold(name[len(name)-len(suffix):], suffix) {
		return ""
	}
	// A dist-info is NAME-VERSION, and a version holds no "-"; pip's
	// longer stash names put "-" among the leading characters
	// ("~-rch-2.5.1.dist-info"), so the version follows the last one.
	base := name[:len(name)-len(suffix)]
	i := strings.LastIndex(base, "-")
	if i < 0 {
		return ""
	}
	return base[i+1:]
}

// stashReason says where a plan made from pip's stash got its release.
func stashReason(s stashed) string {
	return fmt.Sprintf("torch is not installed: pip moved torch %s aside (%s) and was stopped before it installed anything in its place, and no repair of GPU Canary's was under way (no journal says what was being installed), so this installs the CUDA build of that release and removes pip's stash of it once the new torch is verified",
		s.torch.Version, s.distInfo)
}
