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
		ix, err := listDir(s.Path)
		if err != nil {
			env.Problems = append(env.Problems, problemFor(s.Path, "site-packages", err))
			continue
		}
		sites = append(sites, indexSitePackages(s.Path, ix))
		from = append(from, s)
	}
	var condaTorch *condaRecord
	if in.conda != nil {
		condaTorch = in.conda.torch
	}
	first := func(name string, read func(sp *sitePackages, own bool) *Package) {
		for i, sp := range sites {
			p := read(sp, from[i].From == SiteOwn)
			if p == nil {
				continue
			}
			p.Site = sp.path
			if from[i].From != SiteOwn {
				p.Evidence = append(p.Evidence, Evidence{File: sp.path,
					Says: "import " + importName(name) + " loads this copy: " + siteWords(from[i]) + " is the first folder on the import path that holds it"})
			}
			for j := i + 1; j < len(sites); j++ {
				if sites[j].holds(name) {
					p.Evidence = append(p.Evidence, Evidence{File: sites[j].path,
						Says: "another " + name + " here (" + siteWords(from[j]) + ") is shadowed by the one " + siteWords(from[i]) + " holds"})
				}
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
		return readTorch(sp, ct)
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
