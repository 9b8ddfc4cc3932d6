package kb

import "fmt"

// DriverFloor is the least NVIDIA driver for a CUDA version on one
// platform, so advice can name the driver to install.
type DriverFloor struct {
	CUDA string
	// MinorCompat is the floor for CUDA minor-version compatibility: any
	// build of this CUDA major runs, but PTX newer than the driver fails to
	// JIT. Full is the floor for every feature of this CUDA version.
	MinorCompat, Full string
	Source            string
	// Unverified marks floors that are not in the primary sources.
	Unverified bool
	// NoOwnFloor is true on Windows for a CUDA version NVIDIA's table
	// gives no Windows driver of its own (N/A: 13.1 and later, run by the
	// R580 branch): Full is then the minor-version floor.
	NoOwnFloor bool
}

// DriverFloorFor looks up the driver floors of a CUDA version ("12.4") on
// a platform ("linux" or "windows").
func DriverFloorFor(cuda, platform string) (DriverFloor, bool) {
	for _, d := range facts().drivers {
		if c, ok := compareCUDA(d.CUDA, cuda); !ok || c != 0 {
			continue
		}
		switch platform {
		case "linux":
			return DriverFloor{CUDA: d.CUDA, MinorCompat: d.LinuxMinor, Full: d.LinuxFull, Source: d.Source, Unverified: d.Unverified}, true
		case "windows":
			if d.WindowsNA {
				return DriverFloor{CUDA: d.CUDA, MinorCompat: d.WindowsMinor, Full: d.WindowsMinor, Source: d.Source,
					Unverified: true, NoOwnFloor: true}, true
			}
			return DriverFloor{CUDA: d.CUDA, MinorCompat: d.WindowsMinor, Full: d.WindowsFull, Source: d.Source,
				Unverified: d.Unverified || d.WindowsUnverified}, true
		}
		return DriverFloor{}, false
	}
	return DriverFloor{}, false
}

// DriverVerdict says whether a torch build runs on a driver.
type DriverVerdict struct {
	Support Support
	// MinorCompat is true when the build runs only through CUDA
	// minor-version compatibility (the driver is older than the build
	// within one CUDA major): it works, but JIT-compiled PTX may fail.
	MinorCompat bool
	// Unconfirmed is true when the verdict rests on a CUDA version derived
	// from the driver's version (a lower bound) and the driver may support
	// the build in full: with SupportYes and MinorCompat it runs at least
	// through minor-version compatibility; with SupportUnknown whether it
	// runs could not be confirmed. A derived version never makes a
	// SupportNo that the driver's version does not settle.
	Unconfirmed bool
	Reason      string
}

// driverRuns says whether a torch built against buildCUDA runs with a
// driver whose CUDA driver version (NVML SystemGetCudaDriverVersion, as
// "12.4") is driverCUDA, so a CUDA-too-new install is caught before torch
// says "The NVIDIA driver on your system is too old". Builds of CUDA 11
// and newer run on an older driver of the same major through minor-version
// compatibility; older builds do not. The driver's CUDA version is named
// in the reasons as label (Machine.DriverCUDALabel: a derived one says
// so).
func driverRuns(buildCUDA, driverCUDA, label string) DriverVerdict {
	c, ok := compareCUDA(driverCUDA, buildCUDA)
	if !ok {
		return DriverVerdict{Reason: fmt.Sprintf("the CUDA versions %q (torch) and %q (driver) cannot be compared", buildCUDA, driverCUDA)}
	}
	bm, _, _ := cudaParts(buildCUDA)
	dm, _, _ := cudaParts(driverCUDA)
	switch {
	case c >= 0:
		return DriverVerdict{Support: SupportYes,
			Reason: fmt.Sprintf("the driver supports %s, at least the %s torch was built with", label, buildCUDA)}
	case dm == bm && bm >= 11:
		return DriverVerdict{Support: SupportYes, MinorCompat: true,
			Reason: fmt.Sprintf("a driver for %s runs CUDA %d.x builds through minor-version compatibility, but kernels compiled just in time from PTX may fail; a driver for CUDA %s or newer%s gives every feature",
				label, bm, buildCUDA, floorHint(buildCUDA, func(f DriverFloor) string { return f.Full }))}
	case bm < 11:
		// Minor-version compatibility came with CUDA 11: older builds
		// need a driver for their own CUDA version.
		return DriverVerdict{Support: SupportNo,
			Reason: fmt.Sprintf("CUDA %s builds need a driver for CUDA %s or newer%s; this driver supports %s",
				buildCUDA, buildCUDA, floorHint(buildCUDA, func(f DriverFloor) string { return f.Full }), label)}
	default:
		return DriverVerdict{Support: SupportNo,
			Reason: fmt.Sprintf("CUDA %d builds need a driver for CUDA %d.x%s; this driver supports %s",
				bm, bm, floorHint(buildCUDA, func(f DriverFloor) string { return f.MinorCompat }), label)}
	}
}

// floorHint names the Linux and Windows drivers of one floor of a CUDA
// version, or "" when the table does not have them.
func floorHint(cuda string, pick func(DriverFloor) string) string {
	l, okL := DriverFloorFor(cuda, "linux")
	w, okW := DriverFloorFor(cuda, "windows")
	if !okL || !okW {
		return ""
	}
	return fmt.Sprintf(" (driver %s on Linux, %s on Windows)", pick(l), pick(w))
}
