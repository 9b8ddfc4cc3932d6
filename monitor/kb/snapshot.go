package kb

import "slices"

// Snapshot is what GPU Canary knows, as `gpucanary kb --json` prints it:
// its lists have rows in the very schema an overlay file's lists take
// under the same keys, so a row can be copied from one into the other.
type Snapshot struct {
	// AsOf is the day the embedded facts were last checked.
	AsOf string `json:"as_of"`
	// Newest is the newest torch release known, with its variants and
	// their arch lists on each platform.
	Newest NewestRelease `json:"newest"`
	// Overlays are the overlay files read, in order.
	Overlays []OverlayFile `json:"overlays"`
	Releases []releaseRow  `json:"releases"`
	Arches   []archRow     `json:"arches"`
	Drivers  []driverRow   `json:"drivers"`
	GPUs     []gpuRow      `json:"gpus"`
}

// NewestRelease is the newest torch release the tables have.
type NewestRelease struct {
	Minor string `json:"minor"`
	Patch string `json:"patch"`
	// PyPILinuxCUDA is the CUDA of the plain PyPI wheel on Linux.
	PyPILinuxCUDA string    `json:"pypi_linux_cuda"`
	Variants      []Variant `json:"variants"`
}

// Variant is one CUDA variant of a release: its tag, CUDA version and
// the arch list on each platform the table has one for.
type Variant struct {
	Tag  string `json:"tag"`
	CUDA string `json:"cuda"`
	// Arches are keyed by platform (linux-x86_64, linux-aarch64,
	// windows-x86_64).
	Arches map[string]ArchList `json:"arches,omitempty"`
}

// Snap is the snapshot of the tables now, overlays included.
func Snap() Snapshot {
	t := facts()
	last := t.releases[len(t.releases)-1]
	n := NewestRelease{Minor: last.Minor, Patch: last.Patches[len(last.Patches)-1], PyPILinuxCUDA: last.PyPILinuxCUDA}
	for _, tag := range last.Tags {
		cuda, _ := CUDAForTag(tag)
		v := Variant{Tag: tag, CUDA: cuda, Arches: map[string]ArchList{}}
		for _, p := range []string{PlatformLinuxX86, PlatformLinuxARM, PlatformWindows} {
			if a, ok := t.archOf[archKey(p, last.Minor, tag)]; ok {
				v.Arches[p] = ArchList{SASS: slices.Clone(a.SASS), PTX: slices.Clone(a.PTX), Source: a.Source, Unverified: a.Unverified}
			}
		}
		n.Variants = append(n.Variants, v)
	}
	return Snapshot{AsOf: t.asOf, Newest: n, Overlays: append([]OverlayFile{}, t.overlays...),
		Releases: slices.Clone(t.releases), Arches: slices.Clone(t.arches), Drivers: slices.Clone(t.drivers), GPUs: slices.Clone(t.gpus)}
}
