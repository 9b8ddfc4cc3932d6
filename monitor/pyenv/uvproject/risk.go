package uvproject

import (
	"fmt"
	"strings"
)

// Risk is one way the next `uv sync` or `uv run` would put a torch that
// is worse here in place of the CUDA one installed: a non-CUDA build, or a
// CUDA build the caller's Judge finds wrong for this machine. Reason reads
// after "torch X is a CUDA build, but ": lowercase, no final period.
type Risk struct {
	Platform string `json:"platform"`
	Reason   string `json:"reason"`
	// CannotRun is true when the lock installs a CUDA build that cannot
	// run here at all (the Judge said so): the next sync breaks the GPU.
	CannotRun bool `json:"cannot_run,omitempty"`
	// PinnedThere is true when pyproject.toml itself sends torch to the
	// index the entry comes from: the pin is what must change, and a new
	// pin beside it would conflict with it.
	PinnedThere bool `json:"pinned_there,omitempty"`
	// LockStale is true when pyproject.toml already sends torch to another
	// CUDA index and uv.lock has not followed: `uv lock` is what is left.
	LockStale bool `json:"lock_stale,omitempty"`
}

// LockedCUDA is a CUDA build of torch that uv.lock installs on a
// platform, as a Judge sees it.
type LockedCUDA struct {
	// Version is as uv.lock has it: "2.7.1", "2.7.1+cu126".
	Version string
	// Tag is the CUDA index tag the entry names ("cu126": its local
	// version, its wheel's file name or its index's path); "" for PyPI's
	// plain wheel (or a mirror's), whose CUDA version is the release's.
	Tag      string
	Platform string
}

// Judge tells whether a CUDA build the lock installs is worse here than
// the torch installed: what it is, read after "which is " ("a CUDA 12.6
// build (cu126) that cannot run here: ..."), and whether it cannot run at
// all; "" when it is no worse or that cannot be told. uvproject knows
// neither the GPU nor torch's releases, so the rules judge (health, by
// the same verdict as on an installed torch).
type Judge func(LockedCUDA) (what string, cannotRun bool)

// platformName is how messages name a platform.
var platformName = map[string]string{"linux": "Linux", "windows": "Windows"}

// WillReplaceTorch lists how the next `uv sync`/`uv run` would install on
// platform ("linux" or "windows") a torch worse than the CUDA one
// installed (installedCUDA); nothing to lose means no risk. It reads
// uv.lock's entries for the platform: a +cpu (or ROCm, XPU) pin, PyPI on
// Windows (CPU-only wheels), or a CUDA build judge finds wrong here (PyPI's
// Linux wheel of a release built for a CUDA version without kernels for
// this GPU, or newer than the driver; nil judges none). An entry that
// holds only under an extra or a group is a risk only when no good CUDA
// entry could hold instead. With no lock (or none that has torch), a
// direct torch dependency with no index pinned is a risk on Windows,
// where `uv lock` will pick PyPI.
func WillReplaceTorch(info LockInfo, platform string, installedCUDA bool, judge Judge) []Risk {
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
			return []Risk{{Platform: platform, Reason: fmt.Sprintf("pyproject.toml pins torch to index %q (%s), a %s build, for the next `uv lock`", info.Pinned, info.PinnedURL, pinned.build(platform)),
				PinnedThere: true}}
		}
		return nil
	}
	type verdict struct {
		holds     tri
		build     string
		tag       string
		what      string // "" when the entry is no worse than what is installed
		cannotRun bool
	}
	verdicts := make([]verdict, len(info.Torch))
	goodMayHold := false
	for i, t := range info.Torch {
		v := verdict{holds: markerOn(t.Marker, platform)}
		v.build, v.tag = t.variant(platform)
		switch {
		case v.holds == no:
		case notCUDA(v.build):
			v.what = fmt.Sprintf("a %s build", v.build)
		case v.build == buildCUDA && judge != nil:
			v.what, v.cannotRun = judge(LockedCUDA{Version: t.Version, Tag: v.tag, Platform: platform})
		}
		if v.holds != no && v.build == buildCUDA && v.what == "" {
			goodMayHold = true
		}
		verdicts[i] = v
	}
	pinnedBuild, pinnedTag := TorchSource{Registry: info.PinnedURL}.variant(platform)
	var risks []Risk
	seen := map[string]bool{}
	for i, t := range info.Torch {
		v := verdicts[i]
		if v.holds == no || v.what == "" || v.holds == maybe && goodMayHold {
			continue
		}
		reason := fmt.Sprintf("uv.lock takes torch %s from %s for %s, which is %s, so the next `uv sync` or `uv run` will replace it", t.Version, from(t.Registry), where, v.what)
		if !info.Direct {
			reason = "torch is only a dependency of a dependency here, and " + reason
		}
		r := Risk{Platform: platform, CannotRun: v.cannotRun}
		switch {
		case pinnedBuild == buildCUDA && pinnedTag != "" && pinnedTag == v.tag:
			r.PinnedThere = true
			reason += fmt.Sprintf("; pyproject.toml itself sends torch to index %q (%s): that pin must change", info.Pinned, info.PinnedURL)
		case pinnedBuild == buildCUDA:
			r.LockStale = true
			reason += fmt.Sprintf("; pyproject.toml already sends torch to index %q but uv.lock has not followed: run `uv lock`", info.Pinned)
		}
		if !seen[reason] {
			seen[reason] = true
			r.Reason = reason
			risks = append(risks, r)
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
