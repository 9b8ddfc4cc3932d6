package kb

import (
	"fmt"
	"runtime"
	"strings"

	pep440 "github.com/aquasecurity/go-pep440-version"
)

// LlamaIndexBase is where llama-cpp-python's prebuilt CUDA wheels live:
// BASE/cuNNN is a PEP 503 index of them (its README, "Supported
// Backends", CUDA, "Pre-built Wheel (New)").
const LlamaIndexBase = "https://abetlen.github.io/llama-cpp-python/whl"

// llamaWheelRow is one of llama-cpp-python's CUDA wheel indexes: its
// CUDA, the GPUs its wheels are built for, and, per wheel platform, the
// first release published there.
type llamaWheelRow struct {
	Tag, CUDA string
	// MinCC and MaxCC bound the compute capabilities the wheels are
	// built for ("" is no bound).
	MinCC, MaxCC string
	// Since is the first release with a wheel in this index, per wheel
	// platform (PlatformLinuxX86, PlatformWindows); a platform missing
	// has none.
	Since  map[string]string
	Source string
}

// llamaSource is where every row below was read.
const llamaSource = "abetlen/llama-cpp-python@3691546 (2026-08-17, 0.3.35): README.md \"Pre-built Wheel (New)\" under CUDA (tags, CUDA versions, compute capabilities); .github/workflows/build-wheels-cuda.yaml (ubuntu-22.04 and windows-2022 builders, Windows excluding 12.1-12.3; Windows CUDA wheels off 2025-07-06 to 2026-05-02); the first release of each platform from the repository's vX.Y.Z-cuNNN release tags"

// llamaWheels, newest CUDA first. A release in between may lack a wheel
// (a tag that failed to build): the installer then finds none, before
// it removes anything, and says so.
var llamaWheels = []llamaWheelRow{
	{Tag: "cu132", CUDA: "13.2", MinCC: "7.5", Since: map[string]string{PlatformLinuxX86: "0.3.25", PlatformWindows: "0.3.25"}, Source: llamaSource},
	{Tag: "cu130", CUDA: "13.0", MinCC: "7.5", Since: map[string]string{PlatformLinuxX86: "0.3.25", PlatformWindows: "0.3.25"}, Source: llamaSource},
	{Tag: "cu125", CUDA: "12.5", MinCC: "6.0", Since: map[string]string{PlatformLinuxX86: "0.3.22", PlatformWindows: "0.3.22"}, Source: llamaSource},
	{Tag: "cu124", CUDA: "12.4", MinCC: "6.0", Since: map[string]string{PlatformLinuxX86: "0.2.66", PlatformWindows: "0.3.22"}, Source: llamaSource},
	{Tag: "cu123", CUDA: "12.3", MinCC: "6.0", Since: map[string]string{PlatformLinuxX86: "0.2.59"}, Source: llamaSource},
	{Tag: "cu122", CUDA: "12.2", MinCC: "6.0", Since: map[string]string{PlatformLinuxX86: "0.2.59"}, Source: llamaSource},
	{Tag: "cu121", CUDA: "12.1", MinCC: "6.0", Since: map[string]string{PlatformLinuxX86: "0.2.59"}, Source: llamaSource},
	{Tag: "cu118", CUDA: "11.8", MinCC: "6.0", MaxCC: "8.9", Since: map[string]string{PlatformLinuxX86: "0.3.25", PlatformWindows: "0.3.25"}, Source: llamaSource},
}

// LlamaWheel is the CUDA wheel index chosen for a llama-cpp-python, or
// why none fits.
type LlamaWheel struct {
	Tag, CUDA string
	// Reason says why this index, or why none fits.
	Reason string
}

// LlamaHostPlatform is the wheel platform of this host as
// llama-cpp-python's CUDA indexes are split: Linux x86_64 and Windows
// x86_64 have wheels; macOS, and Linux on another CPU, have none.
func LlamaHostPlatform() string {
	switch runtime.GOOS {
	case "linux", "windows":
		if runtime.GOARCH == "amd64" {
			return hostWheel()
		}
	}
	return runtime.GOOS + "-" + runtime.GOARCH
}

// ChooseLlamaWheel chooses the index of llama-cpp-python's CUDA wheels
// for version on m, on the wheel platform ("" is this host's): the
// newest whose CUDA the driver supports in full (DriverCUDA), built for
// every GPU here whose compute capability is known, with a wheel of a
// release this old on this platform. ok is false when none fits, and
// Reason says why: a build from source is the way then.
func ChooseLlamaWheel(version string, m Machine, platform string) (LlamaWheel, bool) {
	if platform == "" {
		platform = LlamaHostPlatform()
	}
	v, err := pep440.Parse(version)
	if err != nil {
		return LlamaWheel{Reason: fmt.Sprintf("the installed llama-cpp-python version %q cannot be read", version)}, false
	}
	if m.DriverCUDA == "" {
		why := "the driver's CUDA version is not known"
		if m.DriverCUDAUnknown != "" {
			why += " (" + m.DriverCUDAUnknown + ")"
		}
		return LlamaWheel{Reason: why + ", so no CUDA wheel of llama-cpp-python can be chosen"}, false
	}
	var onPlatform, oldEnough, driverOK []string
	for _, row := range llamaWheels {
		since, ok := row.Since[platform]
		if !ok {
			continue
		}
		onPlatform = append(onPlatform, row.Tag)
		if s, err := pep440.Parse(since); err != nil || v.LessThan(s) {
			continue
		}
		oldEnough = append(oldEnough, row.Tag)
		if c, ok := compareCUDA(row.CUDA, m.DriverCUDA); !ok || c > 0 {
			continue
		}
		driverOK = append(driverOK, row.Tag)
		if !row.fits(m) {
			continue
		}
		return LlamaWheel{Tag: row.Tag, CUDA: row.CUDA, Reason: fmt.Sprintf(
			"%s is the newest of llama-cpp-python's CUDA wheel indexes whose CUDA (%s) the driver supports (%s) and whose wheels are built for every GPU here",
			row.Tag, row.CUDA, m.DriverCUDALabel())}, true
	}
	switch {
	case len(onPlatform) == 0:
		return LlamaWheel{Reason: fmt.Sprintf("llama-cpp-python publishes no CUDA wheels for %s (only for %s and %s)", platform, PlatformLinuxX86, PlatformWindows)}, false
	case len(oldEnough) == 0:
		return LlamaWheel{Reason: fmt.Sprintf("llama-cpp-python %s is older than its first CUDA wheel for %s", version, platform)}, false
	case len(driverOK) == 0:
		oldest := llamaWheels[len(llamaWheels)-1]
		for _, row := range llamaWheels {
			if row.Tag == oldEnough[len(oldEnough)-1] {
				oldest = row
			}
		}
		return LlamaWheel{Reason: fmt.Sprintf("the driver supports %s, older than the oldest CUDA wheel of llama-cpp-python %s for %s (%s, CUDA %s)", m.DriverCUDALabel(), version, platform, oldest.Tag, oldest.CUDA)}, false
	}
	return LlamaWheel{Reason: fmt.Sprintf("no CUDA wheel of llama-cpp-python that this driver runs (%s) is built for every GPU here (%s)", strings.Join(driverOK, ", "), m.Describe())}, false
}

// fits is true when no GPU here has a known compute capability outside
// the row's range.
func (row llamaWheelRow) fits(m Machine) bool {
	for _, g := range m.GPUs {
		if c, ok := compareCUDA(g.CC, row.MinCC); row.MinCC != "" && ok && c < 0 {
			return false
		}
		if c, ok := compareCUDA(g.CC, row.MaxCC); row.MaxCC != "" && ok && c > 0 {
			return false
		}
	}
	return true
}
