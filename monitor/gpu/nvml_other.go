//go:build !(linux && cgo) && !(windows && (amd64 || arm64))

// This file stands in for NVML where neither backend can be built: go-nvml
// needs Linux and cgo, the nvml.dll backend 64-bit Windows.

package gpu

// openPlatform reports that NVML is not available here.
func openPlatform(Options) Backend {
	return nullBackend{reason: "NVML is not available on this platform (it needs Linux with cgo, or 64-bit Windows)"}
}
