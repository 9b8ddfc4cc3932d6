// This file chooses the backend.

package gpu

// Open returns the simulated backend when opts.SimFile is set, else the
// platform's NVML backend, which is the null backend when no driver
// answers. It never returns nil and never panics, so a caller can always
// show a GPU state.
func Open(opts Options) Backend {
	if opts.SimFile != "" {
		return newSim(opts.SimFile)
	}
	return openPlatform(opts)
}
