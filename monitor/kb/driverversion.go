package kb

import (
	"fmt"
	"strconv"
	"strings"
)

// parseDriver splits an NVIDIA driver version ("535.104.05", "580") into
// its numbers; ok is false for anything else ("", "535.x", "r535").
func parseDriver(v string) ([]int, bool) {
	parts := strings.Split(strings.TrimSpace(v), ".")
	nums := make([]int, len(parts))
	for i, p := range parts {
		if p == "" || strings.Trim(p, "0123456789") != "" || len(p) > 9 {
			return nil, false
		}
		nums[i], _ = strconv.Atoi(p)
	}
	return nums, true
}

// compareDriver orders two driver versions number by number, a missing
// number counting as 0 ("580" < "580.65.06"); ok is false when either
// cannot be read.
func compareDriver(a, b string) (int, bool) {
	x, ok1 := parseDriver(a)
	y, ok2 := parseDriver(b)
	if !ok1 || !ok2 {
		return 0, false
	}
	for i := range max(len(x), len(y)) {
		var p, q int
		if i < len(x) {
			p = x[i]
		}
		if i < len(y) {
			q = y[i]
		}
		if p != q {
			return p - q, true
		}
	}
	return 0, true
}

// CUDAForDriver is the newest CUDA version whose full-feature driver floor
// on platform ("linux", "windows") the driver version meets, from the
// floors table: "535.104.05" on Linux is "12.2". It is what a driver that
// did not say its own CUDA version (a scenario without cuda_driver, an
// NVML whose SystemGetCudaDriverVersion failed) supports at least: a lower
// bound, since the driver may support a CUDA version the table has no row
// for (12.3 on a 545 driver reads as 12.2). The error says why there is
// none: a version that cannot be read, or one older than every row.
func CUDAForDriver(driver, platform string) (string, error) {
	if _, ok := parseDriver(driver); !ok {
		return "", fmt.Errorf("the driver version %q cannot be read", driver)
	}
	best := ""
	for _, d := range facts().drivers {
		f, ok := DriverFloorFor(d.CUDA, platform)
		if !ok {
			return "", fmt.Errorf("GPU Canary has no driver floors for the platform %q", platform)
		}
		if f.NoOwnFloor {
			continue // a driver's version cannot tell this CUDA version from its neighbours
		}
		if c, _ := compareDriver(driver, f.Full); c < 0 {
			continue
		}
		if newer, _ := compareCUDA(d.CUDA, best); best == "" || newer > 0 {
			best = d.CUDA
		}
	}
	if best == "" {
		oldest := facts().drivers[0]
		return "", fmt.Errorf("the driver %s is older than every CUDA version in GPU Canary's table (CUDA %s needs %s)", driver, oldest.CUDA, floorOn(oldest, platform))
	}
	return best, nil
}

// floorOn is a row's full-feature floor on platform.
func floorOn(d driverRow, platform string) string {
	f, _ := DriverFloorFor(d.CUDA, platform)
	return f.Full
}

// driverVersionRuns is driverRuns for a driver that did not say its CUDA
// version, judged by its own version on platform. lower is the CUDA
// version derived from it (CUDAForDriver) and label names it. The
// driver's real CUDA version is at least lower and older than the next
// row's, whose floor the driver does not meet; in between, any version
// may be the real one (a row the table lacks). So a build newer than lower
// is judged by what the driver version settles: below the build's major's
// minor-version floor it cannot run; at or above it, it runs, in full or
// through minor-version compatibility; with the next row's CUDA no newer
// than the build's it is not in full. What the version cannot settle is
// Unconfirmed, never "will fail": a lower bound is not the driver's word.
func driverVersionRuns(buildCUDA, driver, lower, platform, label string) DriverVerdict {
	if c, ok := compareCUDA(lower, buildCUDA); !ok || c >= 0 {
		return driverRuns(buildCUDA, lower, label)
	}
	bm, _, _ := cudaParts(buildCUDA)
	next, hasNext := nextFloorAbove(driver, platform)
	notFull := false
	if hasNext {
		c, _ := compareCUDA(next.CUDA, buildCUDA)
		notFull = c <= 0
	}
	minor, minorKnown := minorFloor(buildCUDA, platform)
	minorMet := false
	if minorKnown {
		c, _ := compareDriver(driver, minor)
		minorMet = c >= 0
	}
	full := func(f DriverFloor) string { return f.Full }
	fullFloor := floorHint(buildCUDA, full)
	if fullFloor == "" && hasNext {
		fullFloor = fmt.Sprintf(" (CUDA %s's floor%s is above driver %s)", next.CUDA, floorHint(next.CUDA, full), driver)
	}
	switch {
	case bm >= 11 && minorKnown && !minorMet:
		return DriverVerdict{Support: SupportNo,
			Reason: fmt.Sprintf("CUDA %d builds need a driver for CUDA %d.x%s; this driver supports %s, and its version is older than %s, their minor-version compatibility floor here",
				bm, bm, floorHint(buildCUDA, func(f DriverFloor) string { return f.MinorCompat }), label, minor)}
	case bm >= 11 && minorKnown && notFull:
		return DriverVerdict{Support: SupportYes, MinorCompat: true,
			Reason: fmt.Sprintf("a driver for %s runs CUDA %d.x builds through minor-version compatibility (it meets their floor, %s), but kernels compiled just in time from PTX may fail: it is older than CUDA %s's floor (%s), and a driver for CUDA %s or newer%s gives every feature",
				label, bm, minor, next.CUDA, next.Full, buildCUDA, fullFloor)}
	case bm >= 11 && minorKnown:
		return DriverVerdict{Support: SupportYes, MinorCompat: true, Unconfirmed: true,
			Reason: fmt.Sprintf("a driver for %s runs CUDA %d.x builds, at least through minor-version compatibility (it meets their floor, %s); whether it supports CUDA %s in full could not be confirmed, since it did not say its CUDA version; if it does not, kernels compiled just in time from PTX may fail (a driver for CUDA %s or newer%s gives every feature)",
				label, bm, minor, buildCUDA, buildCUDA, fullFloor)}
	case notFull:
		return DriverVerdict{Support: SupportNo,
			Reason: fmt.Sprintf("CUDA %s builds need a driver for CUDA %s or newer%s; this driver supports %s, and its version is older than CUDA %s's floor (%s)",
				buildCUDA, buildCUDA, floorHint(buildCUDA, full), label, next.CUDA, next.Full)}
	}
	return DriverVerdict{Support: SupportUnknown, Unconfirmed: true,
		Reason: fmt.Sprintf("the driver did not say its CUDA version, and its version shows only %s, so whether it runs CUDA %s builds could not be confirmed",
			label, buildCUDA)}
}

// nextFloorAbove is the oldest CUDA version whose full-feature floor on
// platform the driver does not meet: the driver's real CUDA version is
// older than it. ok is false when the driver meets every row's floor.
func nextFloorAbove(driver, platform string) (DriverFloor, bool) {
	for _, d := range facts().drivers {
		f, ok := DriverFloorFor(d.CUDA, platform)
		if !ok {
			return DriverFloor{}, false
		}
		if f.NoOwnFloor {
			continue
		}
		if c, ok := compareDriver(driver, f.Full); ok && c < 0 {
			return f, true
		}
	}
	return DriverFloor{}, false
}

// minorFloor is the least driver on platform that runs a build of CUDA
// cuda through minor-version compatibility: the floor of the newest row of
// its major not newer than it, else of the oldest row of its major (a 12.0
// build where the table started at 12.1). ok is false when no row has its
// major.
func minorFloor(cuda, platform string) (string, bool) {
	bm, _, ok := cudaParts(cuda)
	if !ok {
		return "", false
	}
	best := ""
	for _, d := range facts().drivers {
		if m, _, _ := cudaParts(d.CUDA); m != bm {
			continue
		}
		f, ok := DriverFloorFor(d.CUDA, platform)
		if !ok {
			return "", false
		}
		if c, _ := compareCUDA(d.CUDA, cuda); c <= 0 || best == "" {
			best = f.MinorCompat
		}
	}
	return best, best != ""
}
