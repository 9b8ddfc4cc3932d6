package guard

import (
	"path/filepath"
	"strings"

	"github.com/gpucanary/gpucanary/monitor/pyenv"
)

// condaEdit pins, in conda-meta/pinned, the packages of the guarded set
// that conda installed, so that `conda install` and `conda update` keep
// them (conda reads the file as one match spec a line, skipping lines
// that start with #). torch is pinned to its version and build string,
// which says the CUDA build ("py3.11_cuda12.1_cudnn8.9.2_0",
// "cuda126_..."); its companions to their version. Packages pip installed
// into the conda env are kept by the pip config instead. nil when conda
// installed none of them.
func condaEdit(e *pyenv.Env) *edit {
	var specs []string
	for _, n := range guarded {
		p := e.Packages[n]
		if p == nil || p.Installer != pyenv.InstallerConda {
			continue
		}
		name, version, build, ok := condaRecordName(condaRecord(e.Path, n, p))
		ok = ok && plainWord(name) && plainWord(version) && plainWord(build)
		switch {
		case ok && n == pyenv.Torch:
			specs = append(specs, name+" =="+version+" "+build)
		case ok:
			specs = append(specs, name+" =="+version)
		case p.DistVersion != "":
			specs = append(specs, n+" =="+p.DistVersion)
		}
	}
	if len(specs) == 0 {
		return nil
	}
	path := filepath.Join(e.Path, "conda-meta", "pinned")
	return &edit{path: path, root: e.Path, says: "pinned " + strings.Join(specs, ", ") + " in " + path,
		make: func(old []byte) ([]byte, error) {
			text := string(old)
			if text != "" && !strings.HasSuffix(text, "\n") {
				text += "\n"
			}
			return []byte(text + comment(header(e.Path), "\n") + strings.Join(specs, "\n") + "\n"), nil
		}}
}

// condaRecord finds the conda-meta record of the package n: the one
// read (DistInfo) when it is one, else NAME-VERSION-BUILD.json for its
// version (pytorch or torch for torch).
func condaRecord(env, n string, p *pyenv.Package) string {
	if _, _, _, ok := condaRecordName(p.DistInfo); ok {
		return p.DistInfo
	}
	names := []string{n}
	if n == pyenv.Torch {
		names = []string{"pytorch", "torch"}
	}
	for _, name := range names {
		m, _ := filepath.Glob(filepath.Join(env, "conda-meta", name+"-"+p.DistVersion+"-*.json"))
		if len(m) == 1 {
			return m[0]
		}
	}
	return ""
}

// condaRecordName splits a conda-meta record's file name
// ("pytorch-2.5.1-py3.11_cuda12.1_cudnn8.9.2_0.json"): names may hold
// dashes, versions and build strings never do.
func condaRecordName(record string) (name, version, build string, ok bool) {
	base := filepath.Base(record)
	if filepath.Base(filepath.Dir(record)) != "conda-meta" || !strings.HasSuffix(base, ".json") {
		return "", "", "", false
	}
	base = strings.TrimSuffix(base, ".json")
	i := strings.LastIndexByte(base, '-')
	if i <= 0 {
		return "", "", "", false
	}
	j := strings.LastIndexByte(base[:i], '-')
	if j <= 0 {
		return "", "", "", false
	}
	return base[:j], base[j+1 : i], base[i+1:], true
}
