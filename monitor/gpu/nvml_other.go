//go:build !(linux && cgo)

package gpu

// openPlatform reports that NVML is not available here: go-nvml needs cgo
// and Linux. (The Windows nvml.dll binding will live in nvml_windows.go.)
func openPlatform(Options) Backend {
	return nullBackend{reason: "NVML is not available on this platform (built without cgo, or not Linux)"}
}
