package pyenv

import (
	"path/filepath"
	"strings"
)

// condaRecord is one conda-meta/NAME-VERSION-BUILD.json. Everything needed
// is in the file name, so the (often megabytes of) JSON is never read.
type condaRecord struct {
	file, name, version, build string
}

// condaMeta is what an environment's conda-meta folder lists.
type condaMeta struct {
	python *condaRecord
	torch  *condaRecord // "pytorch" (pytorch and conda-forge channels) or "torch"
}

func readCondaMeta(dir string, ix *dirIndex) condaMeta {
	var cm condaMeta
	for _, e := range ix.entries {
		r, ok := parseCondaRecord(e.Name())
		if !ok {
			continue
		}
		r.file = filepath.Join(dir, e.Name())
		switch r.name {
		case "python":
			cm.python = &r
		case "pytorch", "torch":
			cm.torch = &r
		}
	}
	return cm
}

// parseCondaRecord splits "pytorch-2.5.1-py3.11_cuda12.1_cudnn8.9.2_0.json";
// names may hold dashes, versions and build strings never do.
func parseCondaRecord(file string) (condaRecord, bool) {
	base, ok := strings.CutSuffix(file, ".json")
	if !ok {
		return condaRecord{}, false
	}
	i := strings.LastIndexByte(base, '-')
	if i <= 0 {
		return condaRecord{}, false
	}
	j := strings.LastIndexByte(base[:i], '-')
	if j <= 0 {
		return condaRecord{}, false
	}
	return condaRecord{name: base[:j], version: base[j+1 : i], build: base[i+1:]}, true
}

// classifyCondaBuild reads a conda pytorch build string: the pytorch channel
// writes "py3.11_cuda12.1_cudnn8.9.2_0" or "py3.11_cpu_0", conda-forge
// "cuda126_generic_py312_h1234_201" or "cpu_generic_py311_h1234_0".
func classifyCondaBuild(build string) (Build, string) {
	lower := strings.ToLower(build)
	if i := strings.Index(lower, "cuda"); i >= 0 {
		digits := lower[i+4:]
		n := 0
		for n < len(digits) && (digits[n] >= '0' && digits[n] <= '9' || digits[n] == '.') {
			n++
		}
		v := digits[:n]
		switch {
		case strings.Contains(v, "."):
			return BuildCUDA, majorMinor(v)
		case len(v) >= 2:
			return BuildCUDA, v[:len(v)-1] + "." + v[len(v)-1:]
		}
		return BuildCUDA, ""
	}
	switch {
	case strings.Contains(lower, "rocm"):
		return BuildROCm, ""
	case strings.Contains(lower, "xpu"):
		return BuildXPU, ""
	case strings.Contains(lower, "cpu"):
		return BuildCPU, ""
	}
	return BuildUnknown, ""
}

// classifyLocalTag reads a PEP 440 local tag as download.pytorch.org writes
// it: "+cu121" (CUDA 12.1), "+cpu", "+rocm6.2.4", "+xpu". It returns
// BuildUnknown when the version has no tag it knows.
func classifyLocalTag(version string) (b Build, detail string) {
	_, tag, ok := strings.Cut(version, "+")
	if !ok {
		return BuildUnknown, ""
	}
	tag = strings.ToLower(tag)
	switch {
	case strings.HasPrefix(tag, "cu") && len(tag) >= 4 && isDigits(tag[2:]):
		d := tag[2:]
		return BuildCUDA, d[:len(d)-1] + "." + d[len(d)-1:]
	case strings.HasPrefix(tag, "cpu"):
		return BuildCPU, ""
	case strings.HasPrefix(tag, "rocm"):
		return BuildROCm, tag[4:]
	case strings.HasPrefix(tag, "xpu"):
		return BuildXPU, ""
	}
	return BuildUnknown, ""
}
