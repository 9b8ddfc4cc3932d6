package pyenv

import (
	"path/filepath"
	"slices"
	"strings"

	"github.com/gpucanary/gpucanary/monitor/pyenv/pyspec"
)

// distInfo is one *.dist-info (or legacy *.egg-info) folder in site-packages.
type distInfo struct {
	dir     string // folder name as on disk
	version string // version from the folder name
	egg     bool
	// site is the folder holding it when not the site it is listed in:
	// the site of the .pth file that added an editable install's code.
	site string
}

// sitePackages is one listing of site-packages, indexed once so every
// package reader looks things up without touching the disk again.
type sitePackages struct {
	rd    *Reader // the reader that listed it: every look inside the site goes to its disk
	path  string
	ix    *dirIndex
	dists map[string][]distInfo // by normalized distribution name
	stash []string              // entries pip left behind ("~orch", "~orch-2.5.1.dist-info")
}

func indexSitePackages(path string, ix *dirIndex) *sitePackages {
	sp := &sitePackages{rd: ix.rd, path: path, ix: ix, dists: make(map[string][]distInfo)}
	for _, e := range ix.entries {
		n := e.Name()
		if strings.HasPrefix(n, "~") {
			sp.stash = append(sp.stash, n)
			continue
		}
		name, d, ok := parseDistDir(n)
		if ok {
			sp.dists[name] = append(sp.dists[name], d)
		}
	}
	return sp
}

// parseDistDir splits "torch-2.5.1+cu121.dist-info" into its normalized
// name and version.
func parseDistDir(n string) (string, distInfo, bool) {
	lower := strings.ToLower(n)
	var base string
	d := distInfo{dir: n}
	switch {
	case strings.HasSuffix(lower, ".dist-info"):
		base = n[:len(n)-len(".dist-info")]
	case strings.HasSuffix(lower, ".egg-info"):
		base, d.egg = n[:len(n)-len(".egg-info")], true
	default:
		return "", d, false
	}
	name, rest, _ := strings.Cut(base, "-")
	d.version, _, _ = strings.Cut(rest, "-") // egg-info: name-version-py3.11
	if name == "" {
		return "", d, false
	}
	return pyspec.NormalizeName(name), d, true
}

// distPath is the dist-info folder d, absolute.
func (sp *sitePackages) distPath(d distInfo) string {
	if d.site != "" {
		return filepath.Join(d.site, d.dir)
	}
	return sp.file(d.dir)
}

// file is an absolute path inside site-packages.
func (sp *sitePackages) file(parts ...string) string {
	return filepath.Join(append([]string{sp.path}, parts...)...)
}

// stashOwners are the folder and dist-info name stems a stash can shadow,
// and the package it belongs to.
var stashOwners = []struct{ stem, pkg string }{
	{"torch", Torch}, {"torchvision", TorchVision}, {"torchaudio", TorchAudio},
	{"llama_cpp", LlamaCppPython}, {"llama_cpp_python", LlamaCppPython},
	{"bitsandbytes", BitsAndBytes},
}

// stashOwner returns the package a pip stash folder belongs to, or "".
// pip renames a folder it is removing by replacing its first characters with
// "~" (and "-" when that name is taken): torch -> ~orch, ~-rch.
func stashOwner(entry string) string {
	base := entry
	for _, suf := range []string{".dist-info", ".egg-info"} {
		if len(base) > len(suf) && strings.EqualFold(base[len(base)-len(suf):], suf) {
			base = base[:len(base)-len(suf)]
		}
	}
	lead := 0
	for lead < len(base) && (base[lead] == '~' || base[lead] == '-') {
		lead++
	}
	rest, _, _ := strings.Cut(base[lead:], "-")
	if rest == "" {
		return ""
	}
	for _, o := range stashOwners {
		if len(o.stem) == lead+len(rest) && strings.EqualFold(o.stem[lead:], rest) {
			return o.pkg
		}
	}
	return ""
}

// stashProblems turns leftover stash folders into problems, on the package
// they shadow when it is installed and on the environment otherwise.
func (sp *sitePackages) stashProblems(env *Env) {
	for _, s := range sp.stash {
		p := Problem{Kind: ProblemPipStash, Path: sp.file(s),
			Message: "pip left " + s + " behind after an interrupted uninstall; pip warns \"Ignoring invalid distribution\" and a later install can mix files; delete it"}
		if pkg := env.Packages[stashOwner(s)]; pkg != nil {
			pkg.Problems = append(pkg.Problems, p)
			continue
		}
		env.Problems = append(env.Problems, p)
	}
}

// distNames lists the normalized names with a dist-info, sorted.
func (sp *sitePackages) distNames() []string {
	names := make([]string, 0, len(sp.dists))
	for n := range sp.dists {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// StashOwner returns the package a pip stash folder (by its name: ~orch,
// ~orch-2.5.1+cpu.dist-info) belongs to, or "".
func StashOwner(name string) string { return stashOwner(name) }
