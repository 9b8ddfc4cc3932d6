//go:build lean

package main

import (
	"fmt"
	"os"
)

// startProfiles says that this build writes no profiles (profile.go's
// variables): runtime/pprof is left out of it; gpucanary-full writes them.
func startProfiles() (stop func()) {
	for _, v := range []string{"GPUCANARY_CPUPROFILE", "GPUCANARY_MEMPROFILE"} {
		if os.Getenv(v) != "" {
			fmt.Fprintf(os.Stderr, "gpucanary: %s: this build writes no profiles; %s does\n", v, fullName)
		}
	}
	return func() {}
}
