package pyenv

import (
	"slices"
	"strings"
)

// readSites reads every package GPU Canary cares about from the
// environment's sites, each from the first site that holds it: the copy
// `import` loads. Each site is listed once.
func (in *inspector) readSites() {
	env := in.env
	var sites []*sitePackages
	var from []Site
	for _, s := range env.Sites {
		sp, err := in.indexSite(s)
		if err != nil {
			env.Problems = append(env.Problems, in.rd.problemFor(s.Path, "site-packages", err))
			continue
		}
		sites = append(sites, sp)
		from = append(from, s)
	}
	lendDists(sites, from)
	var condaTorch *condaRecord
	if in.conda != nil {
		condaTorch = in.conda.torch
	}
	first := func(name string, read func(sp *sitePackages, own bool) *Package) {
		for i, sp := range sites {
			if servedLater(name, sp, sites[i+1:], from[i+1:]) {
				continue // an editable install's metadata: its code is further on
			}
			p := read(sp, from[i].From == SiteOwn)
			if p == nil {
				continue
			}
			p.Site = from[i].Path
			if from[i].From != SiteOwn {
				p.Evidence = append(p.Evidence, loadsEvidence(name, from[i]))
			}
			for j := i + 1; j < len(sites); j++ {
				if !sites[j].holds(name) {
					continue
				}
				p.Evidence = append(p.Evidence, Evidence{File: from[j].Path,
					Says: "another " + name + " here (" + siteWords(from[j]) + ") is shadowed by the one " + siteWords(from[i]) + " holds"})
				if name == Torch && p.Shadows == nil && !servedLater(name, sites[j], sites[j+1:], from[j+1:]) {
					if q := read(sites[j], from[j].From == SiteOwn); q != nil {
						q.Site = from[j].Path
						p.Shadows = q
					}
				}
			}
			if !strings.HasPrefix(name, "nvidia-") && !sp.holdsImport(name) {
				in.sayUnreadIn(p, sp.path)
			}
			env.Packages[name] = p
			return
		}
	}
	first(Torch, func(sp *sitePackages, own bool) *Package {
		var ct *condaRecord
		if own {
			ct = condaTorch
		}
		return readTorch(sp, ct, in.torchPython())
	})
	first(TorchVision, func(sp *sitePackages, _ bool) *Package { return readCompanion(sp, TorchVision, "torchvision") })
	first(TorchAudio, func(sp *sitePackages, _ bool) *Package { return readCompanion(sp, TorchAudio, "torchaudio") })
	first(LlamaCppPython, func(sp *sitePackages, _ bool) *Package { return readLlama(sp) })
	first(BitsAndBytes, func(sp *sitePackages, _ bool) *Package { return readBNB(sp) })
	var nvidia []string
	for _, sp := range sites {
		for _, name := range sp.distNames() {
			if strings.HasPrefix(name, "nvidia-") && !slices.Contains(nvidia, name) {
				nvidia = append(nvidia, name)
			}
		}
	}
	for _, name := range nvidia {
		first(name, func(sp *sitePackages, _ bool) *Package {
			if len(sp.dists[name]) == 0 {
				return nil
			}
			return readNvidia(sp, name)
		})
	}
	for i, sp := range sites {
		if from[i].From == SiteOwn && sp.path == env.SitePackages {
			sp.stashProblems(env)
		}
	}
	if env.Torch() == nil {
		in.sayUnread()
	}
	in.readCUDALibs(sites)
}

// holds reports whether the site has a distribution or an import folder
// of the package.
func (sp *sitePackages) holds(name string) bool {
	if len(sp.dists[name]) > 0 {
		return true
	}
	_, ok := sp.ix.isDir(sp.path, importName(name))
	return ok
}

// importName is the folder a distribution imports as: llama-cpp-python
// is llama_cpp, torch is torch.
func importName(dist string) string {
	if dist == LlamaCppPython {
		return "llama_cpp"
	}
	return strings.ReplaceAll(dist, "-", "_")
}
