package pyenv

import (
	"slices"
	"strings"
)

// readBNB reads bitsandbytes and the CUDA libraries it ships
// (libbitsandbytes_cuda124.so, libbitsandbytes_cuda124_nocublaslt.so,
// libbitsandbytes_cuda124.dll): it loads the one matching torch's CUDA.
func readBNB(sp *sitePackages) *Package {
	dists := sp.dists["bitsandbytes"]
	folder, hasFolder := sp.ix.isDir(sp.path, "bitsandbytes")
	if len(dists) == 0 && !hasFolder {
		return nil
	}
	p := &Package{Build: BuildUnknown}
	if d := pickDist(p, sp, BitsAndBytes, dists, nil); d != nil {
		readDist(p, sp, *d)
	} else {
		p.Problems = append(p.Problems, Problem{Kind: ProblemMissingDistInfo, Path: sp.file(folder),
			Message: "a bitsandbytes folder with no dist-info; reinstall bitsandbytes"})
	}
	p.Version = p.DistVersion
	if !hasFolder {
		return p
	}
	dir := sp.file(folder)
	ix, err := sp.rd.listDir(dir)
	if err != nil {
		p.Problems = append(p.Problems, sp.rd.problemFor(dir, "the bitsandbytes folder", err))
		return p
	}
	cpu := false
	for _, e := range ix.entries {
		kind, ok := bnbLib(e.Name())
		if !ok {
			continue
		}
		p.Libs = append(p.Libs, e.Name())
		switch {
		case kind == "cpu":
			cpu = true
		case strings.HasPrefix(kind, "cuda") && isDigits(kind[4:]):
			if !slices.Contains(p.Backends, kind[4:]) {
				p.Backends = append(p.Backends, kind[4:])
			}
		}
	}
	slices.Sort(p.Backends)
	switch {
	case len(p.Backends) > 0:
		p.Build = BuildCUDA
		p.Evidence = append(p.Evidence, Evidence{File: dir, Says: "ships CUDA libraries for " + strings.Join(p.Backends, ", ")})
	case cpu:
		p.Build = BuildCPU
		p.Evidence = append(p.Evidence, Evidence{File: dir, Says: "ships only the CPU library"})
	}
	return p
}

// bnbLib returns "cuda124" for libbitsandbytes_cuda124_nocublaslt.so and
// "cpu" for libbitsandbytes_cpu.dll.
func bnbLib(name string) (string, bool) {
	l := strings.ToLower(name)
	rest, ok := strings.CutPrefix(strings.TrimPrefix(l, "lib"), "bitsandbytes_")
	if !ok {
		return "", false
	}
	ext := strings.IndexByte(rest, '.')
	if ext < 0 {
		return "", false
	}
	switch rest[ext:] {
	case ".so", ".dll", ".dylib":
	default:
		return "", false
	}
	kind, _, _ := strings.Cut(rest[:ext], "_")
	return kind, kind != ""
}

// readNvidia reads an nvidia-* runtime package from its dist-info folder
// name alone: there are a dozen of them and their version is all that matters.
func readNvidia(sp *sitePackages, name string) *Package {
	dists := sp.dists[name]
	p := &Package{Build: BuildCUDA}
	d := pickDist(p, sp, name, dists, nil)
	if d == nil {
		return nil
	}
	p.Version, p.DistVersion, p.DistInfo = d.version, d.version, sp.distPath(*d)
	p.Evidence = append(p.Evidence, Evidence{File: p.DistInfo, Says: "dist-info " + d.dir})
	if strings.HasPrefix(name, "nvidia-cuda-") {
		p.CUDA = majorMinor(d.version) // nvidia-cuda-runtime-cu12 12.4.127 is CUDA 12.4
	}
	return p
}
