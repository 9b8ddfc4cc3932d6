// Package uvproject reads a uv project (pyproject.toml and uv.lock) to
// tell, before it happens, when the next `uv sync` or `uv run` will put a
// CPU torch in place of a CUDA one, and pins torch to a CUDA index in
// pyproject.toml so that it does not (KB-FACTS: the durable fix).
//
// The pin is a surgical text edit: every byte outside the inserted lines
// stays as it was (comments, order, formatting, CRLF, a BOM).
package uvproject

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/pelletier/go-toml/v2"
)

// Project is a uv project: pyproject.toml, and uv.lock when there is one.
type Project struct {
	Dir       string
	Pyproject string
	Lock      string // "" when there is no uv.lock
}

// FindProject looks for pyproject.toml in the environment's folder's
// parent and up to four more levels above it (a .venv sits in its
// project; UV_PROJECT_ENVIRONMENT may put it deeper).
func FindProject(envPath string) (Project, bool) {
	dir := filepath.Dir(filepath.Clean(envPath))
	for i := 0; i < 5; i++ {
		py := filepath.Join(dir, "pyproject.toml")
		if fi, err := os.Stat(py); err == nil && fi.Mode().IsRegular() {
			p := Project{Dir: dir, Pyproject: py}
			if _, err := os.Stat(filepath.Join(dir, "uv.lock")); err == nil {
				p.Lock = filepath.Join(dir, "uv.lock")
			}
			return p, true
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			break
		}
		dir = parent
	}
	return Project{}, false
}

// TorchSource is one torch entry of uv.lock.
type TorchSource struct {
	Version  string `json:"version"`
	Registry string `json:"registry"`
	// Marker is the entry's resolution markers, joined.
	Marker string `json:"marker,omitempty"`
	// Platforms are those the entry applies to: "linux", "windows".
	Platforms []string `json:"platforms"`
}

// CPUOn reports whether this entry installs a CPU-only torch on platform:
// a +cpu build, the cpu index, or PyPI on Windows (whose wheels are CPU).
func (t TorchSource) CPUOn(platform string) bool {
	switch {
	case strings.Contains(t.Version, "+cpu"):
		return true
	case strings.HasSuffix(strings.TrimRight(t.Registry, "/"), "/cpu"):
		return true
	case isPyPI(t.Registry) && platform == "windows":
		return true
	}
	return false
}

// LockInfo is what the project says about torch.
type LockInfo struct {
	Project Project       `json:"project"`
	Torch   []TorchSource `json:"torch"`
	// Direct is true when the project depends on torch itself.
	Direct bool `json:"direct"`
	// Pinned is the index torch is pinned to in [tool.uv.sources], or "".
	Pinned string `json:"pinned,omitempty"`
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
		Editable string `toml:"editable"`
		Virtual  string `toml:"virtual"`
	} `toml:"source"`
	ResolutionMarkers []string `toml:"resolution-markers"`
}

type pyprojectFile struct {
	Project struct {
		Dependencies         []string            `toml:"dependencies"`
		OptionalDependencies map[string][]string `toml:"optional-dependencies"`
	} `toml:"project"`
	DependencyGroups map[string][]any `toml:"dependency-groups"`
	Tool             struct {
		UV struct {
			Sources map[string]any `toml:"sources"`
			Index   []uvIndex      `toml:"index"`
		} `toml:"uv"`
	} `toml:"tool"`
}

type uvIndex struct {
	Name     string `toml:"name"`
	URL      string `toml:"url"`
	Explicit bool   `toml:"explicit"`
	Default  bool   `toml:"default"`
}

// ReadProject reads pyproject.toml and uv.lock.
func ReadProject(p Project) (LockInfo, error) {
	info := LockInfo{Project: p}
	data, err := os.ReadFile(p.Pyproject)
	if err != nil {
		return info, fmt.Errorf("reading %s: %w", p.Pyproject, err)
	}
	var py pyprojectFile
	if err := toml.Unmarshal(stripBOM(data), &py); err != nil {
		return info, fmt.Errorf("reading %s: %w", p.Pyproject, err)
	}
	deps := append([]string(nil), py.Project.Dependencies...)
	for _, extra := range py.Project.OptionalDependencies {
		deps = append(deps, extra...)
	}
	for _, group := range py.DependencyGroups {
		for _, d := range group {
			if s, ok := d.(string); ok {
				deps = append(deps, s)
			}
		}
	}
	for _, d := range deps {
		if requirementName(d) == "torch" {
			info.Direct = true
		}
	}
	info.Pinned = sourceIndex(py.Tool.UV.Sources["torch"])

	if p.Lock == "" {
		return info, nil
	}
	data, err = os.ReadFile(p.Lock)
	if errors.Is(err, fs.ErrNotExist) {
		return info, nil
	}
	if err != nil {
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
		ts := TorchSource{Version: pkg.Version, Registry: pkg.Source.Registry, Marker: strings.Join(pkg.ResolutionMarkers, " or ")}
		if ts.Registry == "" {
			ts.Registry = pkg.Source.URL + pkg.Source.Path
		}
		ts.Platforms = platformsOf(pkg.ResolutionMarkers)
		info.Torch = append(info.Torch, ts)
	}
	return info, nil
}

// Risk is one way the next uv sync would put a CPU torch in place.
type Risk struct {
	Platform string `json:"platform"`
	Reason   string `json:"reason"`
}

// WillReplaceTorch lists how the next `uv sync`/`uv run` would install a
// CPU torch on platform ("linux" or "windows"), when a CUDA torch is what
// is installed (installedCUDA).
func WillReplaceTorch(info LockInfo, platform string, installedCUDA bool) []Risk {
	if !installedCUDA {
		return nil
	}
	var risks []Risk
	if info.Project.Lock == "" || len(info.Torch) == 0 {
		if info.Direct && info.Pinned == "" && platform == "windows" {
			risks = append(risks, Risk{Platform: platform,
				Reason: "the project depends on torch without pinning an index, so the next `uv lock` resolves it from PyPI, whose Windows wheels are CPU-only"})
		}
		return risks
	}
	for _, t := range info.Torch {
		if !appliesTo(t, platform) || !t.CPUOn(platform) {
			continue
		}
		how := "torch is only a dependency of a dependency here, "
		if info.Direct {
			how = ""
		}
		from := t.Registry
		if isPyPI(from) {
			from = "PyPI"
		}
		risks = append(risks, Risk{Platform: platform,
			Reason: fmt.Sprintf("%suv.lock takes torch %s for %s from %s, a CPU-only build: the next `uv sync` or `uv run` will replace the CUDA build", how, t.Version, platform, from)})
	}
	return risks
}

func appliesTo(t TorchSource, platform string) bool {
	for _, p := range t.Platforms {
		if p == platform {
			return true
		}
	}
	return false
}

// platformsOf reads which platforms resolution markers select; none
// means every platform.
func platformsOf(markers []string) []string {
	if len(markers) == 0 {
		return []string{"linux", "windows"}
	}
	var linux, windows bool
	for _, m := range markers {
		m = strings.ReplaceAll(m, `"`, "'")
		l, w := true, true
		switch {
		case strings.Contains(m, "sys_platform == 'linux'") || strings.Contains(m, "platform_system == 'Linux'"):
			w = false
		case strings.Contains(m, "sys_platform == 'win32'") || strings.Contains(m, "platform_system == 'Windows'"):
			l = false
		case strings.Contains(m, "sys_platform == 'darwin'") || strings.Contains(m, "platform_system == 'Darwin'"):
			l, w = false, false
		}
		if strings.Contains(m, "sys_platform != 'linux'") {
			l = false
		}
		if strings.Contains(m, "sys_platform != 'win32'") {
			w = false
		}
		linux, windows = linux || l, windows || w
	}
	var out []string
	if linux {
		out = append(out, "linux")
	}
	if windows {
		out = append(out, "windows")
	}
	return out
}

func isPyPI(registry string) bool {
	return strings.Contains(registry, "pypi.org") || registry == ""
}

// requirementName is the distribution name of a PEP 508 requirement.
func requirementName(req string) string {
	end := len(req)
	for i, c := range req {
		if !(c == '-' || c == '_' || c == '.' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			end = i
			break
		}
	}
	return strings.ToLower(strings.ReplaceAll(req[:end], "_", "-"))
}

// sourceIndex is the index a [tool.uv.sources] entry names: a table, or a
// list of tables (one per marker).
func sourceIndex(v any) string {
	switch s := v.(type) {
	case map[string]any:
		if idx, ok := s["index"].(string); ok {
			return idx
		}
		for _, k := range []string{"git", "url", "path"} {
			if u, ok := s[k].(string); ok {
				return k + ":" + u
			}
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

func stripBOM(b []byte) []byte {
	return []byte(strings.TrimPrefix(string(b), "\ufeff"))
}
