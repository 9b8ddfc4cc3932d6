//go:build !(linux && cgo)

// This file stands in for NVML where go-nvml cannot be built: it needs
// Linux and cgo. (The Windows nvml.dll binding is to live in its own file.)

package gpu

// openPlatform reports that NVML is not available here.
func openPlatform(Options) Backend {
	return nullBackend{reason: "NVML is not available on this platform (it needs Linux and cgo)"}
}
