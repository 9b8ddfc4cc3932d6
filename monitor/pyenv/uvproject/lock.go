// Package uvproject reads a uv project (pyproject.toml and uv.lock) to
// tell, before it happens, when the next `uv sync` or `uv run` will put a
// CPU torch in place of a CUDA one, and pins torch to a CUDA index in
// pyproject.toml so that it does not (KB-FACTS, uv: the durable fix).
//
// The pin is a surgical text edit: every byte outside the inserted lines
// stays as it was (comments, order, formatting, CRLF, a BOM).
package uvproject

import (
	"bytes"
	"fmt"
	"regexp"
	"strings"
	"sync"

	"github.com/pelletier/go-toml/v2"

	"github.com/gpucanary/gpucanary/monitor/pyenv/disk"
	"github.com/gpucanary/gpucanary/monitor/pyenv/pyspec"
)

// TorchSource is one torch entry of uv.lock: uv writes one per fork when
// torch resolves differently per platform.
type TorchSource struct {
	Version string `json:"version"`
	// Registry is the index the entry comes from; for a URL, path or git
	// source, that location.
	Registry string `json:"registry"`
	// Marker is the entry's resolution markers, joined with "or"; "" when
	// the entry holds everywhere.
	Marker string `json:"marker,omitempty"`
	// CPU is true when the entry installs a CPU-only torch on one of its
	// Platforms: a +cpu version, the cpu index, or PyPI on Windows.
	CPU bool `json:"cpu"`
	// Platforms are those the entry may apply to: "linux", "windows".
	Platforms []string `json:"platforms"`
}

// LockInfo is what a uv project says about torch.
type LockInfo struct {
	Project Project       `json:"project"`
	Torch   []TorchSource `json:"torch"`
	// Direct is true when the project depends on torch itself (in
	// dependencies, an extra or a dependency group).
	Direct bool `json:"direct"`
	// Pinned is the index name [tool.uv.sources] sends torch to ("" when
	// none); PinnedURL is that index's url when [[tool.uv.index]] has it.
	Pinned    string `json:"pinned,omitempty"`
	PinnedURL string `json:"pinned_url,omitempty"`
}

type lockFile struct {
	Version  int           `toml:"version"`
	Packages []lockPackage `toml:"package"`
}

type lockPackage struct {
	Name    string `toml:"name"`
	Version string `toml:"version"`
	Source  struct {
		Registry string `toml:"registry"`
		URL      string `toml:"url"`
		Path     string `toml:"path"`
		Git      string `toml:"git"`
	} `toml:"source"`
	ResolutionMarkers []string `toml:"resolution-markers"`
}

// pyprojectFile is the part of pyproject.toml this package reads.
type pyprojectFile struct {
	Project struct {
		Dependencies         []string            `toml:"dependencies"`
		OptionalDependencies map[string][]string `toml:"optional-dependencies"`
	} `toml:"project"`
	DependencyGroups map[string][]any `toml:"dependency-groups"`
	Tool             struct {
		UV struct {
			Sources         map[string]any `toml:"sources"`
			Index           []uvIndex      `toml:"index"`
			DevDependencies []string       `toml:"dev-dependencies"`
		} `toml:"uv"`
	} `toml:"tool"`
}

type uvIndex struct {
	Name     string `toml:"name"`
	URL      string `toml:"url"`
	Explicit bool   `toml:"explicit"`
}

// indexURL is the url of the [[tool.uv.index]] called name, or "".
func (py *pyprojectFile) indexURL(name string) string {
	for _, ix := range py.Tool.UV.Index {
		if name != "" && ix.Name == name {
			return ix.URL
		}
	}
	return ""
}

// ReadProject reads what p's pyproject.toml and uv.lock say about torch.
// A missing uv.lock is a state (Torch empty), not an error.
func ReadProject(p Project) (LockInfo, error) { return ReadProjectOn(disk.Real{}, p) }

// ReadProjectOn is ReadProject reading d: the reader's disk, so that a
// read of an environment and of its project read the same one.
func ReadProjectOn(d disk.Disk, p Project) (LockInfo, error) {
	info := LockInfo{Project: p}
	data, err := d.ReadFile(p.Pyproject, maxProjectFile)
	if err != nil {
		return info, fmt.Errorf("reading %s: %w", p.Pyproject, err)
	}
	var py pyprojectFile
	if err := toml.Unmarshal(stripBOM(data), &py); err != nil {
		return info, fmt.Errorf("reading %s: %w", p.Pyproject, err)
	}
	deps := append([]string(nil), py.Project.Dependencies...)
	deps = append(deps, py.Tool.UV.DevDependencies...)
	for _, extra := range py.Project.OptionalDependencies {
		deps = append(deps, extra...)
	}
	for _, group := range py.DependencyGroups {
		for _, d := range group {
			if s, ok := d.(string); ok { // {include-group = ...} tables name no package
				deps = append(deps, s)
			}
		}
	}
	for _, d := range deps {
		// A requirement whose extras are not closed still names its
		// distribution: its Name is kept although ok is false.
		if r, _ := pyspec.ParseRequirement(d); r.Name == "torch" {
			info.Direct = true
		}
	}
	info.Pinned = sourceIndex(py.Tool.UV.Sources["torch"])
	info.PinnedURL = py.indexURL(info.Pinned)

	if p.Lock == "" {
		return info, nil
	}
	if data, err = d.ReadFile(p.Lock, maxProjectFile); err != nil {
		return info, fmt.Errorf("reading %s: %w", p.Lock, err)
	}
	var lock lockFile
	if err := toml.Unmarshal(data, &lock); err != nil {
		return info, fmt.Errorf("reading %s: %w", p.Lock, err)
	}
	for _, pkg := range lock.Packages {
		if pkg.Name != "torch" {
			continue
		}
		info.Torch = append(info.Torch, torchSource(pkg))
	}
	return info, nil
}

func torchSource(pkg lockPackage) TorchSource {
	ts := TorchSource{Version: pkg.Version, Registry: pkg.Source.Registry}
	for _, loc := range []string{pkg.Source.URL, pkg.Source.Path, pkg.Source.Git} {
		if ts.Registry == "" {
			ts.Registry = loc
		}
	}
	if len(pkg.ResolutionMarkers) == 1 {
		ts.Marker = pkg.ResolutionMarkers[0]
	} else if len(pkg.ResolutionMarkers) > 1 {
		ts.Marker = "(" + strings.Join(pkg.ResolutionMarkers, ") or (") + ")"
	}
	for _, platform := range []string{"linux", "windows"} {
		if markerOn(ts.Marker, platform) == no {
			continue
		}
		ts.Platforms = append(ts.Platforms, platform)
		if ts.build(platform) == buildCPU {
			ts.CPU = true
		}
	}
	return ts
}

// build kinds a lock entry installs.
const (
	buildCUDA    = "CUDA"
	buildCPU     = "CPU-only"
	buildROCm    = "ROCm"
	buildXPU     = "XPU"
	buildUnknown = ""
)

// variantSegment finds a PyTorch index variant in a registry URL
// (https://download.pytorch.org/whl/cu121, a mirror's .../cu121/).
//
// Compiled at first use, not at each start of the program (a check's
// start does not pay for it).
var variantSegment = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`/(cu\d+|cpu|rocm[\d.]*|xpu)(/|$)`) })

// build tells which build of torch this entry installs on platform.
func (t TorchSource) build(platform string) string {
	b, _ := t.variant(platform)
	return b
}

// variant tells which build of torch this entry installs on platform, and
// for a CUDA build the index tag it names ("cu126"; "" for PyPI's plain
// wheel, whose CUDA version depends on the release). The local version
// tag decides when there is one (2.5.1+cu121); else the index's variant
// path (the cpu index has untagged aarch64 wheels); else it is PyPI or a
// mirror of it, whose Linux wheels are CUDA and whose Windows wheels are
// CPU-only (KB-FACTS, torch/version.py).
func (t TorchSource) variant(platform string) (build, tag string) {
	kind := func(v string) (string, string) {
		switch {
		case strings.HasPrefix(v, "cu"):
			return buildCUDA, v
		case v == "cpu":
			return buildCPU, ""
		case strings.HasPrefix(v, "rocm"):
			return buildROCm, ""
		case v == "xpu":
			return buildXPU, ""
		}
		return buildUnknown, ""
	}
	if _, local, ok := strings.Cut(t.Version, "+"); ok {
		return kind(local)
	}
	loc := strings.ReplaceAll(t.Registry, "%2B", "+")
	if _, local, ok := strings.Cut(loc, "+"); ok && strings.HasSuffix(loc, ".whl") {
		local, _, _ = strings.Cut(local, "-")
		return kind(local)
	}
	if m := variantSegment().FindStringSubmatch(strings.TrimRight(t.Registry, "/")); m != nil {
		return kind(m[1])
	}
	if strings.HasPrefix(t.Registry, "http") && !strings.HasSuffix(t.Registry, ".whl") {
		if platform == "windows" {
			return buildCPU, ""
		}
		return buildCUDA, ""
	}
	return buildUnknown, ""
}

// sourceIndex is the index a [tool.uv.sources] entry names: a table, or
// a list of tables (one per marker); "" when it names none.
func sourceIndex(v any) string {
	switch s := v.(type) {
	case map[string]any:
		if idx, ok := s["index"].(string); ok {
			return idx
		}
	case []any:
		for _, e := range s {
			if idx := sourceIndex(e); idx != "" {
				return idx
			}
		}
	}
	return ""
}

// describeSource renders a [tool.uv.sources] entry for a message.
func describeSource(v any) string {
	var b strings.Builder
	enc := toml.NewEncoder(&b)
	enc.SetTablesInline(true)
	if err := enc.Encode(map[string]any{"x": v}); err != nil {
		return fmt.Sprint(v)
	}
	s := strings.TrimSpace(strings.TrimPrefix(b.String(), "x = "))
	return strings.Join(strings.Fields(s), " ")
}

func stripBOM(b []byte) []byte {
	return bytes.TrimPrefix(b, []byte("\ufeff"))
}
