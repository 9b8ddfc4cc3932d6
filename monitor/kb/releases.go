package kb

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Release is one torch minor release as the table knows it, for reports
// that show where an answer came from.
type Release struct {
	Minor   string   // "2.5"
	Patches []string // "2.5.0", "2.5.1"
	// Tags are the CUDA index tags of download.pytorch.org, oldest CUDA first.
	Tags []string
	// PyPILinuxCUDA is the CUDA of the plain Linux x86_64 PyPI wheel;
	// PyPIUnverified marks it as inferred rather than read from a wheel.
	PyPILinuxCUDA  string
	PyPIUnverified bool
	Source         string
}

// releaseOf finds the table row of a torch version's minor release.
func releaseOf(version string) (*releaseRow, torchVersion, bool) {
	v, ok := parseTorch(version)
	if !ok {
		return nil, v, false
	}
	r, ok := facts().byMinor[v.minor]
	return r, v, ok
}

// Known reports whether a torch version's release is in the table; for a
// newer release the rules fall back to advice instead of verdicts.
func Known(torchVersion string) bool {
	_, _, ok := releaseOf(torchVersion)
	return ok
}

// ReleaseFor returns the table row of a torch version's minor release.
func ReleaseFor(torchVersion string) (Release, bool) {
	r, _, ok := releaseOf(torchVersion)
	if !ok {
		return Release{}, false
	}
	return r.public(), true
}

// Releases lists every release in the table, oldest first.
func Releases() []Release {
	rows := facts().releases
	out := make([]Release, len(rows))
	for i := range rows {
		out[i] = rows[i].public()
	}
	return out
}

func (r *releaseRow) public() Release {
	return Release{Minor: r.Minor, Patches: slices.Clone(r.Patches), Tags: slices.Clone(r.Tags),
		PyPILinuxCUDA: r.PyPILinuxCUDA, PyPIUnverified: r.PyPIUnverified, Source: r.Source}
}

// Companions returns the torchvision and torchaudio versions built against
// a torch version, so a repair reinstalls a matching family: the table's
// pair where the release deviates from the rules, else the rules
// (torchvision 0.(minor+15).patch; torchaudio = torch from 2.1 to 2.11,
// and "" after: torchaudio's last release is 2.11).
func Companions(torchVersion string) (vision, audio string, ok bool) {
	r, v, ok := releaseOf(torchVersion)
	if !ok {
		return "", "", false
	}
	return r.companions(v.patch)
}

// companions is Companions for a patch release ("2.5.1") of this row.
func (r *releaseRow) companions(patch string) (vision, audio string, ok bool) {
	if p, ok := r.Companions[patch]; ok {
		return p.Vision, p.Audio, true
	}
	parts := strings.Split(patch, ".")
	major, _ := strconv.Atoi(parts[0])
	minor, _ := strconv.Atoi(parts[1])
	if major != 2 || minor < 1 {
		return "", "", false // before 2.1 only the table's pairs are known
	}
	if minor >= 12 {
		// torchaudio went into maintenance after 2.11, its last release
		// (pytorch/audio#4212: it supports torch >= 2.11; atalman in
		// pytorch/pytorch.github.io#2074: no new release): no torchaudio
		// belongs to a newer torch, so none is pinned ("").
		return fmt.Sprintf("0.%d.%s", minor+15, parts[2]), "", true
	}
	return fmt.Sprintf("0.%d.%s", minor+15, parts[2]), patch, true
}

// DefaultCUDA is the CUDA version of the plain PyPI wheel (no local tag)
// of a torch version on a platform, which is what a resolver that ignores
// the PyTorch index installs. Linux comes from the table; Windows and macOS
// wheels are CPU-only ("" with ok=true). ok is false for a release the
// table does not know or an unknown platform.
func DefaultCUDA(torchVersion, platform string) (cuda string, ok bool) {
	r, _, ok := releaseOf(torchVersion)
	if !ok {
		return "", false
	}
	switch platform {
	case "linux":
		return r.PyPILinuxCUDA, true
	case "windows", "darwin":
		return "", true
	default:
		return "", false
	}
}
