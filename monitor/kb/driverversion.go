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
