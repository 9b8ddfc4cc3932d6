package kb

import (
	"fmt"
	"slices"
	"strings"

	"github.com/gpucanary/gpucanary/monitor/pyenv/pyspec"
)

// GPUVerdict is whether a build has code for one GPU.
type GPUVerdict struct {
	GPU GPU
	ArchVerdict
}

// BuildCheck is every verdict on one CUDA build of torch on one machine:
// the health rules report from it and the repair planner chooses by it,
// so a proposed build is judged by the very rules that raised the
// finding it is meant to clear.
type BuildCheck struct {
	Torch string // the version judged, as given
	Tag   string // its index tag ("cu124"); "" when its CUDA cannot be read
	// Driver is whether the driver runs the build; SupportUnknown when the
	// driver's CUDA version is not known (Machine.DriverCUDAUnknown), or
	// Unconfirmed when the version it was derived from cannot settle it.
	Driver DriverVerdict
	// GPUs are the verdicts for every GPU whose compute capability is
	// known, in the machine's order; empty when Unchecked is set.
	GPUs []GPUVerdict
	// ReleaseKnown is false for a release the table does not have.
	ReleaseKnown bool
	// Inferred says how a release newer than the table was judged all
	// the same: by the arch list of the newest release the table has with
	// the same CUDA tag on this platform (and the driver floor of its
	// CUDA version, as every build is). "" when the release is known or
	// nothing could be judged (then Unchecked says why).
	Inferred string
	// InferredFrom is the release whose arch list stood in ("2.15").
	InferredFrom string
	// Unchecked says why the GPUs could not be checked against the build
	// (a release or variant the table does not have, a build not from
	// pytorch.org); "" when they were.
	Unchecked string
}

// CheckBuild judges torch torchVersion built for CUDA cuda ("12.4", as
// torch/version.py says) on machine m: the driver against the build's
// CUDA, and every GPU against the official arch list of that release and
// variant. What the tables cannot tell is said in Unchecked, never
// guessed.
func CheckBuild(torchVersion, cuda string, m Machine) BuildCheck {
	c := BuildCheck{Torch: torchVersion, Tag: TagForCUDA(cuda)}
	switch {
	case m.DriverCUDAFrom != "" && m.DriverCUDA != "":
		platform := m.platform
		if platform == "" {
			platform = hostPlatform
		}
		c.Driver = driverVersionRuns(cuda, m.DriverCUDAFrom, m.DriverCUDA, platform, m.DriverCUDALabel())
	case m.DriverCUDA != "":
		c.Driver = driverRuns(cuda, m.DriverCUDA, m.DriverCUDALabel())
	}
	row, v, known := releaseOf(torchVersion)
	c.ReleaseKnown = known
	switch {
	case !known && (c.Tag == "" || !newerThanTable(torchVersion)):
		c.Unchecked = notInTable(torchVersion) + ", so which GPUs it has code for is not known"
		return c
	case c.Tag == "":
		c.Unchecked = fmt.Sprintf("the CUDA version %q of torch %s cannot be read", cuda, torchVersion)
		return c
	}
	if why := unofficial(torchVersion); why != "" {
		c.Unchecked = fmt.Sprintf("torch %s is %s, so the arch list of pytorch.org's %s wheel may not be its own", torchVersion, why, c.Tag)
		return c
	}
	wheel := m.wheelPlatform()
	minor := v.minor
	if !known {
		from, ok := newestWithTag(wheel, c.Tag)
		if !ok {
			c.Unchecked = notInTable(torchVersion) + fmt.Sprintf(", and no release the table has offers %s, so which GPUs it has code for is not known", c.Tag)
			return c
		}
		minor, c.InferredFrom = from, from
		c.Inferred = fmt.Sprintf("%s; it was judged by the arch list of torch %s %s, the newest release in the table with %s, and by the driver floor of CUDA %s (inferred)",
			notInTable(torchVersion), from, c.Tag, c.Tag, cuda)
	}
	if _, _, ok := archFor(wheel, minor, c.Tag); !ok && known && slices.Contains(row.Tags, c.Tag) {
		// A variant the release offers (a refresh learned it from the
		// index) without an arch list: judged by its tag's newest.
		if from, ok := newestWithTag(wheel, c.Tag); ok {
			minor, c.InferredFrom = from, from
			c.Inferred = fmt.Sprintf("the arch list of torch %s %s is not in GPU Canary's table; it was judged by that of torch %s %s, the newest release in the table with %s (inferred)",
				v.minor, c.Tag, from, c.Tag, c.Tag)
		}
	}
	list, note, ok := archFor(wheel, minor, c.Tag)
	if !ok {
		c.Unchecked = fmt.Sprintf("the GPU architectures of torch %s %s are not in GPU Canary's table (pytorch.org has no such wheel: a conda, distribution or source build?)", torchVersion, c.Tag)
		return c
	}
	if c.Inferred != "" {
		note = strings.TrimPrefix(note+"; ", "; ") + "inferred from torch " + c.InferredFrom
	}
	for _, g := range m.known() {
		c.GPUs = append(c.GPUs, GPUVerdict{GPU: g, ArchVerdict: buildRuns(list, note, v.patch, c.Tag, g.CC)})
	}
	return c
}

// newerThanTable is true for a readable torch version after the table's
// last release.
func newerThanTable(torchVersion string) bool {
	v, ok := parseTorch(torchVersion)
	rows := facts().releases
	return ok && compareTorch(v.patch, rows[len(rows)-1].Patches[0]) > 0
}

// newestWithTag is the newest release in the table with an arch list for
// tag on the wheel platform (or on Linux x86_64, which archFor falls
// back to).
func newestWithTag(wheel, tag string) (string, bool) {
	rows := facts().releases
	for i := len(rows) - 1; i >= 0; i-- {
		if _, _, ok := archFor(wheel, rows[i].Minor, tag); ok {
			return rows[i].Minor, true
		}
	}
	return "", false
}

// Judged is true when CheckBuild judges builds of torchVersion: its
// release is in the table, or newer than it (judged by inference).
func Judged(torchVersion string) bool {
	return Known(torchVersion) || newerThanTable(torchVersion)
}

// notInTable says how a release is missing from the table: newer than
// its last release, older than its first, or not a version at all.
func notInTable(torchVersion string) string {
	rows := facts().releases
	v, ok := parseTorch(torchVersion)
	switch {
	case !ok:
		return fmt.Sprintf("torch version %q cannot be read", torchVersion)
	case compareTorch(v.patch, rows[len(rows)-1].Patches[0]) > 0:
		return fmt.Sprintf("torch %s is newer than GPU Canary's release table, which ends at %s", torchVersion, rows[len(rows)-1].Minor)
	case compareTorch(v.patch, rows[0].Patches[0]) < 0:
		return fmt.Sprintf("torch %s is older than GPU Canary's release table, which starts at %s", torchVersion, rows[0].Minor)
	}
	return fmt.Sprintf("torch %s is not in GPU Canary's release table", torchVersion)
}

// unofficial says why a version is not a pytorch.org build ("a pre-release
// or source build"), "" for a release or nightly: its local label, when it
// has one, must be an index tag.
func unofficial(version string) string {
	pv, err := pyspec.VersionOf(strings.TrimSpace(version))
	if err != nil {
		return "not a version GPU Canary can read"
	}
	rest := strings.TrimPrefix(pv.Public, pv.Base)
	if rest != "" && !strings.HasPrefix(rest, ".dev") && !strings.HasPrefix(rest, ".post") {
		return "a pre-release or source build"
	}
	local := pv.Local
	switch {
	case local == "", local == "cpu", local == "xpu", strings.HasPrefix(local, "rocm"):
		return ""
	case TagForCUDA(mustCUDA(local)) == local:
		return ""
	}
	return fmt.Sprintf("a build with the local version %q, not one of pytorch.org's", local)
}

// mustCUDA is CUDAForTag without the ok.
func mustCUDA(tag string) string {
	c, _ := CUDAForTag(tag)
	return c
}

// Unsupported are the GPUs the build has no code for.
func (c BuildCheck) Unsupported() []GPUVerdict {
	var out []GPUVerdict
	for _, g := range c.GPUs {
		if g.Support == SupportNo {
			out = append(out, g)
		}
	}
	return out
}

// PTXOnly are the GPUs the build reaches only through PTX compiled on
// first use.
func (c BuildCheck) PTXOnly() []GPUVerdict {
	var out []GPUVerdict
	for _, g := range c.GPUs {
		if g.Support == SupportYes && g.ViaPTX {
			out = append(out, g)
		}
	}
	return out
}

// Clean is true when nothing about the GPU or the driver is wrong with the
// build: the tables know it, every GPU whose compute capability is known
// has machine code in it, and the driver supports its CUDA version in
// full (a driver whose CUDA version is not known at all is not held
// against it; one whose version could not confirm the build is).
func (c BuildCheck) Clean() bool {
	if c.Unchecked != "" || c.Driver.Support == SupportNo || c.Driver.MinorCompat || c.Driver.Unconfirmed {
		return false
	}
	for _, g := range c.GPUs {
		if g.Support != SupportYes || g.ViaPTX {
			return false
		}
	}
	return true
}

// Problems says in a few words what keeps the build from being clean,
// for the reasons of a choice ("cu124 has no code for sm_120").
func (c BuildCheck) Problems() string {
	var out []string
	if c.Unchecked != "" {
		out = append(out, c.Unchecked)
	}
	switch {
	case c.Driver.Support == SupportNo:
		out = append(out, fmt.Sprintf("%s needs a newer driver (%s)", c.Tag, c.Driver.Reason))
	case c.Driver.MinorCompat && c.Driver.Unconfirmed:
		out = append(out, fmt.Sprintf("%s may run on this driver only through minor-version compatibility (%s)", c.Tag, c.Driver.Reason))
	case c.Driver.MinorCompat:
		out = append(out, fmt.Sprintf("%s runs on this driver only through minor-version compatibility", c.Tag))
	case c.Driver.Unconfirmed:
		out = append(out, fmt.Sprintf("whether this driver runs %s could not be confirmed (%s)", c.Tag, c.Driver.Reason))
	}
	if bad := c.Unsupported(); len(bad) > 0 {
		out = append(out, fmt.Sprintf("%s has no code for %s", c.Tag, gpuNames(bad)))
	}
	if ptx := c.PTXOnly(); len(ptx) > 0 {
		out = append(out, fmt.Sprintf("%s reaches %s only through PTX compiled on first use", c.Tag, gpuNames(ptx)))
	}
	return strings.Join(out, "; ")
}

// gpuNames lists GPUs by name and architecture: "the NVIDIA GeForce RTX
// 5090 (sm_120)".
func gpuNames(vs []GPUVerdict) string {
	labels := make([]string, len(vs))
	for i, v := range vs {
		labels[i] = v.GPU.Label()
	}
	return joinAnd(labels)
}
