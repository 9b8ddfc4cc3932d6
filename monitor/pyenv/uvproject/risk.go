package uvproject

import (
	"fmt"
	"strings"
)

// Risk is one way the next `uv sync` or `uv run` would put a non-CUDA
// torch in place of the CUDA one installed. Reason reads after "torch X
// is a CUDA build, but ": lowercase, no final period.
type Risk struct {
	Platform string `json:"platform"`
	Reason   string `json:"reason"`
}

// platformName is how messages name a platform.
var platformName = map[string]string{"linux": "Linux", "windows": "Windows"}

// WillReplaceTorch lists how the next `uv sync`/`uv run` would install a
// torch without CUDA on platform ("linux" or "windows") where a CUDA
// torch is installed (installedCUDA); nothing to lose means no risk. It
// reads uv.lock's entries for the platform: a +cpu (or ROCm, XPU) pin, or
// PyPI on Windows (CPU-only wheels). An entry that holds only under an
// extra or a group is a risk only when no CUDA entry could hold instead.
// With no lock (or none that has torch), a direct torch dependency with
// no index pinned is a risk on Windows, where `uv lock` will pick PyPI.
// PyPI's Linux torch is a CUDA build, so PyPI on Linux is no risk here.
func WillReplaceTorch(info LockInfo, platform string, installedCUDA bool) []Risk {
	if !installedCUDA {
		return nil
	}
	where := platformName[platform]
	if len(info.Torch) == 0 {
		if !info.Direct {
			return nil
		}
		pinned := TorchSource{Registry: info.PinnedURL}
		switch {
		case info.Pinned == "" && platform == "windows":
			return []Risk{{Platform: platform, Reason: "the project depends on torch without pinning an index, so the next `uv lock` (which `uv sync` and `uv run` do first) takes torch from PyPI, whose Windows wheels are CPU-only"}}
		case info.PinnedURL != "" && notCUDA(pinned.build(platform)):
			return []Risk{{Platform: platform, Reason: fmt.Sprintf("pyproject.toml pins torch to index %q (%s), a %s build, for the next `uv lock`", info.Pinned, info.PinnedURL, pinned.build(platform))}}
		}
		return nil
	}
	cudaMayHold := false
	for _, t := range info.Torch {
		if markerOn(t.Marker, platform) != no && t.build(platform) == buildCUDA {
			cudaMayHold = true
		}
	}
	var risks []Risk
	seen := map[string]bool{}
	for _, t := range info.Torch {
		holds := markerOn(t.Marker, platform)
		b := t.build(platform)
		if holds == no || !notCUDA(b) || holds == maybe && cudaMayHold {
			continue
		}
		reason := fmt.Sprintf("uv.lock takes torch %s from %s for %s, which is a %s build, so the next `uv sync` or `uv run` will replace it", t.Version, from(t.Registry), where, b)
		if !info.Direct {
			reason = "torch is only a dependency of a dependency here, and " + reason
		}
		if (TorchSource{Registry: info.PinnedURL}).build(platform) == buildCUDA {
			reason += fmt.Sprintf("; pyproject.toml already sends torch to index %q but uv.lock has not followed: run `uv lock`", info.Pinned)
		}
		if !seen[reason] {
			seen[reason] = true
			risks = append(risks, Risk{Platform: platform, Reason: reason})
		}
	}
	return risks
}

func notCUDA(build string) bool {
	return build == buildCPU || build == buildROCm || build == buildXPU
}

// from names a registry for a message: PyPI by name, else its URL.
func from(registry string) string {
	if strings.Contains(registry, "pypi.org") {
		return "PyPI"
	}
	return registry
}
